/*
 * One hook per public call, run after the call (src/api, src/present):
 * each fills a kcap_call from the call's arguments and what it returned,
 * and hands it to the writer. A call that failed is recorded as FAILED
 * (its op and code; its arguments may be invalid, and a replay skips it).
 * Sizes a record needs that the arguments do not state (the rows of an
 * update, a map's layout) come from the resource, found by its handle.
 */
#include "../api/api.h"
#include "capture.h"

#include <stdlib.h>
#include <string.h>

/* Starts a record of `op` for a call that returned `r`, with the writer
 * locked. NULL when there is nothing more to write: no capture runs, or
 * the call failed (its FAILED record is written here). */
static struct kcap_writer *started(struct kcap_writer *w, kcap_op op, kiln_result r, kcap_call *c)
{
    memset(c, 0, sizeof *c);
    if (r != KILN_OK) {
        c->op = KCAP_OP_FAILED;
        c->u.failed.op = op;
        c->u.failed.result = r;
        kcap_emit(w, c);
        kcap_unlock(w);
        return NULL;
    }
    c->op = op;
    return w;
}

static struct kcap_writer *start(kiln_device *dev, kcap_op op, kiln_result r, kcap_call *c)
{
    struct kcap_writer *w = kcap_lock(dev);
    return w ? started(w, op, r, c) : NULL;
}

static struct kcap_writer *start_ctx(kiln_context *ctx, kcap_op op, kiln_result r, kcap_call *c)
{
    struct kcap_writer *w = start(ctx->dev, op, r, c);
    if (w)
        c->ctx = kcap_context_id(w, ctx);
    return w;
}

/* For calls made with the writer already locked (signals, unmap). */
static struct kcap_writer *start_locked(struct kcap_writer *w, kiln_context *ctx, kcap_op op,
                                        kiln_result r, kcap_call *c)
{
    uint32_t id = ctx ? kcap_context_id(w, ctx) : 0;
    if (!started(w, op, r, c))
        return NULL;
    c->ctx = id;
    return w;
}

struct kcap_writer *kcap_lock_context(kiln_context *ctx, const char *api)
{
    /* A failure here (out of memory) is logged, and the call logs its own. */
    ka_flush_scene(ctx, api);
    return kcap_lock(ctx->dev);
}

static void done(struct kcap_writer *w, const kcap_call *c)
{
    kcap_emit(w, c);
    kcap_unlock(w);
}

/* The resource behind a live handle (referenced: kres_unref), or NULL. */
static kres_resource *resource(kiln_device *dev, uint32_t id)
{
    kiln_log_id lid;
    kres_object *o =
        kres_handles_get(&dev->handles, id, KRES_TYPE_BUFFER, KRES_TYPE_TEXTURE2D, &lid);
    return o ? kres_as_resource(o) : NULL;
}

static uint32_t bytes_per_texel(const kres_resource *res)
{
    return res->base.type == KRES_TYPE_BUFFER ? 1u : kres_format(res->format)->size;
}

/* ---- device calls ---- */

void kcap_frame(kiln_device *dev)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_FRAME, KILN_OK, &c);
    if (w)
        done(w, &c);
}

void kcap_device_get_stats(kiln_device *dev, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_DEVICE_GET_STATS, r, &c);
    if (w)
        done(w, &c);
}

void kcap_create_buffer(kiln_device *dev, const kiln_buffer_desc *d,
                        const kiln_subresource_data *init, kiln_buffer out, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_BUFFER, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.buffer.desc = *d;
    c.u.buffer.has_init = init != NULL;
    if (init)
        c.u.buffer.init = (kcap_bytes){init->data, d->size};
    if (d->usage == KILN_USAGE_DYNAMIC) {
        kcap_rows rows = {d->size, 1, init ? init->data : NULL, d->size};
        kcap_shadow_add(w, out.id, &rows);
    }
    done(w, &c);
}

/* Any texture kind: `d` holds what CREATE_TEXTURE* records (1D: height
 * 1; 3D: array size 1 and `depth`). */
