/* Context operations: validate, then queue a command (clear, update, copy)
 * or map against queued work. */
#include "api.h"
#include "../capture/capture.h"
#include "../resources/texel.h"

#include <math.h>
#include <string.h>

#define FAIL(code, id, ...) kb_fail(&dev->env, code, KILN_LOG_##id, api, __VA_ARGS__)

#define CTX_PREAMBLE()                                                                             \
    if (!ctx)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "context is NULL"); \
    kiln_device *dev = ctx->dev

static uint32_t texel_bytes(const kres_resource *res)
{
    return res->base.type == KRES_TYPE_BUFFER ? 1u : kres_format(res->format)->size;
}

static bool is_depth(const kres_resource *res)
{
    return res->base.type == KRES_TYPE_TEXTURE2D && kres_format(res->format)->is_depth;
}

/* Reserves a command slot, logging when the wait would deadlock. */
static kiln_result begin(kiln_context *ctx, const char *api, kq_cmd **cmd)
{
    kiln_result r = kq_begin(&ctx->q, api, cmd);
    if (r != KILN_OK)
        return kb_fail(&ctx->dev->env, r, KILN_LOG_WOULD_DEADLOCK, api,
                       "the command ring is full of commands waiting for a resource this thread keeps mapped");
    return KILN_OK;
}

/* Validates `box` (NULL: whole subresource) against a subresource and
 * resolves it. Returns KILN_OK with *empty set for an empty box (a D3D10
 * no-op). Inlined into its two callers (UpdateSubresource and
 * CopySubresourceRegion): as a call, moving its seven arguments and the
 * box in and out was a third of its cost. */
static inline __attribute__((always_inline)) kiln_result
resolve_box(kiln_device *dev, const char *api, const kres_resource *res, uint32_t sub,
            const kiln_box *box, kiln_box *out, bool *empty)
{
    const kres_subresource *s = &res->subs[sub];
    *empty = false;
    if (!box) {
        *out = (kiln_box){0, 0, 0, s->width, s->height, s->depth};
        return KILN_OK;
    }
    if (box->left > box->right || box->top > box->bottom || box->front > box->back)
        return FAIL(KILN_E_INVALID_ARG, BOX_INVALID, "box [%u,%u)x[%u,%u)x[%u,%u) is inverted",
                    box->left, box->right, box->top, box->bottom, box->front, box->back);
    if (box->left == box->right || box->top == box->bottom || box->front == box->back) {
        *empty = true; /* D3D10: an empty box is a no-op */
        return KILN_OK;
    }
    /* BC formats: a box may reach the block-aligned size */
    uint32_t bw = s->width, bh = s->height;
    if (res->base.type == KRES_TYPE_TEXTURE2D) {
        const kres_format_info *fi = kres_format(res->format);
        bw = kres_blocks(fi, bw) * kres_block_dim(fi);
        bh = kres_blocks(fi, bh) * kres_block_dim(fi);
    }
    if (box->right > bw || box->bottom > bh || box->back > s->depth)
        return FAIL(KILN_E_INVALID_ARG, BOX_INVALID,
                    "box [%u,%u)x[%u,%u)x[%u,%u) is outside subresource %u (%ux%ux%u)", box->left,
                    box->right, box->top, box->bottom, box->front, box->back, sub, s->width, s->height,
                    s->depth);
    *out = *box;
    return KILN_OK;
}

/* A resolved, non-empty box of a BC texture (texels) to blocks: its
 * edges on multiples of 4, right and bottom also at the subresource's
 * edge. Other resources keep their units. */
static kiln_result box_to_blocks(kiln_device *dev, const char *api, const kres_resource *res,
                                 uint32_t sub, kiln_box *b)
{
    const kres_format_info *fi = res->base.type == KRES_TYPE_TEXTURE2D ? kres_format(res->format) : NULL;
    if (!fi || kres_block_dim(fi) == 1)
        return KILN_OK;
    const kres_subresource *s = &res->subs[sub];
    uint32_t d = kres_block_dim(fi);
    if (b->left % d || b->top % d || (b->right % d && b->right != s->width) ||
        (b->bottom % d && b->bottom != s->height))
        return FAIL(KILN_E_INVALID_ARG, BOX_BLOCK_ALIGN,
                    "box [%u,%u)x[%u,%u) of subresource %u (%ux%u) is not on %ux%u blocks", b->left,
                    b->right, b->top, b->bottom, sub, s->width, s->height, d, d);
    b->left /= d;
    b->top /= d;
    b->right = (b->right + d - 1) / d;
    b->bottom = (b->bottom + d - 1) / d;
    return KILN_OK;
}