static void create_texture(kiln_device *dev, kcap_op op, const kiln_texture2d_desc *d, uint32_t dim,
                           uint32_t depth, const kiln_subresource_data *init, kiln_texture out,
                           kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w =
        start(dev, op == KCAP_OP_CREATE_TEXTURE2D && d && d->sample_count > 1 ? KCAP_OP_CREATE_TEXTURE2D_MS : op,
              r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.texture.desc = *d;
    c.u.texture.dim = dim;
    c.u.texture.depth = depth;
    c.u.texture.has_init = init != NULL;
    c.u.texture.src = init;
    if (d->usage == KILN_USAGE_DYNAMIC && depth <= 1) { /* one mip, one slice */
        uint32_t row = kcap_row_bytes(d->format, d->width);
        kcap_rows rows = {row, kcap_row_count(d->format, d->height), init ? init->data : NULL,
                          init && init->row_pitch ? init->row_pitch : row};
        kcap_shadow_add(w, out.id, &rows);
    } else if (d->usage == KILN_USAGE_DYNAMIC) {
        /* a DYNAMIC 3D texture: its depth slices' rows follow each other */
        uint32_t row = d->width * kiln_format_size(d->format);
        size_t pitch = init && init->row_pitch ? init->row_pitch : row;
        kcap_rows rows = {row, d->height * depth, init ? init->data : NULL, pitch};
        kcap_shadow_add(w, out.id, &rows);
    }
    done(w, &c);
}

void kcap_create_texture2d(kiln_device *dev, const kiln_texture2d_desc *d,
                           const kiln_subresource_data *init, kiln_texture out, kiln_result r)
{
    create_texture(dev, KCAP_OP_CREATE_TEXTURE2D, d, 0, 1, init, out, r);
}

void kcap_create_texture_cube(kiln_device *dev, const kiln_texture_cube_desc *d,
                              const kiln_subresource_data *init, kiln_texture out, kiln_result r)
{
    kiln_texture2d_desc d2 = {d->size,   d->size,  d->mip_levels, 6,
                              d->format, d->usage, d->bind_flags, d->cpu_access, 0};
    create_texture(dev, KCAP_OP_CREATE_TEXTURE_CUBE, &d2, 0, 1, init, out, r);
}

void kcap_create_texture1d(kiln_device *dev, const kiln_texture1d_desc *d,
                           const kiln_subresource_data *init, kiln_texture out, kiln_result r)
{
    kiln_texture2d_desc d2 = {d->width,  1,        d->mip_levels, d->array_size,
                              d->format, d->usage, d->bind_flags, d->cpu_access, 0};
    create_texture(dev, KCAP_OP_CREATE_TEXTURE1D, &d2, 1, 1, init, out, r);
}

void kcap_create_texture3d(kiln_device *dev, const kiln_texture3d_desc *d,
                           const kiln_subresource_data *init, kiln_texture out, kiln_result r)
{
    kiln_texture2d_desc d2 = {d->width,  d->height, d->mip_levels, 1,
                              d->format, d->usage,  d->bind_flags, d->cpu_access, 0};
    create_texture(dev, KCAP_OP_CREATE_TEXTURE3D, &d2, 3, d->depth, init, out, r);
}

void kcap_object(kiln_device *dev, kcap_op op, uint32_t id, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, op, r, &c);
    if (!w)
        return;
    c.u.obj.id = id;
    if (op == KCAP_OP_DESTROY_BUFFER || op == KCAP_OP_DESTROY_TEXTURE)
        kcap_shadow_remove(w, id);
    done(w, &c);
}

void kcap_destroy_resource_pre(kiln_device *dev, kcap_op op, uint32_t id)
{
    struct kcap_writer *w = kcap_lock(dev);
    if (!w)
        return;
    kres_type t = op == KCAP_OP_DESTROY_BUFFER ? KRES_TYPE_BUFFER : KRES_TYPE_TEXTURE2D;
    kiln_log_id lid;
    kres_object *o = kres_handles_get(&dev->handles, id, t, t, &lid);
    if (o) { /* the destroy will succeed: it unmaps what is mapped */
        kcap_map_emit_all(w, id, 0);
        kres_unref(o);
    }
    kcap_unlock(w);
}