static kiln_result check_sub(kiln_device *dev, const char *api, const kres_resource *res, uint32_t sub)
{
    if (sub >= res->num_subresources)
        return FAIL(KILN_E_INVALID_ARG, SUBRESOURCE_OUT_OF_RANGE, "subresource %u of %u", sub,
                    res->num_subresources);
    return KILN_OK;
}

/* ---- clears ---- */

static kiln_result queue_clear(kiln_context *ctx, const char *api, kres_view *v, const uint8_t texel[16],
                               uint32_t mask)
{
    kq_cmd *cmd;
    kiln_result r = begin(ctx, api, &cmd);
    if (r != KILN_OK)
        return r;
    cmd->op = KQ_OP_CLEAR;
    cmd->u.clear.first_mip = v->first_mip;
    cmd->u.clear.num_mips = v->num_mips;
    cmd->u.clear.first_slice = v->first_slice;
    cmd->u.clear.num_slices = v->num_slices;
    cmd->u.clear.mask = mask;
    memcpy(cmd->u.clear.texel, texel, 16);
    kq_access(cmd, v->res, KQ_WRITE);
    ka_predicate(ctx, cmd);
    kq_submit(&ctx->q, cmd);
    return KILN_OK;
}

static kiln_result clear_rtv(kiln_context *ctx, kiln_rtv view, const float color[4])
{
    static const char api[] = "kiln_clear_rtv";
    CTX_PREAMBLE();
    if (!color)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "color is NULL");
    kiln_result r;
    kres_view *v = ka_get_view(dev, view.id, KRES_TYPE_RTV, api, &r);
    if (!v)
        return r;
    uint8_t texel[16];
    kres_pack_color(v->format, color, texel);
    if (!ka_scene_clear(ctx, v, false, texel, 0xffffffffu) && (r = ka_flush_scene(ctx, api)) == KILN_OK)
        r = queue_clear(ctx, api, v, texel, 0xffffffffu);
    kres_unref(&v->base);
    return r;
}

kiln_result kiln_clear_rtv(kiln_context *ctx, kiln_rtv view, const float color[4])
{
    kiln_result r = clear_rtv(ctx, view, color);
    if (ctx && ctx->dev->capture)
        kcap_clear_rtv(ctx, view, color, r);
    return r;
}

static kiln_result clear_dsv(kiln_context *ctx, kiln_dsv view, uint32_t flags, float depth, uint8_t stencil)
{
    static const char api[] = "kiln_clear_dsv";
    CTX_PREAMBLE();
    if (!flags || (flags & ~(uint32_t)(KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL)))
        return FAIL(KILN_E_INVALID_ARG, CLEAR_DEPTH_FLAGS, "clear flags 0x%x", flags);
    kiln_result r;
    kres_view *v = ka_get_view(dev, view.id, KRES_TYPE_DSV, api, &r);
    if (!v)
        return r;
    float d = isnan(depth) ? 0.0f : depth < 0.0f ? 0.0f : depth > 1.0f ? 1.0f : depth;
    uint8_t texel[16] = {0};
    uint32_t mask = 0xffffffffu;
    if (v->format == KILN_FORMAT_D32_FLOAT || v->format == KILN_FORMAT_D16_UNORM) {
        if (v->format == KILN_FORMAT_D32_FLOAT) {
            memcpy(texel, &d, 4);
        } else {
            uint16_t d16 = (uint16_t)kres_float_to_unorm(d, 16);
            memcpy(texel, &d16, 2);
        }
        if (!(flags & KILN_CLEAR_DEPTH)) { /* stencil of a view without: nothing */
            kres_unref(&v->base);
            return KILN_OK;
        }
    } else if (v->format == KILN_FORMAT_D32_FLOAT_S8X24_UINT) {
        /* float depth, then the stencil byte; the mask as D24's (kres_fill) */
        memcpy(texel, &d, 4);
        texel[4] = stencil;
        mask = ((flags & KILN_CLEAR_DEPTH) ? 0x00ffffffu : 0) |
               ((flags & KILN_CLEAR_STENCIL) ? 0xff000000u : 0);
    } else {
        uint32_t word = ((uint32_t)stencil << 24) | (uint32_t)lrint((double)d * 16777215.0);
        memcpy(texel, &word, 4);
        mask = ((flags & KILN_CLEAR_DEPTH) ? 0x00ffffffu : 0) |
               ((flags & KILN_CLEAR_STENCIL) ? 0xff000000u : 0);
    }
    if (!ka_scene_clear(ctx, v, true, texel, mask) && (r = ka_flush_scene(ctx, api)) == KILN_OK)
        r = queue_clear(ctx, api, v, texel, mask);
    kres_unref(&v->base);
    return r;
}