void kcap_create_view(kiln_device *dev, kcap_op op, kiln_texture t, const void *desc, uint32_t out,
                      kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, op, r, &c);
    if (!w)
        return;
    c.out[0] = out;
    c.u.view.texture = t.id;
    c.u.view.has_desc = desc != NULL;
    if (desc && op == KCAP_OP_CREATE_BUFFER_SRV) {
        c.u.view.buf = *(const kiln_buffer_srv_desc *)desc;
    } else if (op == KCAP_OP_CREATE_SRV_DIM || (desc && op == KCAP_OP_CREATE_SRV)) {
        c.u.view.srv = *(const kiln_srv_desc *)desc;
    } else if (desc && op == KCAP_OP_CREATE_DSV) {
        const kiln_dsv_desc *d = desc;
        c.u.view.rtv =
            (kiln_rtv_desc){d->format, d->mip_slice, d->first_array_slice, d->array_size};
    } else if (desc) {
        c.u.view.rtv = *(const kiln_rtv_desc *)desc;
    }
    done(w, &c);
}

/* ---- context operations ---- */

void kcap_clear_rtv(kiln_context *ctx, kiln_rtv v, const float color[4], kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_CLEAR_RTV, r, &c);
    if (!w)
        return;
    c.u.clear_rtv.view = v.id;
    memcpy(c.u.clear_rtv.color, color, sizeof c.u.clear_rtv.color);
    done(w, &c);
}

void kcap_clear_dsv(kiln_context *ctx, kiln_dsv v, uint32_t flags, float depth, uint8_t stencil,
                    kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_CLEAR_DSV, r, &c);
    if (!w)
        return;
    c.u.clear_dsv.view = v.id;
    c.u.clear_dsv.flags = flags;
    c.u.clear_dsv.depth = depth;
    c.u.clear_dsv.stencil = stencil;
    done(w, &c);
}

void kcap_update_subresource(kiln_context *ctx, kiln_resource dst, uint32_t sub,
                             const kiln_box *box, const void *data, uint32_t row_pitch,
                             uint32_t depth_pitch, kiln_result r)
{
    kiln_device *dev = ctx->dev;
    kres_resource *res = r == KILN_OK ? resource(dev, dst.id) : NULL;
    if (r == KILN_OK && !res)
        r = KILN_E_INVALID_HANDLE; /* destroyed by another thread meanwhile */
    const kres_subresource *s = res ? &res->subs[sub] : NULL;
    kiln_box b = box ? *box : s ? (kiln_box){0, 0, 0, s->width, s->height, s->depth} : (kiln_box){0};
    bool empty = b.left == b.right || b.top == b.bottom || b.front == b.back;
    /* a box of several depth slices: UPDATE_SUBRESOURCE_3D, its rows
     * gathered tight from the caller's slices */
    bool deep = res && !empty && b.back - b.front > 1;
    kcap_call c;
    struct kcap_writer *w =
        start_ctx(ctx, deep ? KCAP_OP_UPDATE_SUBRESOURCE_3D : KCAP_OP_UPDATE_SUBRESOURCE, r, &c);
    if (w) {
        c.u.update.dst = dst.id;
        c.u.update.sub = sub;
        c.u.update.has_box = box != NULL;
        if (box)
            c.u.update.box = *box;
        bool buffer = res->base.type == KRES_TYPE_BUFFER;
        /* BC: rows of blocks (the box is on block boundaries) */
        uint32_t row = empty ? 0 : buffer ? b.right - b.left : kcap_row_bytes(res->format, b.right - b.left);
        size_t pitch = buffer || !row_pitch ? row : row_pitch;
        uint32_t rows = empty ? 0 : buffer ? b.bottom - b.top : kcap_row_count(res->format, b.bottom - b.top);
        uint8_t *tight = NULL;
        c.u.update.data = (kcap_rows){row, rows, data, pitch};
        if (deep) {
            uint32_t depth = b.back - b.front;
            size_t slice = depth_pitch ? depth_pitch : pitch * rows;
            tight = malloc((size_t)row * rows * depth);
            if (tight) {
                for (uint32_t z = 0; z < depth; z++)
                    for (uint32_t y = 0; y < rows; y++)
                        memcpy(tight + ((size_t)z * rows + y) * row,
                               (const uint8_t *)data + z * slice + y * pitch, row);
                c.u.update.data = (kcap_rows){row, rows * depth, tight, row};
            } else {
                c.u.update.data.rows = 0; /* out of memory: the record says no bytes */
            }
        }
        done(w, &c);
        free(tight);
    }
    if (res)
        kres_unref(&res->base);
}