kiln_result kiln_clear_dsv(kiln_context *ctx, kiln_dsv view, uint32_t flags, float depth, uint8_t stencil)
{
    kiln_result r = clear_dsv(ctx, view, flags, depth, stencil);
    if (ctx && ctx->dev->capture)
        kcap_clear_dsv(ctx, view, flags, depth, stencil, r);
    return r;
}

/* ---- UpdateSubresource ---- */

/* Queues one chunk: rows [y0, y1) and columns [x0, x1) of the box. With
 * `give`, the caller's reference on `res` becomes the command's when it
 * succeeds (it stays the caller's on failure). Inlined into both of
 * update_subresource's loops: its thirteen arguments cost ~35 instructions
 * a call, and a small update is one chunk. */
static inline __attribute__((always_inline)) kiln_result
update_chunk(kiln_context *ctx, const char *api, kres_resource *res, uint32_t sub,
             const kiln_box *box, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1, uint32_t z,
             const uint8_t *data, size_t pitch, bool give)
{
    kiln_device *dev = ctx->dev;
    uint32_t bpp = texel_bytes(res);
    uint32_t row = (x1 - x0) * bpp;
    kq_cmd *cmd;
    kiln_result r = begin(ctx, api, &cmd);
    if (r != KILN_OK)
        return r;
    uint8_t *dst;
    r = kq_upload_alloc(&ctx->q, cmd, row * (y1 - y0), &dst);
    if (r != KILN_OK) {
        kq_cancel(&ctx->q, cmd);
        return FAIL(r, WOULD_DEADLOCK,
                    "the transfer ring is held by commands waiting for a resource this thread keeps mapped");
    }
    /* Packed rows are one copy: glibc copies a large block with `rep movsb`,
     * which writes whole lines without reading them first, while a copy
     * per row under ~2 KiB is vector stores that each fetch their line. The
     * ring's bytes were last read by a worker on the other core, so every
     * fetched line is a cross-core miss: in bench_queue (c), 64 KiB as 128
     * rows of 512 B took ~10 us of the producer's time, as one copy ~2 us. */
    const uint8_t *from = data + (size_t)(y0 - box->top) * pitch + (size_t)(x0 - box->left) * bpp;
    if (pitch == row)
        memcpy(dst, from, (size_t)row * (y1 - y0));
    else
        for (uint32_t y = y0; y < y1; y++)
            memcpy(dst + (size_t)(y - y0) * row, from + (size_t)(y - y0) * pitch, row);
    cmd->op = KQ_OP_UPDATE;
    cmd->u.update.sub = sub;
    cmd->u.update.box = (kiln_box){x0, y0, z, x1, y1, z + 1};
    cmd->u.update.ring_offset = (uint32_t)(dst - ctx->q.ring.base);
    cmd->u.update.pitch = row;
    if (give)
        kq_access_owned(cmd, res, KQ_WRITE);
    else
        kq_access(cmd, res, KQ_WRITE);
    ka_predicate(ctx, cmd);
    if ((size_t)row * (y1 - y0) < KQ_BATCH_BYTES)
        kq_submit_small(&ctx->q, cmd);
    else
        kq_submit(&ctx->q, cmd);
    return KILN_OK;
}

static kiln_result update_subresource(kiln_context *ctx, kiln_resource dst, uint32_t sub,
                                      const kiln_box *box, const void *data, uint32_t row_pitch,
                                      uint32_t depth_pitch)
{
    static const char api[] = "kiln_update_subresource";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    if (!data)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "data is NULL");
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, dst.id, KRES_TYPE_BUFFER, KRES_TYPE_TEXTURE2D, api, "dst", &r);
    if (!res)
        return r;
    kiln_box b;
    bool empty = false;
    if (res->usage != KILN_USAGE_DEFAULT)
        r = FAIL(KILN_E_INVALID_ARG, UPDATE_USAGE, "the destination is not DEFAULT");
    else if (is_depth(res))
        r = FAIL(KILN_E_INVALID_ARG, UPDATE_DEPTH, "the destination has a depth-stencil format");
    else if (res->samples > 1)
        r = FAIL(KILN_E_INVALID_ARG, MSAA_OPERATION, "the destination is multisampled");
    else if ((r = check_sub(dev, api, res, sub)) != KILN_OK)
        ;
    else if ((res->bind_flags & KILN_BIND_CONSTANT_BUFFER) && box)
        r = FAIL(KILN_E_INVALID_ARG, UPDATE_CONSTANT_PARTIAL, "constant buffers are updated whole");
    else
        r = resolve_box(dev, api, res, sub, box, &b, &empty);
    if (r == KILN_OK && !empty)
        r = box_to_blocks(dev, api, res, sub, &b); /* BC: rows of blocks from here on */
    if (r != KILN_OK || empty) {
        kres_unref(&res->base);
        return r;
    }
    uint32_t bpp = texel_bytes(res);
    size_t row = (size_t)(b.right - b.left) * bpp;
    size_t pitch = res->base.type == KRES_TYPE_BUFFER ? row : row_pitch ? row_pitch : row;
    if (pitch < row) {
        kres_unref(&res->base);
        return FAIL(KILN_E_INVALID_ARG, ROW_PITCH_INVALID, "row pitch %u, a row of the box is %zu bytes",
                    row_pitch, row);
    }

    size_t slice = depth_pitch ? depth_pitch : pitch * (b.bottom - b.top);
    if (b.back - b.front > 1 && slice < pitch * (b.bottom - b.top)) {
        kres_unref(&res->base);
        return FAIL(KILN_E_INVALID_ARG, DEPTH_PITCH_INVALID,
                    "depth pitch %u, the rows of one slice of the box take %zu bytes", depth_pitch,
                    pitch * (b.bottom - b.top));
    }

    /* Split into chunks that fit half the transfer ring: one depth slice
     * at a time (3D), whole rows when a row fits, else pieces of rows. The
     * last chunk takes over the lookup's reference; `res` is not touched
     * after it is queued (the command may be all that keeps it alive). */
    uint32_t max = kq_upload_max(&ctx->q);
    bool held = true;
    for (uint32_t z = b.front; z < b.back && r == KILN_OK; z++) {
        const uint8_t *src = (const uint8_t *)data + (z - b.front) * slice;
        bool last_z = z + 1 == b.back;
        if (row <= max) {
            uint32_t rows = (uint32_t)(max / row);
            for (uint32_t y = b.top; y < b.bottom && r == KILN_OK; y += rows) {
                bool give = last_z && y + rows >= b.bottom;
                r = update_chunk(ctx, api, res, sub, &b, b.left, b.right, y, KB_MIN(b.bottom, y + rows), z, src,
                                 pitch, give);
                held = !(give && r == KILN_OK);
            }
        } else {
            uint32_t cols = max / bpp;
            for (uint32_t y = b.top; y < b.bottom && r == KILN_OK; y++)
                for (uint32_t x = b.left; x < b.right && r == KILN_OK; x += cols) {
                    bool give = last_z && y + 1 == b.bottom && x + cols >= b.right;
                    r = update_chunk(ctx, api, res, sub, &b, x, KB_MIN(b.right, x + cols), y, y + 1, z, src, pitch,
                                     give);
                    held = !(give && r == KILN_OK);
                }
        }
    }
    if (held)
        kres_unref(&res->base);
    return r;
}

kiln_result kiln_update_subresource(kiln_context *ctx, kiln_resource dst, uint32_t sub,
                                    const kiln_box *box, const void *data, uint32_t row_pitch,
                                    uint32_t depth_pitch)
{
    kiln_result r = update_subresource(ctx, dst, sub, box, data, row_pitch, depth_pitch);
    if (ctx && ctx->dev->capture)
        kcap_update_subresource(ctx, dst, sub, box, data, row_pitch, depth_pitch, r);
    return r;
}

/* ---- copies ---- */

static kiln_result check_copy_dst(kiln_device *dev, const char *api, const kres_resource *dst)
{
    if (dst->usage != KILN_USAGE_DEFAULT && dst->usage != KILN_USAGE_STAGING)
        return FAIL(KILN_E_INVALID_ARG, COPY_DST_USAGE, "the destination is %s",
                    dst->usage == KILN_USAGE_IMMUTABLE ? "IMMUTABLE" : "DYNAMIC");
    return KILN_OK;
}

/* Reserves a copy command naming dst (acc[0], written) and src (read).
 * On success the caller's references on both (get_dst_src's) are the
 * command's, and neither is touched once it is submitted; on failure
 * they stay the caller's. Inlined, as get_dst_src: each was a call of ~40
 * instructions on every copy. */
static inline __attribute__((always_inline)) kiln_result
queue_copy(kiln_context *ctx, const char *api, kq_op op, kres_resource *dst, kres_resource *src,
           kq_cmd **out)
{
    kiln_result r = begin(ctx, api, out);
    if (r != KILN_OK)
        return r;
    (*out)->op = (uint16_t)op;
    kq_access_owned(*out, dst, KQ_WRITE); /* acc[0]: destination */
    kq_access_owned(*out, src, KQ_READ);
    ka_predicate(ctx, *out);
    return KILN_OK;
}

/* The destination and source of a copy or resolve, each with a reference
 * (of type lowest .. TEXTURE2D); on failure neither is held. */