void kcap_copy_resource(kiln_context *ctx, kiln_resource dst, kiln_resource src, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_COPY_RESOURCE, r, &c);
    if (!w)
        return;
    c.u.copy.dst = dst.id;
    c.u.copy.src = src.id;
    done(w, &c);
}

void kcap_resolve_subresource(kiln_context *ctx, kiln_resource dst, uint32_t dst_sub, kiln_resource src,
                              uint32_t src_sub, kiln_format format, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_RESOLVE_SUBRESOURCE, r, &c);
    if (!w)
        return;
    c.u.resolve.dst = dst.id;
    c.u.resolve.dst_sub = dst_sub;
    c.u.resolve.src = src.id;
    c.u.resolve.src_sub = src_sub;
    c.u.resolve.format = format;
    done(w, &c);
}

void kcap_copy_subresource_region(kiln_context *ctx, kiln_resource dst, uint32_t dst_sub,
                                  uint32_t x, uint32_t y, uint32_t z, kiln_resource src,
                                  uint32_t src_sub, const kiln_box *box, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_COPY_SUBRESOURCE_REGION, r, &c);
    if (!w)
        return;
    c.u.region.dst = dst.id;
    c.u.region.dst_sub = dst_sub;
    c.u.region.x = x;
    c.u.region.y = y;
    c.u.region.z = z;
    c.u.region.src = src.id;
    c.u.region.src_sub = src_sub;
    c.u.region.has_box = box != NULL;
    if (box)
        c.u.region.box = *box;
    done(w, &c);
}

void kcap_map(kiln_context *ctx, kiln_resource handle, uint32_t sub, kiln_map_type type,
              uint32_t flags, const kiln_mapped_subresource *m, kiln_result r)
{
    kiln_device *dev = ctx->dev;
    kres_resource *res = r == KILN_OK ? resource(dev, handle.id) : NULL;
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_MAP, r, &c);
    if (w) {
        c.u.map.res = handle.id;
        c.u.map.sub = sub;
        c.u.map.type = type;
        c.u.map.flags = flags;
        if (res) {
            const kres_subresource *s = &res->subs[sub];
            /* BC: rows of blocks; a 3D subresource's depth slices are rows
             * row_pitch apart too */
            bool buffer = res->base.type == KRES_TYPE_BUFFER;
            kcap_map_add(w, c.ctx, handle.id, sub, type, m,
                         buffer ? s->width * bytes_per_texel(res) : kcap_row_bytes(res->format, s->width),
                         buffer ? s->height : kcap_row_count(res->format, s->height) * s->depth,
                         res->usage == KILN_USAGE_DYNAMIC);
        }
        done(w, &c);
    }
    if (res)
        kres_unref(&res->base);
}

bool kcap_unmap_pre(struct kcap_writer *w, kiln_context *ctx, kiln_resource res, uint32_t sub)
{
    return kcap_map_emit_unmap(w, kcap_context_id(w, ctx), res.id, sub);
}

void kcap_unmap_post(struct kcap_writer *w, kiln_context *ctx, kiln_resource res, uint32_t sub,
                     bool recorded, kiln_result r)
{
    kcap_call c;
    if (recorded) { /* the map's record, bytes included, is written */
        kcap_unlock(w);
        return;
    }
    if (!start_locked(w, ctx, KCAP_OP_UNMAP, r, &c))
        return;
    c.u.unmap.res = res.id;
    c.u.unmap.sub = sub;
    c.u.unmap.kind = KCAP_UNMAP_NONE; /* a failure, or a map kiln itself made */
    done(w, &c);
}

void kcap_context_call(kiln_context *ctx, kcap_op op, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, op, r, &c);
    if (w)
        done(w, &c);
}

void kcap_context_object(kiln_context *ctx, kcap_op op, uint32_t id, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, op, r, &c);
    if (!w)
        return;
    c.u.obj.id = id;
    done(w, &c);
}

void kcap_context_create(kiln_device *dev, kiln_context *created, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CONTEXT_CREATE, r, &c);
    if (!w)
        return;
    c.out[0] = kcap_context_add(w, created);
    done(w, &c);
}

uint32_t kcap_context_destroy_pre(kiln_context *ctx)
{
    struct kcap_writer *w = kcap_lock(ctx->dev);
    if (!w)
        return 0;
    uint32_t id = kcap_context_id(w, ctx);
    if (ctx != &ctx->dev->immediate) /* the destroy will succeed and unmap */
        kcap_map_emit_all(w, 0, id);
    kcap_unlock(w);
    return id;
}

void kcap_context_destroy(kiln_device *dev, const void *ctx, uint32_t id, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CONTEXT_DESTROY, r, &c);
    if (!w)
        return;
    c.ctx = id;
    kcap_context_remove(w, (kiln_context *)ctx);
    done(w, &c);
}

/* ---- timelines, fences, tokens, queries ---- */

void kcap_create_timeline(kiln_device *dev, uint64_t initial, kiln_timeline out, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_TIMELINE, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.tl.value = initial;
    done(w, &c);
}

void kcap_timeline_signal(struct kcap_writer *w, kiln_timeline t, uint64_t value, kiln_result r)
{
    kcap_call c;
    if (!start_locked(w, NULL, KCAP_OP_TIMELINE_SIGNAL, r, &c))
        return;
    c.u.tl.timeline = t.id;
    c.u.tl.value = value;
    done(w, &c);
}

void kcap_create_fence(kiln_device *dev, kiln_timeline t, uint64_t value, kiln_fence out,
                       kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_FENCE, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.tl.timeline = t.id;
    c.u.tl.value = value;
    done(w, &c);
}

void kcap_fence_merge(kiln_device *dev, kiln_fence a, kiln_fence b, kiln_fence out, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_FENCE_MERGE, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.merge.a = a.id;
    c.u.merge.b = b.id;
    done(w, &c);
}

void kcap_fence_wait(struct kcap_writer *w, kiln_fence f, uint64_t timeout, kiln_result r)
{
    kcap_call c;
    if (kcap_lock_pinned(w) && started(w, KCAP_OP_FENCE_WAIT, r, &c)) {
        c.u.wait.fence = f.id;
        c.u.wait.timeout = timeout;
        done(w, &c);
    }
    kcap_unpin(w);
}

void kcap_context_signal(struct kcap_writer *w, kiln_context *ctx, kiln_timeline t, uint64_t value,
                         kiln_result r)
{
    kcap_call c;
    if (!start_locked(w, ctx, KCAP_OP_CONTEXT_SIGNAL, r, &c))
        return;
    c.u.tl.timeline = t.id;
    c.u.tl.value = value;
    done(w, &c);
}

void kcap_context_insert_fence(struct kcap_writer *w, kiln_context *ctx, kiln_fence out,
                               kiln_result r)
{
    kcap_call c;
    if (!start_locked(w, ctx, KCAP_OP_CONTEXT_INSERT_FENCE, r, &c))
        return;
    c.out[0] = out.id;
    done(w, &c);
}

void kcap_context_sync_token(struct kcap_writer *w, kiln_context *ctx, const kiln_sync_token *out,
                             kiln_result r)
{
    kcap_call c;
    if (!start_locked(w, ctx, KCAP_OP_CONTEXT_SYNC_TOKEN, r, &c))
        return;
    c.u.token.timeline = out->timeline;
    c.u.token.value = out->value;
    done(w, &c);
}