static inline __attribute__((always_inline)) kiln_result
get_dst_src(kiln_device *dev, const char *api, kiln_resource dst_h, kiln_resource src_h,
            kres_type lowest, kres_resource **dst, kres_resource **src)
{
    /* One acquisition of the handle table's lock for both. */
    const uint32_t ids[2] = {dst_h.id, src_h.id};
    kres_object *o[2];
    uint32_t which = 0;
    kiln_log_id lid = KILN_LOG_NONE;
    if (!kres_handles_get2(&dev->handles, ids, lowest, KRES_TYPE_TEXTURE2D, o, &which, &lid)) {
        *dst = *src = NULL;
        return ka_handle_fail(dev, api, which ? "src" : "dst", lid);
    }
    *dst = kres_as_resource(o[0]);
    *src = kres_as_resource(o[1]);
    return KILN_OK;
}

static kiln_result copy_resource(kiln_context *ctx, kiln_resource dst_h, kiln_resource src_h)
{
    static const char api[] = "kiln_copy_resource";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r;
    kres_resource *dst, *src;
    if ((r = get_dst_src(dev, api, dst_h, src_h, KRES_TYPE_BUFFER, &dst, &src)) != KILN_OK)
        return r;
    if (dst == src)
        r = FAIL(KILN_E_INVALID_ARG, COPY_SAME_RESOURCE, "source and destination are one resource");
    else if ((r = check_copy_dst(dev, api, dst)) != KILN_OK)
        ;
    else if (dst->base.type != src->base.type || dst->width != src->width || dst->height != src->height ||
             dst->format != src->format || dst->mip_levels != src->mip_levels ||
             dst->array_size != src->array_size || dst->depth != src->depth || dst->dim != src->dim ||
             dst->samples != src->samples)
        r = FAIL(KILN_E_INVALID_ARG, COPY_MISMATCH, "type, size, format, mips, array size, depth, kind or samples differ");
    if (r == KILN_OK) {
        kq_cmd *cmd;
        r = queue_copy(ctx, api, KQ_OP_COPY_RESOURCE, dst, src, &cmd);
        if (r == KILN_OK) {
            kq_submit(&ctx->q, cmd); /* with the references */
            return r;
        }
    }
    kres_unref(&dst->base);
    kres_unref(&src->base);
    return r;
}

kiln_result kiln_copy_resource(kiln_context *ctx, kiln_resource dst, kiln_resource src)
{
    kiln_result r = copy_resource(ctx, dst, src);
    if (ctx && ctx->dev->capture)
        kcap_copy_resource(ctx, dst, src, r);
    return r;
}

static bool overlap(const kiln_box *a, uint32_t x, uint32_t y, uint32_t z, uint32_t w, uint32_t h,
                    uint32_t d)
{
    return a->left < x + w && x < a->right && a->top < y + h && y < a->bottom && a->front < z + d &&
           z < a->back;
}