void kcap_query_end(struct kcap_writer *w, kiln_context *ctx, kiln_query q, kiln_result r)
{
    kcap_call c;
    if (!start_locked(w, ctx, KCAP_OP_QUERY_END, r, &c))
        return;
    c.u.obj.id = q.id;
    done(w, &c);
}

void kcap_context_wait_sync_token(kiln_context *ctx, kiln_sync_token token, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_CONTEXT_WAIT_SYNC_TOKEN, r, &c);
    if (!w)
        return;
    c.u.token.timeline = token.timeline;
    c.u.token.value = token.value;
    done(w, &c);
}

void kcap_wait_sync_token(struct kcap_writer *w, kiln_sync_token token, uint64_t timeout,
                          kiln_result r)
{
    kcap_call c;
    if (kcap_lock_pinned(w) && started(w, KCAP_OP_WAIT_SYNC_TOKEN, r, &c)) {
        c.u.token.timeline = token.timeline;
        c.u.token.value = token.value;
        c.u.token.timeout = timeout;
        done(w, &c);
    }
    kcap_unpin(w);
}

void kcap_set_predication(kiln_context *ctx, kiln_query q, int value, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_SET_PREDICATION, r, &c);
    if (!w)
        return;
    c.u.pred.query = q.id;
    c.u.pred.value = value != 0;
    done(w, &c);
}

void kcap_create_query(kiln_device *dev, kiln_query_type type, kiln_query out, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_QUERY, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.query.type = type;
    done(w, &c);
}

void kcap_query_get_data(kiln_context *ctx, kiln_query q, const void *data, uint32_t flags,
                         kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_QUERY_GET_DATA, r, &c);
    if (!w)
        return;
    c.u.get_data.query = q.id;
    c.u.get_data.has_data = data != NULL;
    c.u.get_data.flags = flags;
    done(w, &c);
}

/* ---- shaders, layouts, state objects ---- */

static void shader_name(struct kcap_writer *w, kcap_call *c, const char *name, const char *api)
{
    if (name) {
        strcpy(c->u.shader.name, name);
        return;
    }
    kcap_warn(w, KILN_LOG_CAPTURE_SHADER_UNNAMED, api,
              "recorded unnamed: register its desc with kiln_capture_register_*_shader "
              "before creating it, or a replay stops here");
}

void kcap_create_vertex_shader(kiln_device *dev, const kiln_vertex_shader_desc *d,
                               kiln_vertex_shader out, kiln_result r)
{
    const char *name = r == KILN_OK ? kcap_registry_vs_name(dev, d) : NULL;
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_VERTEX_SHADER, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    shader_name(w, &c, name, "kiln_create_vertex_shader");
    c.u.shader.num_inputs = d->num_inputs;
    c.u.shader.num_varyings = d->num_varyings;
    c.u.shader.has_glsl = d->glsl != NULL;
    done(w, &c);
}

void kcap_create_pixel_shader(kiln_device *dev, const kiln_pixel_shader_desc *d,
                              kiln_pixel_shader out, kiln_result r)
{
    const char *name = r == KILN_OK ? kcap_registry_ps_name(dev, d) : NULL;
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_PIXEL_SHADER, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    shader_name(w, &c, name, "kiln_create_pixel_shader");
    c.u.shader.num_varyings = d->num_varyings;
    c.u.shader.num_outputs = d->num_outputs;
    c.u.shader.flags = d->flags;
    c.u.shader.has_glsl = d->glsl != NULL;
    done(w, &c);
}

static void gs_desc(kcap_call *c, const kiln_geometry_shader_desc *d)
{
    c->u.shader.gs_input = d->input;
    c->u.shader.gs_output = d->output;
    c->u.shader.max_vertices = d->max_vertices;
    c->u.shader.num_varyings = d->num_varyings;
    c->u.shader.flags = d->flags;
}

void kcap_create_geometry_shader(kiln_device *dev, const kiln_geometry_shader_desc *d,
                                 kiln_geometry_shader out, kiln_result r)
{
    const char *name = r == KILN_OK ? kcap_registry_gs_name(dev, d) : NULL;
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_GEOMETRY_SHADER, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    shader_name(w, &c, name, "kiln_create_geometry_shader");
    gs_desc(&c, d);
    done(w, &c);
}

void kcap_create_geometry_shader_so(kiln_device *dev, const kiln_geometry_shader_desc *gs,
                                    const kiln_so_desc *so, kiln_geometry_shader out, kiln_result r)
{
    const char *name = r == KILN_OK && gs ? kcap_registry_gs_name(dev, gs) : NULL;
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_GEOMETRY_SHADER_SO, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.shader.has_gs = gs != NULL;
    if (gs) {
        shader_name(w, &c, name, "kiln_create_geometry_shader_with_so");
        gs_desc(&c, gs);
    }
    /* A successful call had a valid declaration. */
    c.u.shader.so_count = so->num_elements;
    c.u.shader.so_stride = so->stride;
    memcpy(c.u.shader.so, so->elements, sizeof(kiln_so_element) * so->num_elements);
    done(w, &c);
}

void kcap_create_input_layout(kiln_device *dev, const kiln_input_layout_desc *d,
                              kiln_vertex_shader vs, kiln_input_layout out, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_CREATE_INPUT_LAYOUT, r, &c);
    if (!w)
        return;
    c.out[0] = out.id;
    c.u.layout.vs = vs.id;
    c.u.layout.desc = *d;
    done(w, &c);
}

void kcap_create_state(kiln_device *dev, kcap_op op, const void *desc, uint32_t out, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, op, r, &c);
    if (!w)
        return;
    c.out[0] = out;
    switch (op) {
    case KCAP_OP_CREATE_RASTERIZER_STATE:
        c.u.rasterizer = *(const kiln_rasterizer_desc *)desc;
        break;
    case KCAP_OP_CREATE_DEPTH_STENCIL_STATE:
        c.u.depth_stencil = *(const kiln_depth_stencil_desc *)desc;
        break;
    case KCAP_OP_CREATE_BLEND_STATE:
    case KCAP_OP_CREATE_BLEND_STATE_8:
    case KCAP_OP_CREATE_BLEND_STATE_A2C:
        c.u.blend = *(const kiln_blend_desc *)desc;
        break;
    default:
        c.u.sampler = *(const kiln_sampler_desc *)desc;
        break;
    }
    done(w, &c);
}

/* ---- pipeline setters, draws ---- */

void kcap_set_slots(kiln_context *ctx, kcap_op op, uint32_t start_slot, uint32_t count,
                    const void *handles, const uint32_t *strides, const uint32_t *offsets,
                    kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, op, r, &c);
    if (!w)
        return;
    c.u.slots.start = start_slot;
    c.u.slots.count = count;
    for (uint32_t i = 0; i < count; i++) {
        /* Every handle type is a struct of one uint32_t. */
        memcpy(&c.u.slots.ids[i], (const uint8_t *)handles + 4 * i, 4);
        if (strides)
            c.u.slots.strides[i] = strides[i];
        if (offsets)
            c.u.slots.offsets[i] = offsets[i];
    }
    done(w, &c);
}

void kcap_so_set_targets(kiln_context *ctx, uint32_t count, const kiln_buffer *buffers,
                         const uint32_t *offsets, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_SO_SET_TARGETS, r, &c);
    if (!w)
        return;
    c.u.slots.count = count;
    c.u.slots.has_offsets = offsets != NULL;
    for (uint32_t i = 0; i < count; i++) {
        c.u.slots.ids[i] = buffers[i].id;
        if (offsets)
            c.u.slots.offsets[i] = offsets[i];
    }
    done(w, &c);
}

void kcap_ia_set_index_buffer(kiln_context *ctx, kiln_buffer b, kiln_index_format format,
                              uint32_t offset, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_IA_SET_INDEX_BUFFER, r, &c);
    if (!w)
        return;
    c.u.ib.buffer = b.id;
    c.u.ib.format = format;
    c.u.ib.offset = offset;
    done(w, &c);
}