static kiln_result copy_subresource_region(kiln_context *ctx, kiln_resource dst_h, uint32_t dst_sub,
                                           uint32_t dst_x, uint32_t dst_y, uint32_t dst_z,
                                           kiln_resource src_h, uint32_t src_sub, const kiln_box *src_box)
{
    static const char api[] = "kiln_copy_subresource_region";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r;
    kres_resource *dst, *src;
    if ((r = get_dst_src(dev, api, dst_h, src_h, KRES_TYPE_BUFFER, &dst, &src)) != KILN_OK)
        return r;
    kiln_box b;
    bool empty = false;
    if ((r = check_copy_dst(dev, api, dst)) != KILN_OK)
        ;
    else if (dst->samples > 1 || src->samples > 1)
        r = FAIL(KILN_E_INVALID_ARG, MSAA_OPERATION, "the %s is multisampled: copy it whole with kiln_copy_resource",
                 dst->samples > 1 ? "destination" : "source");
    else if (dst->base.type != src->base.type || dst->format != src->format)
        r = FAIL(KILN_E_INVALID_ARG, COPY_MISMATCH, "source and destination differ in type or format");
    else if (dst->dim != src->dim)
        r = FAIL(KILN_E_INVALID_ARG, COPY_KIND_MISMATCH, "source and destination are different texture kinds (1D, 2D, 3D)");
    else if ((r = check_sub(dev, api, dst, dst_sub)) != KILN_OK || (r = check_sub(dev, api, src, src_sub)) != KILN_OK)
        ;
    else if (dst_z >= dst->subs[dst_sub].depth)
        r = FAIL(KILN_E_INVALID_ARG, BOX_INVALID, "dst_z %u: the subresource has %u depth slice(s)", dst_z,
                 dst->subs[dst_sub].depth);
    else
        r = resolve_box(dev, api, src, src_sub, src_box, &b, &empty);
    /* BC formats: the box, the position and the sizes in blocks from here */
    uint32_t dw = 0, dh = 0;
    if (r == KILN_OK && !empty) {
        const kres_subresource *ds = &dst->subs[dst_sub];
        dw = ds->width;
        dh = ds->height;
        const kres_format_info *fi = dst->base.type == KRES_TYPE_TEXTURE2D ? kres_format(dst->format) : NULL;
        if (fi && kres_block_dim(fi) > 1) {
            uint32_t d = kres_block_dim(fi);
            if (dst_x % d || dst_y % d)
                r = FAIL(KILN_E_INVALID_ARG, BOX_BLOCK_ALIGN, "destination (%u,%u) is not on %ux%u blocks",
                         dst_x, dst_y, d, d);
            else if ((r = box_to_blocks(dev, api, src, src_sub, &b)) == KILN_OK) {
                dst_x /= d;
                dst_y /= d;
                dw = kres_blocks(fi, dw);
                dh = kres_blocks(fi, dh);
            }
        }
    }
    if (r == KILN_OK && !empty) {
        const kres_subresource *ds = &dst->subs[dst_sub], *ss = &src->subs[src_sub];
        uint32_t w = b.right - b.left, h = b.bottom - b.top, d = b.back - b.front;
        if (dst_x > dw || w > dw - dst_x || dst_y > dh || h > dh - dst_y || dst_z > ds->depth ||
            d > ds->depth - dst_z)
            r = FAIL(KILN_E_INVALID_ARG, BOX_INVALID,
                     "a %ux%ux%u region at (%u,%u,%u) leaves subresource %u (%ux%ux%u)", w, h, d, dst_x,
                     dst_y, dst_z, dst_sub, dw, dh, ds->depth);
        else if (is_depth(dst) && (dst_x || dst_y || w != ss->width || h != ss->height ||
                                   ds->width != ss->width || ds->height != ss->height))
            r = FAIL(KILN_E_INVALID_ARG, COPY_DEPTH_REGION, "depth-stencil copies take whole subresources");
        else if (dst == src && dst_sub == src_sub && overlap(&b, dst_x, dst_y, dst_z, w, h, d))
            r = FAIL(KILN_E_INVALID_ARG, COPY_OVERLAP, "regions overlap within subresource %u", dst_sub);
    }
    if (r == KILN_OK && !empty) {
        kq_cmd *cmd;
        r = queue_copy(ctx, api, KQ_OP_COPY_REGION, dst, src, &cmd);
        if (r == KILN_OK) {
            cmd->u.copy.dst_sub = dst_sub;
            cmd->u.copy.dst_x = dst_x;
            cmd->u.copy.dst_y = dst_y;
            cmd->u.copy.dst_z = dst_z;
            cmd->u.copy.src_sub = src_sub;
            cmd->u.copy.box = b;
            if ((size_t)(b.right - b.left) * (b.bottom - b.top) * (b.back - b.front) *
                    texel_bytes(dst) <
                KQ_BATCH_BYTES)
                kq_submit_small(&ctx->q, cmd); /* with the references */
            else
                kq_submit(&ctx->q, cmd);
            return r;
        }
    }
    kres_unref(&dst->base);
    kres_unref(&src->base);
    return r;
}

kiln_result kiln_copy_subresource_region(kiln_context *ctx, kiln_resource dst, uint32_t dst_sub,
                                         uint32_t dst_x, uint32_t dst_y, uint32_t dst_z,
                                         kiln_resource src, uint32_t src_sub, const kiln_box *src_box)
{
    kiln_result r =
        copy_subresource_region(ctx, dst, dst_sub, dst_x, dst_y, dst_z, src, src_sub, src_box);
    if (ctx && ctx->dev->capture)
        kcap_copy_subresource_region(ctx, dst, dst_sub, dst_x, dst_y, dst_z, src, src_sub, src_box, r);
    return r;
}

/* ---- resolve ---- */

static kiln_result resolve_subresource(kiln_context *ctx, kiln_resource dst_h, uint32_t dst_sub,
                                       kiln_resource src_h, uint32_t src_sub, kiln_format format)
{
    static const char api[] = "kiln_resolve_subresource";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r;
    kres_resource *dst, *src;
    if ((r = get_dst_src(dev, api, dst_h, src_h, KRES_TYPE_TEXTURE2D, &dst, &src)) != KILN_OK)
        return r;
    kiln_format f = format == KILN_FORMAT_UNKNOWN ? src->format : format;
    if ((r = check_sub(dev, api, dst, dst_sub)) != KILN_OK || (r = check_sub(dev, api, src, src_sub)) != KILN_OK)
        ;
    else if (dst->usage != KILN_USAGE_DEFAULT)
        r = FAIL(KILN_E_INVALID_ARG, RESOLVE_INVALID, "the destination is not DEFAULT");
    else if (dst->dim != KRES_DIM_2D)
        r = FAIL(KILN_E_INVALID_ARG, RESOLVE_INVALID, "the destination is not a 2D texture (or a cube's face)");
    else if (src->samples < 2 || dst->samples != 1)
        r = FAIL(KILN_E_INVALID_ARG, RESOLVE_INVALID, "the source has %u samples, the destination %u (4 and 1)",
                 src->samples, dst->samples);
    else if (src->format != f || dst->format != f)
        r = FAIL(KILN_E_INVALID_ARG, RESOLVE_INVALID, "formats %d (source) and %d (destination), %d named",
                 (int)src->format, (int)dst->format, (int)format);
    else if (kres_format(f)->is_depth || kres_format_integer(f))
        r = FAIL(KILN_E_INVALID_ARG, RESOLVE_INVALID, "format %d is %s", (int)f,
                 kres_format(f)->is_depth ? "a depth format" : "an integer format");
    else if (dst->subs[dst_sub].width != src->subs[src_sub].width ||
             dst->subs[dst_sub].height != src->subs[src_sub].height)
        r = FAIL(KILN_E_INVALID_ARG, RESOLVE_INVALID, "the destination is %ux%u, the source %ux%u",
                 dst->subs[dst_sub].width, dst->subs[dst_sub].height, src->subs[src_sub].width,
                 src->subs[src_sub].height);
    if (r == KILN_OK) {
        kq_cmd *cmd;
        r = queue_copy(ctx, api, KQ_OP_RESOLVE, dst, src, &cmd);
        if (r == KILN_OK) {
            cmd->u.copy.dst_sub = dst_sub;
            cmd->u.copy.src_sub = src_sub;
            kq_submit(&ctx->q, cmd); /* with the references */
            return r;
        }
    }
    kres_unref(&dst->base);
    kres_unref(&src->base);
    return r;
}

kiln_result kiln_resolve_subresource(kiln_context *ctx, kiln_resource dst, uint32_t dst_sub, kiln_resource src,
                                     uint32_t src_sub, kiln_format format)
{
    kiln_result r = resolve_subresource(ctx, dst, dst_sub, src, src_sub, format);
    if (ctx && ctx->dev->capture)
        kcap_resolve_subresource(ctx, dst, dst_sub, src, src_sub, format, r);
    return r;
}

/* ---- Map / Unmap ---- */

static kiln_result map(kiln_context *ctx, kiln_resource handle, uint32_t sub, kiln_map_type type,
                       uint32_t flags, kiln_mapped_subresource *out)
{
    static const char api[] = "kiln_map";
    if (out)
        memset(out, 0, sizeof *out);
    CTX_PREAMBLE();
    /* WRITE_DISCARD renames the resource to fresh storage that nothing
     * queued uses: the draws gathered so far keep the storages they
     * captured, so the scene stays open (an application mapping per-draw
     * constants this way keeps all its draws in one scene).
     * WRITE_NO_OVERWRITE leaves the bytes those draws read alone: the
     * scene stays open too, and its reads, queued later, are granted
     * beside the CPU's (kq_schedule_locked), unless the scene opened while
     * such a Map was open (a draw in it may follow that Map). Every other
     * Map follows the gathered draws. docs/queue.md, Map. */
    bool before = type == KILN_MAP_WRITE_NO_OVERWRITE && ctx->scene && !ctx->scene->mapped_at_open;
    if (type != KILN_MAP_WRITE_DISCARD && !before)
        KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_mapped is NULL");
    if (type < KILN_MAP_READ || type > KILN_MAP_WRITE_NO_OVERWRITE)
        return FAIL(KILN_E_INVALID_ARG, DESC_INVALID_ENUM, "map type %d", (int)type);
    if (flags & ~(uint32_t)KILN_MAP_FLAG_DO_NOT_WAIT)
        return FAIL(KILN_E_INVALID_ARG, MAP_FLAGS_INVALID, "map flags 0x%x", flags);
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, handle.id, KRES_TYPE_BUFFER, KRES_TYPE_TEXTURE2D, api, "resource", &r);
    if (!res)
        return r;
    bool reads = type == KILN_MAP_READ || type == KILN_MAP_READ_WRITE;
    bool writes = type != KILN_MAP_READ;
    if ((r = check_sub(dev, api, res, sub)) != KILN_OK)
        ;
    else if (res->usage == KILN_USAGE_DEFAULT || res->usage == KILN_USAGE_IMMUTABLE)
        r = FAIL(KILN_E_INVALID_ARG, MAP_USAGE, "only DYNAMIC and STAGING resources can be mapped");
    else if (res->usage == KILN_USAGE_DYNAMIC && reads)
        r = FAIL(KILN_E_INVALID_ARG, MAP_TYPE_USAGE, "DYNAMIC resources cannot be read by the CPU");
    else if (res->usage == KILN_USAGE_STAGING && type >= KILN_MAP_WRITE_DISCARD)
        r = FAIL(KILN_E_INVALID_ARG, MAP_TYPE_USAGE, "WRITE_DISCARD and WRITE_NO_OVERWRITE are for DYNAMIC resources");
    else if ((reads && !(res->cpu_access & KILN_CPU_ACCESS_READ)) ||
             (writes && !(res->cpu_access & KILN_CPU_ACCESS_WRITE)))
        r = FAIL(KILN_E_INVALID_ARG, MAP_TYPE_USAGE, "the resource was created without this CPU access");
    else if (type == KILN_MAP_WRITE_NO_OVERWRITE && res->base.type != KRES_TYPE_BUFFER)
        r = FAIL(KILN_E_INVALID_ARG, MAP_NO_OVERWRITE_TEXTURE, "WRITE_NO_OVERWRITE is for buffers");
    if (r == KILN_OK) {
        kiln_log_id lid = KILN_LOG_NONE;
        const kres_storage *retired;
        r = kq_map(&ctx->q, res, sub, type, (flags & KILN_MAP_FLAG_DO_NOT_WAIT) != 0, out, &retired,
                   &lid);
        if (r != KILN_OK && r != KILN_E_WAS_STILL_DRAWING)
            kb_fail(&dev->env, r, lid, api, "subresource %u", sub);
        if (r == KILN_OK && before)
            ctx->scene->before_maps = true;
        /* The open scene may now be all that keeps the old bytes: they
         * count in its size, and the next draw ends it at the budget. */
        if (retired && ctx->scene)
            kd_scene_retired(ctx->scene, retired);
    }
    kres_unref(&res->base);
    return r;
}