void kcap_ia_set_topology(kiln_context *ctx, kiln_topology t, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_IA_SET_TOPOLOGY, r, &c);
    if (!w)
        return;
    c.u.topology.topology = t;
    done(w, &c);
}

void kcap_rs_set_viewport(kiln_context *ctx, const kiln_viewport *vp, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_RS_SET_VIEWPORT, r, &c);
    if (!w)
        return;
    c.u.viewport = *vp;
    done(w, &c);
}

void kcap_rs_set_scissor_rect(kiln_context *ctx, const kiln_rect *rect, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_RS_SET_SCISSOR_RECT, r, &c);
    if (!w)
        return;
    c.u.scissor = *rect;
    done(w, &c);
}

void kcap_om_set_render_targets(kiln_context *ctx, uint32_t count, const kiln_rtv *views,
                                kiln_dsv ds, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_OM_SET_RENDER_TARGETS, r, &c);
    if (!w)
        return;
    c.u.rts.count = count;
    for (uint32_t i = 0; i < count; i++)
        c.u.rts.rtv[i] = views[i].id;
    c.u.rts.dsv = ds.id;
    done(w, &c);
}

void kcap_om_set_blend_state(kiln_context *ctx, kiln_blend_state s, const float factor[4],
                             kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_OM_SET_BLEND_STATE, r, &c);
    if (!w)
        return;
    c.u.blend_set.state = s.id;
    c.u.blend_set.has_factor = factor != NULL;
    if (factor)
        memcpy(c.u.blend_set.factor, factor, sizeof c.u.blend_set.factor);
    done(w, &c);
}

void kcap_om_set_depth_stencil_state(kiln_context *ctx, kiln_depth_stencil_state s, uint32_t ref,
                                     kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_OM_SET_DEPTH_STENCIL_STATE, r, &c);
    if (!w)
        return;
    c.u.dss_set.state = s.id;
    c.u.dss_set.ref = ref;
    done(w, &c);
}

void kcap_draw(kiln_context *ctx, kcap_op op, uint32_t count, uint32_t instances, uint32_t start,
               int32_t base_vertex, uint32_t start_instance, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, op, r, &c);
    if (!w)
        return;
    c.u.draw.count = count;
    c.u.draw.instances = instances;
    c.u.draw.start = start;
    c.u.draw.base_vertex = base_vertex;
    c.u.draw.start_instance = start_instance;
    done(w, &c);
}

/* ---- swapchains ---- */

void kcap_swapchain_create(kiln_context *ctx, const kiln_swapchain_desc *d, kiln_swapchain *out,
                           kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start_ctx(ctx, KCAP_OP_SWAPCHAIN_CREATE, r, &c);
    if (!w)
        return;
    c.out[0] = kcap_swapchain_add(w, out);
    c.u.swapchain.width = d->width;
    c.u.swapchain.height = d->height;
    c.u.swapchain.format = d->format;
    c.u.swapchain.buffer_count = d->buffer_count;
    c.u.swapchain.mode = d->mode;
    c.u.swapchain.winsys = d->winsys;
    done(w, &c);
}

void kcap_swapchain_call(kiln_device *dev, kiln_swapchain *sc, kcap_op op, uint32_t width,
                         uint32_t height, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, op, r, &c);
    if (!w)
        return;
    c.swapchain = kcap_swapchain_id(w, sc);
    c.u.swapchain.width = width;
    c.u.swapchain.height = height;
    if (op == KCAP_OP_SWAPCHAIN_DESTROY)
        kcap_swapchain_remove(w, sc);
    done(w, &c);
}

void kcap_swapchain_get_back_buffer(kiln_device *dev, kiln_swapchain *sc, kiln_texture t,
                                    kiln_rtv v, kiln_result r)
{
    kcap_call c;
    struct kcap_writer *w = start(dev, KCAP_OP_SWAPCHAIN_GET_BACK_BUFFER, r, &c);
    if (!w)
        return;
    c.swapchain = kcap_swapchain_id(w, sc);
    c.out[0] = t.id;
    c.out[1] = v.id;
    done(w, &c);
}