kiln_result kiln_map(kiln_context *ctx, kiln_resource resource, uint32_t sub, kiln_map_type type,
                     uint32_t flags, kiln_mapped_subresource *out)
{
    kiln_result r = map(ctx, resource, sub, type, flags, out);
    if (ctx && ctx->dev->capture)
        kcap_map(ctx, resource, sub, type, flags, out, r);
    return r;
}

static kiln_result unmap(kiln_context *ctx, kiln_resource handle, uint32_t sub)
{
    static const char api[] = "kiln_unmap";
    CTX_PREAMBLE();
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, handle.id, KRES_TYPE_BUFFER, KRES_TYPE_TEXTURE2D, api, "resource", &r);
    if (!res)
        return r;
    if ((r = check_sub(dev, api, res, sub)) == KILN_OK && kq_unmap(&ctx->q, res, sub) != KILN_OK)
        r = FAIL(KILN_E_INVALID_CALL, UNMAP_NOT_MAPPED, "subresource %u is not mapped", sub);
    kres_unref(&res->base);
    return r;
}

kiln_result kiln_unmap(kiln_context *ctx, kiln_resource resource, uint32_t sub)
{
    /* Captured: the mapped bytes are recorded before they are unmapped. */
    struct kcap_writer *w = ctx && ctx->dev->capture ? kcap_lock(ctx->dev) : NULL;
    bool recorded = w && kcap_unmap_pre(w, ctx, resource, sub);
    kiln_result r = unmap(ctx, resource, sub);
    if (w)
        kcap_unmap_post(w, ctx, resource, sub, recorded, r);
    return r;
}

static kiln_result flush(kiln_context *ctx)
{
    static const char api[] = "kiln_flush";
    CTX_PREAMBLE();
    (void)dev;
    /* Gathered draws, and the small commands batched behind them, reach
     * the scheduler here (or at any call that must follow them). */
    kiln_result r = ka_flush_scene(ctx, api);
    kq_flush(&ctx->q);
    return r;
}

kiln_result kiln_flush(kiln_context *ctx)
{
    kiln_result r = flush(ctx);
    if (ctx && ctx->dev->capture)
        kcap_context_call(ctx, KCAP_OP_FLUSH, r);
    return r;
}

static kiln_result finish(kiln_context *ctx)
{
    static const char api[] = "kiln_finish";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r = kq_finish(&ctx->q);
    if (r != KILN_OK)
        return FAIL(r, WOULD_DEADLOCK, "queued commands wait for a resource this thread keeps mapped");
    return KILN_OK;
}

kiln_result kiln_finish(kiln_context *ctx)
{
    kiln_result r = finish(ctx);
    if (ctx && ctx->dev->capture)
        kcap_context_call(ctx, KCAP_OP_FINISH, r);
    return r;
}
