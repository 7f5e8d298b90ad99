/* Pipeline state of a context (setters never queue), draws (validated,
 * captured into an immutable state block, gathered into a scene), and the
 * scene's submission as one command. */
#include "api.h"
#include "../resources/texel.h"
#include "../capture/capture.h"
#include "../driver/driver.h"

#include <string.h>

#define FAIL(code, id, ...) kb_fail(&dev->env, code, KILN_LOG_##id, api, __VA_ARGS__)
#define CTX_PREAMBLE()                                                                             \
    if (!ctx)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "context is NULL"); \
    kiln_device *dev = ctx->dev

typedef struct ka_pipeline {
    kres_pipe *layout, *vs, *gs, *ps, *rs, *dss, *bs;
    kres_resource *vb[KILN_MAX_VERTEX_BUFFERS];
    uint32_t vb_stride[KILN_MAX_VERTEX_BUFFERS], vb_offset[KILN_MAX_VERTEX_BUFFERS];
    kres_resource *ib;
    kiln_index_format ib_format;
    uint32_t ib_offset;
    kiln_topology topology;
    kres_resource *vs_cb[KILN_MAX_CONSTANT_BUFFERS], *ps_cb[KILN_MAX_CONSTANT_BUFFERS];
    kres_view *srv[KILN_MAX_SHADER_RESOURCES]; /* the pixel stage's */
    kres_pipe *samp[KILN_MAX_SAMPLERS];
    kres_view *vs_srv[KILN_MAX_SHADER_RESOURCES]; /* the vertex stage's */
    kres_pipe *vs_samp[KILN_MAX_SAMPLERS];
    kres_view *gs_srv[KILN_MAX_SHADER_RESOURCES]; /* the geometry stage's */
    kres_pipe *gs_samp[KILN_MAX_SAMPLERS];
    /* The highest bound slot + 1 of each array above: draws capture,
     * compare and check those slots only (D3D10's 128 views cost a draw
     * nothing when it binds two). */
    uint32_t n_vs_cb, n_ps_cb, nsrv, nsamp, n_vs_srv, n_vs_samp, n_gs_srv, n_gs_samp;
    kiln_viewport vp;
    bool vp_set;
    kiln_rect scissor;
    kres_view *rtv[KILN_MAX_RENDER_TARGETS];
    uint32_t nrt;
    kres_view *dsv;
    float blend_factor[4];
    uint32_t stencil_ref;
    /* Stream-output targets, and where the next draw writes each: the
     * offset given to kiln_so_set_targets until a draw streams out, then
     * KILN_SO_APPEND (later draws continue where it ended). */
    kres_resource *so[KILN_SO_BUFFER_SLOTS];
    uint32_t so_offset[KILN_SO_BUFFER_SLOTS];
    kd_state *block; /* the last state block, reused while nothing changes */
    /* Draws re-check the bound objects only when something changed: bit 0
     * (non-indexed) and bit 1 (indexed) say the objects passed at
     * destroy_epoch `checked_epoch` and no setter ran since. */
    uint32_t checked;
    uint64_t checked_epoch;
    /* Set with `checked`: the last vertex a non-indexed draw may read from
     * every per-vertex element's buffer (UINT64_MAX: no limit), and
     * whether each draw runs the full check instead (per-instance
     * elements, or an element whose buffer holds no vertex). A draw past
     * max_vertex runs it too, for its message. */
    uint64_t max_vertex;
    bool full_check;
    /* The open scene's newest bind record holds what is bound now, for
     * non-indexed (bit 0) and indexed (bit 1) draws: no setter ran since
     * it was captured or matched, and nothing bound is DYNAMIC (a Map may
     * rename those at any time). */
    uint32_t bind_fresh;
} ka_pipeline;

static void set_obj(kres_object **slot, kres_object *o)
{
    if (*slot)
        kres_unref(*slot);
    *slot = o; /* reference passed in */
}

#define SET(slot, obj) set_obj((kres_object **)&(slot), (kres_object *)(obj))

static void dirty(ka_pipeline *p)
{
    kd_state_unref(p->block);
    p->block = NULL;
    p->checked = 0;
    p->bind_fresh = 0;
}

kiln_result ka_pipeline_init(kiln_context *ctx)
{
    ctx->pipe = kb_calloc(&ctx->dev->env, sizeof(ka_pipeline));
    if (!ctx->pipe)
        return KILN_E_OUT_OF_MEMORY;
    for (int c = 0; c < 4; c++)
        ctx->pipe->blend_factor[c] = 1.0f;
    return KILN_OK;
}

void ka_pipeline_fini(kiln_context *ctx)
{
    ka_pipeline *p = ctx->pipe;
    if (!p)
        return;
    if (ctx->scene) {
        kd_scene_free(ctx->scene);
        ctx->scene = NULL;
    }
    SET(p->layout, NULL);
    SET(p->vs, NULL);
    SET(p->gs, NULL);
    SET(p->ps, NULL);
    SET(p->rs, NULL);
    SET(p->dss, NULL);
    SET(p->bs, NULL);
    SET(p->ib, NULL);
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
        SET(p->vb[i], NULL);
    for (int i = 0; i < KILN_MAX_CONSTANT_BUFFERS; i++) {
        SET(p->vs_cb[i], NULL);
        SET(p->ps_cb[i], NULL);
    }
    for (int i = 0; i < KILN_MAX_SHADER_RESOURCES; i++) {
        SET(p->srv[i], NULL);
        SET(p->vs_srv[i], NULL);
        SET(p->gs_srv[i], NULL);
    }
    for (int i = 0; i < KILN_MAX_SAMPLERS; i++) {
        SET(p->samp[i], NULL);
        SET(p->vs_samp[i], NULL);
        SET(p->gs_samp[i], NULL);
    }
    for (int i = 0; i < KILN_MAX_RENDER_TARGETS; i++)
        SET(p->rtv[i], NULL);
    SET(p->dsv, NULL);
    for (int i = 0; i < KILN_SO_BUFFER_SLOTS; i++)
        SET(p->so[i], NULL);
    dirty(p);
    kb_free(&ctx->dev->env, p, sizeof *p);
    ctx->pipe = NULL;
}

void ka_pipeline_scalars(const kiln_context *ctx, ka_scalar_state *out)
{
    const ka_pipeline *p = ctx->pipe;
    memset(out, 0, sizeof *out);
    out->topology = p->topology;
    out->viewport_set = p->vp_set;
    out->viewport = p->vp;
    out->scissor = p->scissor;
    memcpy(out->blend_factor, p->blend_factor, sizeof out->blend_factor);
    out->stencil_ref = p->stencil_ref;
    out->index_format = p->ib_format;
    out->index_offset = p->ib_offset;
    memcpy(out->vb_stride, p->vb_stride, sizeof out->vb_stride);
    memcpy(out->vb_offset, p->vb_offset, sizeof out->vb_offset);
}

/* Looks up a handle for binding: 0 unbinds (NULL, OK). */
static kiln_result bind_get(kiln_device *dev, const char *api, uint32_t id, kres_type type,
                            const char *what, kres_object **out)
{
    *out = NULL;
    if (id == 0)
        return KILN_OK;
    kiln_log_id lid;
    *out = kres_handles_get(&dev->handles, id, type, type, &lid);
    return *out ? KILN_OK : ka_handle_fail(dev, api, what, lid);
}

static kiln_result set_pipe(kiln_context *ctx, const char *api, uint32_t id, kres_type type,
                            const char *what, kres_pipe **slot)
{
    kiln_device *dev = ctx->dev;
    kres_object *o;
    kiln_result r = bind_get(dev, api, id, type, what, &o);
    if (r != KILN_OK)
        return r;
    SET(*slot, o);
    dirty(ctx->pipe);
    return KILN_OK;
}

static kiln_result ia_set_input_layout(kiln_context *ctx, kiln_input_layout l)
{
    static const char api[] = "kiln_ia_set_input_layout";
    CTX_PREAMBLE();
    (void)dev;
    return set_pipe(ctx, api, l.id, KRES_TYPE_LAYOUT, "input layout", &ctx->pipe->layout);
}

kiln_result kiln_ia_set_input_layout(kiln_context *ctx, kiln_input_layout l)
{
    kiln_result r = ia_set_input_layout(ctx, l);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_IA_SET_INPUT_LAYOUT, l.id, r);
    return r;
}

static kiln_result vs_set_shader(kiln_context *ctx, kiln_vertex_shader s)
{
    static const char api[] = "kiln_vs_set_shader";
    CTX_PREAMBLE();
    (void)dev;
    return set_pipe(ctx, api, s.id, KRES_TYPE_VS, "vertex shader", &ctx->pipe->vs);
}

kiln_result kiln_vs_set_shader(kiln_context *ctx, kiln_vertex_shader s)
{
    kiln_result r = vs_set_shader(ctx, s);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_VS_SET_SHADER, s.id, r);
    return r;
}

static kiln_result gs_set_shader(kiln_context *ctx, kiln_geometry_shader s)
{
    static const char api[] = "kiln_gs_set_shader";
    CTX_PREAMBLE();
    (void)dev;
    return set_pipe(ctx, api, s.id, KRES_TYPE_GS, "geometry shader", &ctx->pipe->gs);
}

kiln_result kiln_gs_set_shader(kiln_context *ctx, kiln_geometry_shader s)
{
    kiln_result r = gs_set_shader(ctx, s);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_GS_SET_SHADER, s.id, r);
    return r;
}

static kiln_result get_buffers(kiln_device *dev, const char *api, uint32_t start, uint32_t count,
                               uint32_t max, const kiln_buffer *bufs, uint32_t bind, kres_resource **out);

static kiln_result so_set_targets(kiln_context *ctx, uint32_t count, const kiln_buffer *bufs, const uint32_t *offsets)
{
    static const char api[] = "kiln_so_set_targets";
    CTX_PREAMBLE();
    for (uint32_t i = 0; offsets && i < count && i < KILN_SO_BUFFER_SLOTS; i++)
        if (offsets[i] != KILN_SO_APPEND && offsets[i] % 4)
            return FAIL(KILN_E_INVALID_ARG, SO_OFFSET, "offset %u of slot %u", offsets[i], i);
    kres_resource *got[KILN_SO_BUFFER_SLOTS] = {0};
    kiln_result r = get_buffers(dev, api, 0, count, KILN_SO_BUFFER_SLOTS, bufs, KILN_BIND_STREAM_OUTPUT, got);
    if (r != KILN_OK)
        return r;
    bool any = false, twice = false;
    for (uint32_t i = 0; i < count; i++) {
        any |= got[i] != NULL;
        for (uint32_t k = 0; k < i; k++)
            twice |= got[i] && got[i] == got[k];
    }
    if (twice || (any && !(dev->queue.backend->caps & KQ_BACKEND_STREAM_OUTPUT))) {
        for (uint32_t i = 0; i < count; i++)
            if (got[i])
                kres_unref(&got[i]->base);
        if (twice)
            return FAIL(KILN_E_INVALID_ARG, SO_TARGET_DUPLICATE, "a buffer is bound to two slots");
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no stream output", dev->queue.backend->name);
    }
    ka_pipeline *p = ctx->pipe;
    for (uint32_t i = 0; i < KILN_SO_BUFFER_SLOTS; i++) {
        SET(p->so[i], i < count ? got[i] : NULL);
        p->so_offset[i] = i < count && offsets ? offsets[i] : 0;
    }
    dirty(p);
    return KILN_OK;
}

kiln_result kiln_so_set_targets(kiln_context *ctx, uint32_t count, const kiln_buffer *bufs, const uint32_t *offsets)
{
    kiln_result r = so_set_targets(ctx, count, bufs, offsets);
    if (ctx && ctx->dev->capture)
        kcap_so_set_targets(ctx, count, bufs, offsets, r);
    return r;
}

static kiln_result ps_set_shader(kiln_context *ctx, kiln_pixel_shader s)
{
    static const char api[] = "kiln_ps_set_shader";
    CTX_PREAMBLE();
    (void)dev;
    return set_pipe(ctx, api, s.id, KRES_TYPE_PS, "pixel shader", &ctx->pipe->ps);
}

kiln_result kiln_ps_set_shader(kiln_context *ctx, kiln_pixel_shader s)
{
    kiln_result r = ps_set_shader(ctx, s);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_PS_SET_SHADER, s.id, r);
    return r;
}

static kiln_result rs_set_state(kiln_context *ctx, kiln_rasterizer_state s)
{
    static const char api[] = "kiln_rs_set_state";
    CTX_PREAMBLE();
    (void)dev;
    return set_pipe(ctx, api, s.id, KRES_TYPE_RS, "rasterizer state", &ctx->pipe->rs);
}

kiln_result kiln_rs_set_state(kiln_context *ctx, kiln_rasterizer_state s)
{
    kiln_result r = rs_set_state(ctx, s);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_RS_SET_STATE, s.id, r);
    return r;
}

static kiln_result om_set_depth_stencil_state(kiln_context *ctx, kiln_depth_stencil_state s, uint32_t ref)
{
    static const char api[] = "kiln_om_set_depth_stencil_state";
    CTX_PREAMBLE();
    (void)dev;
    kiln_result r = set_pipe(ctx, api, s.id, KRES_TYPE_DSS, "depth-stencil state", &ctx->pipe->dss);
    if (r == KILN_OK)
        ctx->pipe->stencil_ref = ref;
    return r;
}

kiln_result kiln_om_set_depth_stencil_state(kiln_context *ctx, kiln_depth_stencil_state s, uint32_t ref)
{
    kiln_result r = om_set_depth_stencil_state(ctx, s, ref);
    if (ctx && ctx->dev->capture)
        kcap_om_set_depth_stencil_state(ctx, s, ref, r);
    return r;
}

static kiln_result om_set_blend_state(kiln_context *ctx, kiln_blend_state s, const float factor[4])
{
    static const char api[] = "kiln_om_set_blend_state";
    CTX_PREAMBLE();
    (void)dev;
    kiln_result r = set_pipe(ctx, api, s.id, KRES_TYPE_BS, "blend state", &ctx->pipe->bs);
    if (r == KILN_OK)
        for (int c = 0; c < 4; c++)
            ctx->pipe->blend_factor[c] = factor ? factor[c] : 1.0f;
    return r;
}

kiln_result kiln_om_set_blend_state(kiln_context *ctx, kiln_blend_state s, const float factor[4])
{
    kiln_result r = om_set_blend_state(ctx, s, factor);
    if (ctx && ctx->dev->capture)
        kcap_om_set_blend_state(ctx, s, factor, r);
    return r;
}

static kiln_result ia_set_topology(kiln_context *ctx, kiln_topology t)
{
    static const char api[] = "kiln_ia_set_topology";
    CTX_PREAMBLE();
    if ((unsigned)t > KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ)
        return FAIL(KILN_E_INVALID_ARG, DESC_INVALID_ENUM, "topology %d", (int)t);
    ctx->pipe->topology = t;
    dirty(ctx->pipe);
    return KILN_OK;
}

kiln_result kiln_ia_set_topology(kiln_context *ctx, kiln_topology t)
{
    kiln_result r = ia_set_topology(ctx, t);
    if (ctx && ctx->dev->capture)
        kcap_ia_set_topology(ctx, t, r);
    return r;
}

/* Buffers for a bind slot range: all looked up before any is bound, so a
 * failing call changes nothing. */
static kiln_result get_buffers(kiln_device *dev, const char *api, uint32_t start, uint32_t count,
                               uint32_t max, const kiln_buffer *bufs, uint32_t bind, kres_resource **out)
{
    if (start > max || count > max - start)
        return FAIL(KILN_E_INVALID_ARG, BIND_RANGE, "slots [%u, %u) of %u", start, start + count, max);
    if (count && !bufs)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "buffers is NULL");
    for (uint32_t i = 0; i < count; i++) {
        kres_object *o;
        kiln_result r = bind_get(dev, api, bufs[i].id, KRES_TYPE_BUFFER, "buffer", &o);
        if (r == KILN_OK && o && !(kres_as_resource(o)->bind_flags & bind))
            r = FAIL(KILN_E_INVALID_ARG, BIND_USAGE, "buffer %u lacks bind flag 0x%x", i, bind);
        if (r != KILN_OK) {
            if (o && r != KILN_OK)
                kres_unref(o);
            for (uint32_t k = 0; k < i; k++)
                if (out[k])
                    kres_unref(&out[k]->base);
            return r;
        }
        out[i] = o ? kres_as_resource(o) : NULL;
    }
    return KILN_OK;
}

static kiln_result ia_set_vertex_buffers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_buffer *bufs,
                                         const uint32_t *strides, const uint32_t *offsets)
{
    static const char api[] = "kiln_ia_set_vertex_buffers";
    CTX_PREAMBLE();
    if (count && (!strides || !offsets))
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "strides or offsets is NULL");
    kres_resource *got[KILN_MAX_VERTEX_BUFFERS] = {0};
    kiln_result r = get_buffers(dev, api, start, count, KILN_MAX_VERTEX_BUFFERS, bufs, KILN_BIND_VERTEX_BUFFER, got);
    if (r != KILN_OK)
        return r;
    ka_pipeline *p = ctx->pipe;
    for (uint32_t i = 0; i < count; i++) {
        SET(p->vb[start + i], got[i]);
        p->vb_stride[start + i] = strides[i];
        p->vb_offset[start + i] = offsets[i];
    }
    dirty(p);
    return KILN_OK;
}

kiln_result kiln_ia_set_vertex_buffers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_buffer *bufs,
                                       const uint32_t *strides, const uint32_t *offsets)
{
    kiln_result r = ia_set_vertex_buffers(ctx, start, count, bufs, strides, offsets);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_IA_SET_VERTEX_BUFFERS, start, count, bufs, strides, offsets, r);
    return r;
}

static kiln_result ia_set_index_buffer(kiln_context *ctx, kiln_buffer buf, kiln_index_format format, uint32_t offset)
{
    static const char api[] = "kiln_ia_set_index_buffer";
    CTX_PREAMBLE();
    if ((unsigned)format > KILN_INDEX_UINT32)
        return FAIL(KILN_E_INVALID_ARG, DESC_INVALID_ENUM, "index format %d", (int)format);
    if (offset % (format == KILN_INDEX_UINT16 ? 2u : 4u))
        return FAIL(KILN_E_INVALID_ARG, BIND_RANGE, "offset %u is not a multiple of the index size", offset);
    kres_resource *got[1] = {0};
    kiln_result r = get_buffers(dev, api, 0, 1, 1, &buf, KILN_BIND_INDEX_BUFFER, got);
    if (r != KILN_OK)
        return r;
    SET(ctx->pipe->ib, got[0]);
    ctx->pipe->ib_format = format;
    ctx->pipe->ib_offset = offset;
    dirty(ctx->pipe);
    return KILN_OK;
}

kiln_result kiln_ia_set_index_buffer(kiln_context *ctx, kiln_buffer buf, kiln_index_format format, uint32_t offset)
{
    kiln_result r = ia_set_index_buffer(ctx, buf, format, offset);
    if (ctx && ctx->dev->capture)
        kcap_ia_set_index_buffer(ctx, buf, format, offset, r);
    return r;
}

/* The highest non-empty slot + 1 of slots [0, n). */
#define HIGHEST(slots, n)                                                                          \
    do {                                                                                           \
        while ((n) && !(slots)[(n) - 1])                                                           \
            (n)--;                                                                                 \
    } while (0)

static uint32_t bound_end(uint32_t n, uint32_t start, uint32_t count)
{
    return start + count > n ? start + count : n;
}

static kiln_result set_cbs(kiln_context *ctx, const char *api, uint32_t start, uint32_t count,
                           const kiln_buffer *bufs, kres_resource **slots, uint32_t *n)
{
    kiln_device *dev = ctx->dev;
    kres_resource *got[KILN_MAX_CONSTANT_BUFFERS] = {0};
    kiln_result r = get_buffers(dev, api, start, count, KILN_MAX_CONSTANT_BUFFERS, bufs, KILN_BIND_CONSTANT_BUFFER, got);
    if (r != KILN_OK)
        return r;
    for (uint32_t i = 0; i < count; i++)
        SET(slots[start + i], got[i]);
    *n = bound_end(*n, start, count);
    HIGHEST(slots, *n);
    dirty(ctx->pipe);
    return KILN_OK;
}

static kiln_result vs_set_constant_buffers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_buffer *bufs)
{
    static const char api[] = "kiln_vs_set_constant_buffers";
    CTX_PREAMBLE();
    (void)dev;
    return set_cbs(ctx, api, start, count, bufs, ctx->pipe->vs_cb, &ctx->pipe->n_vs_cb);
}

kiln_result kiln_vs_set_constant_buffers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_buffer *bufs)
{
    kiln_result r = vs_set_constant_buffers(ctx, start, count, bufs);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_VS_SET_CONSTANT_BUFFERS, start, count, bufs, NULL, NULL, r);
    return r;
}

static kiln_result ps_set_constant_buffers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_buffer *bufs)
{
    static const char api[] = "kiln_ps_set_constant_buffers";
    CTX_PREAMBLE();
    (void)dev;
    return set_cbs(ctx, api, start, count, bufs, ctx->pipe->ps_cb, &ctx->pipe->n_ps_cb);
}

kiln_result kiln_ps_set_constant_buffers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_buffer *bufs)
{
    kiln_result r = ps_set_constant_buffers(ctx, start, count, bufs);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_PS_SET_CONSTANT_BUFFERS, start, count, bufs, NULL, NULL, r);
    return r;
}

/* The stages that bind views and samplers. */
typedef enum stage { STAGE_PS, STAGE_VS, STAGE_GS } stage;
static const char *const stage_names[] = {"pixel", "vertex", "geometry"};

/* Whether the backend can read a view in `slot` of a stage: osmesa has
 * no vertex- or geometry-stage views and 16 pixel-stage slots (GL
 * texture unit N is view N sampled with sampler N). */
static kiln_result backend_slot(kiln_device *dev, const char *api, stage st, uint32_t slot, const char *what)
{
    const kq_backend *b = dev->queue.backend;
    bool vs = st != STAGE_PS;
    if (vs && !(b->caps & KQ_BACKEND_VS_RESOURCES))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no %s-stage %s", b->name,
                    stage_names[st], what);
    if (!vs && b->srv_slots && slot >= b->srv_slots)
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has %u %s slots; slot %u is past them",
                    b->name, b->srv_slots, what, slot);
    return KILN_OK;
}

static kiln_result set_srvs(kiln_context *ctx, const char *api, stage st, uint32_t start, uint32_t count,
                            const kiln_srv *views)
{
    kiln_device *dev = ctx->dev;
    if (start > KILN_MAX_SHADER_RESOURCES || count > KILN_MAX_SHADER_RESOURCES - start)
        return FAIL(KILN_E_INVALID_ARG, BIND_RANGE, "slots [%u, %u) of %u", start, start + count,
                    KILN_MAX_SHADER_RESOURCES);
    if (count && !views)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "views is NULL");
    for (uint32_t i = 0; i < count; i++) {
        kiln_result r = views[i].id ? backend_slot(dev, api, st, start + i, "shader-resource") : KILN_OK;
        if (r != KILN_OK)
            return r;
    }
    kres_view *got[KILN_MAX_SHADER_RESOURCES] = {0};
    for (uint32_t i = 0; i < count; i++) {
        kiln_result r = KILN_OK;
        if (views[i].id)
            got[i] = ka_get_view(dev, views[i].id, KRES_TYPE_SRV, api, &r);
        if (r != KILN_OK) {
            for (uint32_t k = 0; k < i; k++)
                if (got[k])
                    kres_unref(&got[k]->base);
            return r;
        }
    }
    ka_pipeline *p = ctx->pipe;
    kres_view **slots = st == STAGE_VS ? p->vs_srv : st == STAGE_GS ? p->gs_srv : p->srv;
    uint32_t *n = st == STAGE_VS ? &p->n_vs_srv : st == STAGE_GS ? &p->n_gs_srv : &p->nsrv;
    for (uint32_t i = 0; i < count; i++)
        SET(slots[start + i], got[i]);
    *n = bound_end(*n, start, count);
    HIGHEST(slots, *n);
    dirty(p);
    return KILN_OK;
}

static kiln_result ps_set_shader_resources(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_srv *views)
{
    static const char api[] = "kiln_ps_set_shader_resources";
    CTX_PREAMBLE();
    (void)dev;
    return set_srvs(ctx, api, STAGE_PS, start, count, views);
}

kiln_result kiln_ps_set_shader_resources(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_srv *views)
{
    kiln_result r = ps_set_shader_resources(ctx, start, count, views);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_PS_SET_SHADER_RESOURCES, start, count, views, NULL, NULL, r);
    return r;
}

static kiln_result vs_set_shader_resources(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_srv *views)
{
    static const char api[] = "kiln_vs_set_shader_resources";
    CTX_PREAMBLE();
    (void)dev;
    return set_srvs(ctx, api, STAGE_VS, start, count, views);
}

kiln_result kiln_vs_set_shader_resources(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_srv *views)
{
    kiln_result r = vs_set_shader_resources(ctx, start, count, views);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_VS_SET_SHADER_RESOURCES, start, count, views, NULL, NULL, r);
    return r;
}

static kiln_result set_samplers(kiln_context *ctx, const char *api, stage st, uint32_t start, uint32_t count,
                                const kiln_sampler *samplers)
{
    kiln_device *dev = ctx->dev;
    if (start > KILN_MAX_SAMPLERS || count > KILN_MAX_SAMPLERS - start)
        return FAIL(KILN_E_INVALID_ARG, BIND_RANGE, "slots [%u, %u) of %u", start, start + count, KILN_MAX_SAMPLERS);
    if (count && !samplers)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "samplers is NULL");
    for (uint32_t i = 0; st != STAGE_PS && i < count; i++) {
        kiln_result r = samplers[i].id ? backend_slot(dev, api, st, start + i, "sampler") : KILN_OK;
        if (r != KILN_OK)
            return r;
    }
    kres_object *got[KILN_MAX_SAMPLERS] = {0};
    for (uint32_t i = 0; i < count; i++) {
        kiln_result r = bind_get(dev, api, samplers[i].id, KRES_TYPE_SAMPLER, "sampler", &got[i]);
        if (r != KILN_OK) {
            for (uint32_t k = 0; k < i; k++)
                if (got[k])
                    kres_unref(got[k]);
            return r;
        }
    }
    ka_pipeline *p = ctx->pipe;
    kres_pipe **slots = st == STAGE_VS ? p->vs_samp : st == STAGE_GS ? p->gs_samp : p->samp;
    uint32_t *n = st == STAGE_VS ? &p->n_vs_samp : st == STAGE_GS ? &p->n_gs_samp : &p->nsamp;
    for (uint32_t i = 0; i < count; i++)
        SET(slots[start + i], got[i]);
    *n = bound_end(*n, start, count);
    HIGHEST(slots, *n);
    dirty(p);
    return KILN_OK;
}

static kiln_result ps_set_samplers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_sampler *samplers)
{
    static const char api[] = "kiln_ps_set_samplers";
    CTX_PREAMBLE();
    (void)dev;
    return set_samplers(ctx, api, STAGE_PS, start, count, samplers);
}

kiln_result kiln_ps_set_samplers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_sampler *samplers)
{
    kiln_result r = ps_set_samplers(ctx, start, count, samplers);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_PS_SET_SAMPLERS, start, count, samplers, NULL, NULL, r);
    return r;
}

static kiln_result vs_set_samplers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_sampler *samplers)
{
    static const char api[] = "kiln_vs_set_samplers";
    CTX_PREAMBLE();
    (void)dev;
    return set_samplers(ctx, api, STAGE_VS, start, count, samplers);
}

kiln_result kiln_vs_set_samplers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_sampler *samplers)
{
    kiln_result r = vs_set_samplers(ctx, start, count, samplers);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_VS_SET_SAMPLERS, start, count, samplers, NULL, NULL, r);
    return r;
}

static kiln_result gs_set_shader_resources(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_srv *views)
{
    static const char api[] = "kiln_gs_set_shader_resources";
    CTX_PREAMBLE();
    (void)dev;
    return set_srvs(ctx, api, STAGE_GS, start, count, views);
}

kiln_result kiln_gs_set_shader_resources(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_srv *views)
{
    kiln_result r = gs_set_shader_resources(ctx, start, count, views);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_GS_SET_SHADER_RESOURCES, start, count, views, NULL, NULL, r);
    return r;
}

static kiln_result gs_set_samplers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_sampler *samplers)
{
    static const char api[] = "kiln_gs_set_samplers";
    CTX_PREAMBLE();
    (void)dev;
    return set_samplers(ctx, api, STAGE_GS, start, count, samplers);
}

kiln_result kiln_gs_set_samplers(kiln_context *ctx, uint32_t start, uint32_t count, const kiln_sampler *samplers)
{
    kiln_result r = gs_set_samplers(ctx, start, count, samplers);
    if (ctx && ctx->dev->capture)
        kcap_set_slots(ctx, KCAP_OP_GS_SET_SAMPLERS, start, count, samplers, NULL, NULL, r);
    return r;
}

static kiln_result rs_set_viewport(kiln_context *ctx, const kiln_viewport *vp)
{
    static const char api[] = "kiln_rs_set_viewport";
    CTX_PREAMBLE();
    if (!vp)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "viewport is NULL");
    if (!(vp->width >= 0.0f && vp->height >= 0.0f && vp->width <= 16384.0f && vp->height <= 16384.0f &&
          vp->x >= -32768.0f && vp->y >= -32768.0f && vp->x <= 32767.0f && vp->y <= 32767.0f &&
          vp->min_depth >= 0.0f && vp->max_depth <= 1.0f && vp->min_depth <= vp->max_depth))
        return FAIL(KILN_E_INVALID_ARG, STATE_DESC, "viewport out of D3D10's ranges");
    ctx->pipe->vp = *vp;
    ctx->pipe->vp_set = true;
    dirty(ctx->pipe);
    return KILN_OK;
}

kiln_result kiln_rs_set_viewport(kiln_context *ctx, const kiln_viewport *vp)
{
    kiln_result r = rs_set_viewport(ctx, vp);
    if (ctx && ctx->dev->capture)
        kcap_rs_set_viewport(ctx, vp, r);
    return r;
}

static kiln_result rs_set_scissor_rect(kiln_context *ctx, const kiln_rect *rect)
{
    static const char api[] = "kiln_rs_set_scissor_rect";
    CTX_PREAMBLE();
    if (!rect)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "rect is NULL");
    ctx->pipe->scissor = *rect;
    dirty(ctx->pipe);
    return KILN_OK;
}

kiln_result kiln_rs_set_scissor_rect(kiln_context *ctx, const kiln_rect *rect)
{
    kiln_result r = rs_set_scissor_rect(ctx, rect);
    if (ctx && ctx->dev->capture)
        kcap_rs_set_scissor_rect(ctx, rect, r);
    return r;
}

static bool same_views(const kd_scene *s, const ka_pipeline *p)
{
    if (s->nrt != p->nrt || s->dsv != p->dsv)
        return false;
    for (uint32_t i = 0; i < p->nrt; i++)
        if (s->rtv[i] != p->rtv[i])
            return false;
    return true;
}

static kiln_result om_set_render_targets(kiln_context *ctx, uint32_t count, const kiln_rtv *views, kiln_dsv ds)
{
    static const char api[] = "kiln_om_set_render_targets";
    CTX_PREAMBLE();
    if (count > KILN_MAX_RENDER_TARGETS)
        return FAIL(KILN_E_INVALID_ARG, BIND_RANGE, "%u render targets (at most %d)", count, KILN_MAX_RENDER_TARGETS);
    if (count && !views)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "views is NULL");
    kres_view *got[KILN_MAX_RENDER_TARGETS] = {0}, *dsv = NULL;
    kiln_result r = KILN_OK;
    uint32_t i = 0;
    for (; i < count && r == KILN_OK; i++)
        if (views[i].id)
            got[i] = ka_get_view(dev, views[i].id, KRES_TYPE_RTV, api, &r);
    if (r == KILN_OK && ds.id)
        dsv = ka_get_view(dev, ds.id, KRES_TYPE_DSV, api, &r);
    /* All bound views have one size (D3D10). */
    uint32_t w = 0, h = 0, samples = 0;
    for (uint32_t k = 0; k < count + 1 && r == KILN_OK; k++) {
        kres_view *v = k < count ? got[k] : dsv;
        if (!v)
            continue;
        const kres_subresource *sub = kres_plane_sub(v->res, v->first_mip, v->first_slice);
        if (w && (sub->width != w || sub->height != h))
            r = FAIL(KILN_E_INVALID_ARG, RT_MISMATCH, "view %u is %ux%u, the first is %ux%u", k, sub->width,
                     sub->height, w, h);
        else if (samples && v->res->samples != samples)
            r = FAIL(KILN_E_INVALID_ARG, RT_SAMPLES_MISMATCH, "view %u has %u samples, the first %u", k,
                     v->res->samples, samples);
        w = sub->width;
        h = sub->height;
        samples = v->res->samples;
    }
    if (r != KILN_OK) {
        for (uint32_t k = 0; k < KILN_MAX_RENDER_TARGETS; k++)
            if (got[k])
                kres_unref(&got[k]->base);
        if (dsv)
            kres_unref(&dsv->base);
        return r;
    }
    ka_pipeline *p = ctx->pipe;
    for (uint32_t k = 0; k < KILN_MAX_RENDER_TARGETS; k++)
        SET(p->rtv[k], k < count ? got[k] : NULL);
    SET(p->dsv, dsv);
    p->nrt = count;
    dirty(p);
    return KILN_OK;
}

kiln_result kiln_om_set_render_targets(kiln_context *ctx, uint32_t count, const kiln_rtv *views, kiln_dsv ds)
{
    kiln_result r = om_set_render_targets(ctx, count, views, ds);
    if (ctx && ctx->dev->capture)
        kcap_om_set_render_targets(ctx, count, views, ds, r);
    return r;
}

/* ---- state blocks ---- */

static kiln_stencil_op sop(kiln_stencil_op o) { return o ? o : KILN_STENCIL_OP_KEEP; }
static uint32_t mask8(uint32_t m) { return m == KILN_MASK_DEFAULT ? 0xffu : m == KILN_MASK_NONE ? 0u : m & 0xffu; }

/* A depth-only draw (D3D10's NULL pixel shader with depth or stencil on):
 * no pixel shader, a depth-stencil view bound and its state testing depth
 * or stencil. It rasterizes, tests and writes depth/stencil, and writes no
 * color. */
static bool depth_only(const ka_pipeline *p)
{
    if (p->ps || !p->dsv)
        return false;
    if (!p->dss)
        return true; /* the default state tests depth */
    return !p->dss->u.dss.depth_disable || p->dss->u.dss.stencil_enable;
}

static kd_state *build_state(kiln_context *ctx)
{
    ka_pipeline *p = ctx->pipe;
    const kb_env *env = &ctx->dev->env;
    kd_state *s = kb_calloc(env, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    s->env = env;
    const kiln_vertex_shader_desc *vs = &p->vs->u.vs;
    /* none: depth only, or rasterization off (stream output only) */
    const kiln_pixel_shader_desc ps0 = {0};
    const kiln_pixel_shader_desc *ps = p->ps ? &p->ps->u.ps : &ps0;
    s->raster = p->ps != NULL || depth_only(p);
    s->vs = vs->fn;
    s->vs_user = vs->user;
    s->vs_inputs = vs->num_inputs;
    s->vs_varyings = vs->num_varyings;
    s->ps = ps->fn;
    s->ps_user = ps->user;
    s->ps_varyings = ps->num_varyings;
    s->ps_outputs = ps->num_outputs;
    s->ps_flags = ps->flags;
    s->ps_reads = ps->read_mask ? ps->read_mask : kd_varying_components(ps->num_varyings);
    s->vs_glsl = vs->glsl;
    s->ps_glsl = ps->glsl;
    if (p->gs) {
        const kiln_geometry_shader_desc *gs = &p->gs->u.gs.d;
        s->so = p->gs->u.gs.so;
        s->gs = gs->fn; /* NULL: a stream-output pass-through */
        s->gs_user = gs->user;
        s->gs_output = gs->output;
        s->gs_max_vertices = gs->max_vertices;
        s->gs_varyings = gs->num_varyings;
        s->gs_flags = gs->flags;
    }
    const kiln_input_layout_desc *l = &p->layout->u.layout;
    s->nelems = l->num_elements;
    for (uint32_t i = 0; i < l->num_elements; i++)
        s->elems[i] = (kd_element){l->elements[i].format, l->elements[i].slot, l->elements[i].offset,
                                   l->elements[i].per_instance, l->elements[i].instance_step_rate};
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++) {
        if (p->vb[i])
            kres_ref(&p->vb[i]->base);
        s->vb[i] = p->vb[i];
        s->vb_stride[i] = p->vb_stride[i];
        s->vb_offset[i] = p->vb_offset[i];
    }
    if (p->ib)
        kres_ref(&p->ib->base);
    s->ib = p->ib;
    s->ib_format = p->ib_format;
    s->ib_offset = p->ib_offset;
    s->topology = p->topology;
    /* Slots up to the highest bound one (the rest stay empty: calloc). */
    s->n_vs_cb = p->n_vs_cb;
    s->n_ps_cb = p->n_ps_cb;
    s->nsrv = p->nsrv;
    s->nsamp = p->nsamp;
    s->n_vs_srv = p->n_vs_srv;
    s->n_vs_samp = p->n_vs_samp;
    s->n_gs_srv = p->n_gs_srv;
    s->n_gs_samp = p->n_gs_samp;
    for (uint32_t i = 0; i < p->n_vs_cb; i++)
        if ((s->vs_cb[i] = p->vs_cb[i]))
            kres_ref(&s->vs_cb[i]->base);
    for (uint32_t i = 0; i < p->n_ps_cb; i++)
        if ((s->ps_cb[i] = p->ps_cb[i]))
            kres_ref(&s->ps_cb[i]->base);
    for (uint32_t i = 0; i < p->nsrv; i++)
        if ((s->srv[i] = p->srv[i]))
            kres_ref(&s->srv[i]->base);
    for (uint32_t i = 0; i < p->n_vs_srv; i++)
        if ((s->vs_srv[i] = p->vs_srv[i]))
            kres_ref(&s->vs_srv[i]->base);
    for (uint32_t i = 0; i < p->n_gs_srv; i++)
        if ((s->gs_srv[i] = p->gs_srv[i]))
            kres_ref(&s->gs_srv[i]->base);
    /* Every sampler slot resolved (empty ones to the default sampler):
     * backends read any slot a shader names. */
    kiln_sampler_desc zero = {0};
    for (int i = 0; i < KILN_MAX_SAMPLERS; i++) {
        kd_sampler_resolve(p->samp[i] ? &p->samp[i]->u.sampler : &zero, &s->samp[i]);
        kd_sampler_resolve(p->vs_samp[i] ? &p->vs_samp[i]->u.sampler : &zero, &s->vs_samp[i]);
        kd_sampler_resolve(p->gs_samp[i] ? &p->gs_samp[i]->u.sampler : &zero, &s->gs_samp[i]);
    }
    kiln_rasterizer_desc rs0 = {0};
    const kiln_rasterizer_desc *rs = p->rs ? &p->rs->u.rs : &rs0;
    s->fill = rs->fill;
    s->cull = rs->cull == KILN_CULL_DEFAULT ? KILN_CULL_BACK : rs->cull;
    s->front_ccw = rs->front_ccw;
    s->depth_clip = !rs->depth_clip_disable;
    s->scissor_enable = rs->scissor_enable;
    s->depth_bias = rs->depth_bias;
    s->depth_bias_clamp = rs->depth_bias_clamp;
    s->slope_bias = rs->slope_scaled_depth_bias;
    s->scissor = p->scissor;
    if (p->vp_set) {
        s->vp = p->vp;
    } else {
        /* No viewport set: the whole target (a kiln default; D3D10 draws
         * nothing then). */
        kres_view *v = p->nrt && p->rtv[0] ? p->rtv[0] : p->dsv;
        const kres_subresource *sub = v ? kres_plane_sub(v->res, v->first_mip, v->first_slice) : NULL;
        s->vp = (kiln_viewport){0, 0, sub ? (float)sub->width : 0, sub ? (float)sub->height : 0, 0, 1};
    }
    kiln_depth_stencil_desc ds0 = {0};
    const kiln_depth_stencil_desc *ds = p->dss ? &p->dss->u.dss : &ds0;
    s->depth_enable = !ds->depth_disable;
    s->depth_write = !ds->depth_write_disable;
    s->depth_func = ds->depth_func ? ds->depth_func : KILN_COMPARE_LESS;
    s->stencil_enable = ds->stencil_enable;
    s->stencil_read = mask8(ds->stencil_read_mask);
    s->stencil_write = mask8(ds->stencil_write_mask);
    s->stencil_ref = p->stencil_ref;
    const kiln_stencil_face *faces[2] = {&ds->front, &ds->back};
    kd_stencil_face *outf[2] = {&s->front, &s->back};
    for (int f = 0; f < 2; f++)
        *outf[f] = (kd_stencil_face){sop(faces[f]->fail_op), sop(faces[f]->depth_fail_op), sop(faces[f]->pass_op),
                                     faces[f]->func ? faces[f]->func : KILN_COMPARE_ALWAYS};
    kiln_blend_desc bs0 = {0};
    const kiln_blend_desc *bs = p->bs ? &p->bs->u.bs : &bs0;
    for (int r = 0; r < KILN_MAX_RENDER_TARGETS; r++) {
        const kiln_blend_target *t = &bs->rt[r];
        s->blend[r] = (kd_blend_rt){
            t->enable,
            t->src ? t->src : KILN_BLEND_ONE,
            t->dst ? t->dst : KILN_BLEND_ZERO,
            t->src_alpha ? t->src_alpha : KILN_BLEND_ONE,
            t->dst_alpha ? t->dst_alpha : KILN_BLEND_ZERO,
            t->op ? t->op : KILN_BLEND_OP_ADD,
            t->op_alpha ? t->op_alpha : KILN_BLEND_OP_ADD,
            t->write_mask == KILN_COLOR_WRITE_DEFAULT ? 15u : t->write_mask == KILN_COLOR_WRITE_NONE ? 0u : t->write_mask & 15u,
        };
    }
    memcpy(s->blend_factor, p->blend_factor, sizeof s->blend_factor);
    s->alpha_to_coverage = bs->alpha_to_coverage != 0;
    return s;
}

/* ---- scenes ---- */

static void scene_release(kq_cmd *cmd)
{
    kd_scene_free(cmd->u.scene.scene);
}

/* Whether the open scene takes no further op: at KD_SCENE_MAX_OPS, or
 * holding the device's scene budget (docs/queue.md "Scene budget"). */
static bool scene_full(const kiln_context *ctx, const kd_scene *s)
{
    return s->nops >= KD_SCENE_MAX_OPS || kd_scene_held(s) >= ctx->dev->queue.scene_budget;
}

/* Whether the open scene came before a WRITE_NO_OVERWRITE Map that is
 * still open: a draw now follows the Map in call order and goes to a scene
 * of its own, whose reads wait for the Unmap (docs/queue.md, Map). */
static inline bool after_map(const kiln_context *ctx)
{
    return ctx->scene->before_maps &&
           atomic_load_explicit(&ctx->q.no_overwrite_maps, memory_order_relaxed) != 0;
}

kiln_result ka_flush_scene(kiln_context *ctx, const char *api)
{
    kd_scene *s = ctx->scene;
    if (!s)
        return KILN_OK;
    ctx->scene = NULL;
    kiln_device *dev = ctx->dev;
    kq_cmd *cmd;
    kiln_result r = kq_begin(&ctx->q, api, &cmd);
    if (r != KILN_OK) {
        kd_scene_free(s);
        return FAIL(r, WOULD_DEADLOCK, "queuing the gathered draws: the command ring is full of commands "
                                       "waiting for a resource this thread keeps mapped; the draws are dropped");
    }
    cmd->op = KQ_OP_SCENE;
    cmd->api = "kiln_draw";
    kq_scene_admit(&ctx->q, cmd, kd_scene_bytes(s));
    cmd->u.scene.scene = s;
    cmd->u.scene.ops = s->nops;
    if (dev->queue.trace) /* the call's span: from the first draw to here */
        cmd->tr_begin = s->trace_t0;
    cmd->release = scene_release;
    cmd->pred_res = s->pred_res;
    cmd->pred_value = (uint8_t)s->pred_value;
    cmd->before_maps = s->before_maps;
    kq_set_nodes(cmd, s->nodes, s->nnodes);
    s->nnodes = 0; /* the command owns the nodes' references now */
    kq_submit(&ctx->q, cmd);
    return KILN_OK;
}

/* `targets` false: a stream-output draw with rasterization off, which
 * names (and waits for) no target. */
static kd_scene *open_scene(kiln_context *ctx, bool targets)
{
    ka_pipeline *p = ctx->pipe;
    kd_scene *s = kd_scene_create(&ctx->dev->env, &ctx->dev->recycler);
    if (!s)
        return NULL;
    s->before_maps = false;
    s->mapped_at_open = atomic_load_explicit(&ctx->q.no_overwrite_maps, memory_order_relaxed) != 0;
    if (ctx->dev->queue.trace)
        s->trace_t0 = kt_now();
    if (!targets)
        goto queries;
    s->nrt = p->nrt;
    for (uint32_t i = 0; i < p->nrt; i++)
        if ((s->rtv[i] = p->rtv[i])) {
            kres_ref(&s->rtv[i]->base);
            if (!kd_scene_use(s, s->rtv[i]->res, s->rtv[i]->res->current, KQ_WRITE))
                goto oom;
        }
    if ((s->dsv = p->dsv)) {
        kres_ref(&s->dsv->base);
        if (!kd_scene_use(s, s->dsv->res, s->dsv->res->current, KQ_WRITE))
            goto oom;
    }
queries:
    if (!ka_scene_queries(ctx, s))
        goto oom;
    return s;
oom:
    kd_scene_free(s);
    return NULL;
}

/* Reads storages of resources a draw uses: DYNAMIC ones can be renamed by
 * a Map on another context, so they are read under the scheduler mutex. */
static kres_storage *capture(kiln_device *dev, kres_resource *res)
{
    if (!res)
        return NULL;
    if (res->usage == KILN_USAGE_DYNAMIC)
        return kq_capture(&dev->queue, res);
    kres_storage_ref(res->current);
    return res->current;
}

/* Whether the scene's newest bind record holds the storages the pipeline
 * binds now. A DYNAMIC resource's storage may be renamed at any moment by
 * a Map on another context: `current` is read atomically, and seen before
 * or after such a rename it is a storage this draw may read (contexts have
 * no order between them); the record holds a reference to `st`, so an
 * equal pointer is that storage. Capturing a new one takes the mutex
 * (capture). */
static bool same_storage(const kres_resource *res, const kres_storage *st)
{
    return res ? res->current == st : st == NULL;
}

static bool bind_current(const ka_pipeline *p, const kd_bind *b, bool indexed)
{
    if (!b->complete)
        return false;
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
        if (!same_storage(p->vb[i], b->vb_st[i]))
            return false;
    if (indexed && !same_storage(p->ib, b->ib_st))
        return false;
    if (b->n_vs_cb != p->n_vs_cb || b->n_ps_cb != p->n_ps_cb || b->nsrv != p->nsrv || b->n_vs_srv != p->n_vs_srv ||
        b->n_gs_srv != p->n_gs_srv)
        return false;
    for (uint32_t i = 0; i < p->n_vs_cb; i++)
        if (!same_storage(p->vs_cb[i], b->vs_cb_st[i]))
            return false;
    for (uint32_t i = 0; i < p->n_ps_cb; i++)
        if (!same_storage(p->ps_cb[i], b->ps_cb_st[i]))
            return false;
    for (uint32_t i = 0; i < p->nsrv; i++)
        if (!same_storage(p->srv[i] ? p->srv[i]->res : NULL, b->srv_st[i]))
            return false;
    for (uint32_t i = 0; i < p->n_vs_srv; i++)
        if (!same_storage(p->vs_srv[i] ? p->vs_srv[i]->res : NULL, b->vs_srv_st[i]))
            return false;
    for (uint32_t i = 0; i < p->n_gs_srv; i++)
        if (!same_storage(p->gs_srv[i] ? p->gs_srv[i]->res : NULL, b->gs_srv_st[i]))
            return false;
    return true;
}

/* Whether anything bound to a buffer or resource slot is DYNAMIC. */
static bool binds_dynamic(const ka_pipeline *p)
{
    bool dyn = p->ib && p->ib->usage == KILN_USAGE_DYNAMIC;
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
        dyn |= p->vb[i] && p->vb[i]->usage == KILN_USAGE_DYNAMIC;
    for (uint32_t i = 0; i < p->n_vs_cb; i++)
        dyn |= p->vs_cb[i] && p->vs_cb[i]->usage == KILN_USAGE_DYNAMIC;
    for (uint32_t i = 0; i < p->n_ps_cb; i++)
        dyn |= p->ps_cb[i] && p->ps_cb[i]->usage == KILN_USAGE_DYNAMIC;
    for (uint32_t i = 0; i < p->nsrv; i++)
        dyn |= p->srv[i] && p->srv[i]->res->usage == KILN_USAGE_DYNAMIC;
    for (uint32_t i = 0; i < p->n_vs_srv; i++)
        dyn |= p->vs_srv[i] && p->vs_srv[i]->res->usage == KILN_USAGE_DYNAMIC;
    for (uint32_t i = 0; i < p->n_gs_srv; i++)
        dyn |= p->gs_srv[i] && p->gs_srv[i]->res->usage == KILN_USAGE_DYNAMIC;
    return dyn;
}

/* A new bind record with the storages bound now, each a node of the scene.
 * NULL on out of memory (what was captured stays with the scene). */
static kd_bind *capture_bind(kiln_device *dev, const ka_pipeline *p, kd_scene *s, bool indexed)
{
    kd_bind *b = kd_scene_new_bind(s, p->nsrv, p->n_vs_srv, p->n_gs_srv);
    if (!b)
        return NULL;
    b->n_vs_cb = p->n_vs_cb;
    b->n_ps_cb = p->n_ps_cb;
    bool ok = true;
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
        if (p->vb[i] && (b->vb_st[i] = capture(dev, p->vb[i])))
            ok &= kd_scene_use(s, p->vb[i], b->vb_st[i], KQ_READ);
    if (indexed && (b->ib_st = capture(dev, p->ib)))
        ok &= kd_scene_use(s, p->ib, b->ib_st, KQ_READ);
    for (uint32_t i = 0; i < p->n_vs_cb; i++)
        if (p->vs_cb[i] && (b->vs_cb_st[i] = capture(dev, p->vs_cb[i])))
            ok &= kd_scene_use(s, p->vs_cb[i], b->vs_cb_st[i], KQ_READ);
    for (uint32_t i = 0; i < p->n_ps_cb; i++)
        if (p->ps_cb[i] && (b->ps_cb_st[i] = capture(dev, p->ps_cb[i])))
            ok &= kd_scene_use(s, p->ps_cb[i], b->ps_cb_st[i], KQ_READ);
    /* Views of both stages are read nodes of the scene alike: a later
     * write to the texture waits for the draw, a Map only for it. */
    for (uint32_t i = 0; i < p->nsrv; i++)
        if (p->srv[i] && (b->srv_st[i] = capture(dev, p->srv[i]->res)))
            ok &= kd_scene_use(s, p->srv[i]->res, b->srv_st[i], KQ_READ);
    for (uint32_t i = 0; i < p->n_vs_srv; i++)
        if (p->vs_srv[i] && (b->vs_srv_st[i] = capture(dev, p->vs_srv[i]->res)))
            ok &= kd_scene_use(s, p->vs_srv[i]->res, b->vs_srv_st[i], KQ_READ);
    for (uint32_t i = 0; i < p->n_gs_srv; i++)
        if (p->gs_srv[i] && (b->gs_srv_st[i] = capture(dev, p->gs_srv[i]->res)))
            ok &= kd_scene_use(s, p->gs_srv[i]->res, b->gs_srv_st[i], KQ_READ);
    b->complete = ok;
    return ok ? b : NULL;
}

static bool destroyed_pipe(const kres_pipe *o) { return o && atomic_load(&o->destroyed); }
static bool destroyed_res(const kres_resource *r) { return r && atomic_load(&r->destroyed); }
static bool destroyed_view(const kres_view *v)
{
    return v && (atomic_load(&v->destroyed) || atomic_load(&v->res->destroyed));
}

/* What a draw needs of the bound objects, whatever its counts. */
static kiln_result validate_objects(kiln_context *ctx, const char *api, bool indexed)
{
    kiln_device *dev = ctx->dev;
    ka_pipeline *p = ctx->pipe;
    bool so = p->gs && p->gs->u.gs.so.n;
    if (!p->vs || (!p->ps && !so && !p->dsv))
        return FAIL(KILN_E_INVALID_CALL, DRAW_NO_SHADER, "no %s shader bound", !p->vs ? "vertex" : "pixel");
    if (!p->ps && !so && !depth_only(p))
        return FAIL(KILN_E_INVALID_CALL, DRAW_NO_RASTER,
                    "no pixel shader and no stream output, and the depth-stencil state tests nothing: "
                    "the draw would write nothing");
    if (!p->layout)
        return FAIL(KILN_E_INVALID_CALL, DRAW_NO_LAYOUT, "no input layout bound");
    if (p->topology == KILN_TOPOLOGY_UNDEFINED)
        return FAIL(KILN_E_INVALID_CALL, DRAW_NO_TOPOLOGY, "no primitive topology set");
    /* Objects the draw uses: shaders, layout, states, the index buffer of
     * an indexed draw, the vertex buffers the layout reads, constant
     * buffers and shader resources (the shader may read any), targets.
     * A destroyed sampler is harmless (its desc is captured), and so is a
     * destroyed buffer in a slot nothing reads. */
    bool adj = p->topology >= KILN_TOPOLOGY_LINE_LIST_ADJ;
    if ((adj || p->gs) && !(dev->queue.backend->caps & KQ_BACKEND_GEOMETRY))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no geometry stage (%s)",
                    dev->queue.backend->name, p->gs ? "a geometry shader is bound" : "adjacency topology");
    bool gs_fn = p->gs && p->gs->u.gs.d.fn; /* a function runs (not a pass-through) */
    if (adj && !gs_fn)
        return FAIL(KILN_E_INVALID_CALL, DRAW_ADJACENCY_NO_GS, "topology %d without a geometry shader%s",
                    (int)p->topology, p->gs ? " function (a stream-output pass-through)" : "");
    if (gs_fn) {
        static const kiln_gs_input need[] = {
            [KILN_TOPOLOGY_POINT_LIST] = KILN_GS_INPUT_POINT,
            [KILN_TOPOLOGY_LINE_LIST] = KILN_GS_INPUT_LINE,
            [KILN_TOPOLOGY_LINE_STRIP] = KILN_GS_INPUT_LINE,
            [KILN_TOPOLOGY_TRIANGLE_LIST] = KILN_GS_INPUT_TRIANGLE,
            [KILN_TOPOLOGY_TRIANGLE_STRIP] = KILN_GS_INPUT_TRIANGLE,
            [KILN_TOPOLOGY_LINE_LIST_ADJ] = KILN_GS_INPUT_LINE_ADJ,
            [KILN_TOPOLOGY_LINE_STRIP_ADJ] = KILN_GS_INPUT_LINE_ADJ,
            [KILN_TOPOLOGY_TRIANGLE_LIST_ADJ] = KILN_GS_INPUT_TRIANGLE_ADJ,
            [KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ] = KILN_GS_INPUT_TRIANGLE_ADJ,
        };
        if (p->gs->u.gs.d.input != need[p->topology])
            return FAIL(KILN_E_INVALID_CALL, DRAW_GS_INPUT_MISMATCH, "geometry shader input %d, topology %d",
                        (int)p->gs->u.gs.d.input, (int)p->topology);
    }
    bool dead = destroyed_pipe(p->vs) || destroyed_pipe(p->gs) || destroyed_pipe(p->ps) || destroyed_pipe(p->layout) ||
                destroyed_pipe(p->rs) || destroyed_pipe(p->dss) || destroyed_pipe(p->bs) ||
                (indexed && destroyed_res(p->ib)) || destroyed_view(p->dsv);
    for (uint32_t e = 0; e < p->layout->u.layout.num_elements; e++)
        dead |= destroyed_res(p->vb[p->layout->u.layout.elements[e].slot]);
    for (uint32_t i = 0; i < p->n_vs_cb; i++)
        dead |= destroyed_res(p->vs_cb[i]);
    for (uint32_t i = 0; i < p->n_ps_cb; i++)
        dead |= destroyed_res(p->ps_cb[i]);
    for (uint32_t i = 0; i < p->nsrv; i++)
        dead |= destroyed_view(p->srv[i]);
    for (uint32_t i = 0; i < p->n_vs_srv; i++)
        dead |= destroyed_view(p->vs_srv[i]);
    for (uint32_t i = 0; i < p->n_gs_srv; i++)
        dead |= destroyed_view(p->gs_srv[i]);
    for (int i = 0; i < KILN_MAX_RENDER_TARGETS; i++)
        dead |= destroyed_view(p->rtv[i]);
    for (int i = 0; so && i < KILN_SO_BUFFER_SLOTS; i++)
        dead |= destroyed_res(p->so[i]);
    if (dead)
        return FAIL(KILN_E_INVALID_CALL, DRAW_BOUND_DESTROYED, "an object bound to the pipeline was destroyed");
    if (p->layout->u.layout.num_elements != p->vs->u.vs.num_inputs)
        return FAIL(KILN_E_INVALID_CALL, LAYOUT_SHADER_MISMATCH, "the layout has %u elements, the shader reads %u",
                    p->layout->u.layout.num_elements, p->vs->u.vs.num_inputs);
    uint32_t written = gs_fn ? p->gs->u.gs.d.num_varyings : p->vs->u.vs.num_varyings;
    if (p->ps && p->ps->u.ps.num_varyings > written)
        return FAIL(KILN_E_INVALID_CALL, DRAW_VARYINGS_MISMATCH, "the pixel shader reads %u varyings, the %s shader writes %u",
                    p->ps->u.ps.num_varyings, gs_fn ? "geometry" : "vertex", written);
    if (so) {
        /* The declaration against what reaches it, and its buffers: D3D10
         * links the declaration to the shader's output signature and
         * writes nothing to a declared slot without a buffer (kiln refuses
         * the draw instead); a buffer the draw reads cannot be a target
         * too (D3D10 unbinds it as an input). */
        const kres_so_decl *d = &p->gs->u.gs.so;
        for (uint32_t i = 0; i < d->n; i++)
            if (d->el[i].reg > written)
                return FAIL(KILN_E_INVALID_CALL, DRAW_SO_MISMATCH, "element %u reads varying %u, the %s shader writes %u",
                            i, d->el[i].reg - 1u, gs_fn ? "geometry" : "vertex", written);
        for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++) {
            if (d->stride[k] && !p->so[k])
                return FAIL(KILN_E_INVALID_CALL, DRAW_SO_MISMATCH, "the declaration writes slot %d, which has no buffer", k);
            if (!p->so[k])
                continue;
            bool input = p->so[k] == p->ib;
            for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
                input |= p->so[k] == p->vb[i];
            kres_view *const *sv[3] = {p->srv, p->vs_srv, p->gs_srv};
            const uint32_t nsv[3] = {p->nsrv, p->n_vs_srv, p->n_gs_srv};
            for (int st = 0; st < 3; st++) /* typed buffer views read it too */
                for (uint32_t i = 0; i < nsv[st]; i++)
                    input |= sv[st][i] && sv[st][i]->res == p->so[k];
            if (input)
                return FAIL(KILN_E_INVALID_CALL, DRAW_HAZARD, "stream-output buffer %d is also bound as an input", k);
        }
    }
    if (indexed && !p->ib)
        return FAIL(KILN_E_INVALID_CALL, DRAW_NO_INDEX_BUFFER, "no index buffer bound");
    const kiln_input_layout_desc *l = &p->layout->u.layout;
    for (uint32_t e = 0; e < l->num_elements; e++)
        if (!p->vb[l->elements[e].slot])
            return FAIL(KILN_E_INVALID_CALL, DRAW_NO_LAYOUT, "element %u reads slot %u, which has no buffer", e,
                        l->elements[e].slot);
    kres_view *const *views[3] = {p->srv, p->vs_srv, p->gs_srv};
    const uint32_t nviews[3] = {p->nsrv, p->n_vs_srv, p->n_gs_srv};
    for (int st = STAGE_PS; st <= STAGE_GS; st++)
        for (uint32_t i = 0; i < nviews[st]; i++) {
            const kres_view *v = views[st][i];
            if (!v)
                continue;
            for (uint32_t r = 0; r <= p->nrt; r++) {
                kres_view *t = r < p->nrt ? p->rtv[r] : p->dsv;
                if (t && t->res == v->res)
                    return FAIL(KILN_E_INVALID_CALL, DRAW_HAZARD, "%s-stage shader resource %u is also bound as a target",
                                stage_names[st], i);
            }
        }
    return KILN_OK;
}

/* ka_pipeline.max_vertex and full_check for the bound layout and
 * buffers (validate_objects passed: every element's slot has a buffer). */
static void vertex_limits(ka_pipeline *p)
{
    const kiln_input_layout_desc *l = &p->layout->u.layout;
    p->max_vertex = UINT64_MAX;
    p->full_check = false;
    for (uint32_t e = 0; e < l->num_elements; e++) {
        const kiln_input_element *el = &l->elements[e];
        /* vertex v reads up to offset + v * stride + el->offset + size */
        uint64_t base =
            (uint64_t)p->vb_offset[el->slot] + el->offset + kiln_format_size(el->format);
        uint64_t width = p->vb[el->slot]->width, stride = p->vb_stride[el->slot];
        if (el->per_instance || base > width) {
            p->full_check = true;
            continue;
        }
        p->max_vertex = KB_MIN(p->max_vertex, stride ? (width - base) / stride : UINT64_MAX);
    }
}

/* `is_auto`: draw_auto, whose vertex count is known only when it runs
 * (its per-vertex reads are bounded then, as an indexed draw's). */
static kiln_result validate(kiln_context *ctx, const char *api, bool indexed, bool is_auto, uint32_t count,
                            uint32_t start, uint32_t instances, uint32_t start_instance)
{
    kiln_device *dev = ctx->dev;
    ka_pipeline *p = ctx->pipe;
    /* The bound objects are checked again only after a setter ran or an
     * object of the device was destroyed: a stream of draws with one
     * pipeline pays for the counts below only. */
    uint32_t bit = indexed ? 2u : 1u;
    uint64_t epoch = atomic_load_explicit(&dev->destroy_epoch, memory_order_acquire);
    if (!(p->checked & bit) || p->checked_epoch != epoch) {
        kiln_result r = validate_objects(ctx, api, indexed);
        if (r != KILN_OK)
            return r;
        if (p->checked_epoch != epoch)
            p->checked = 0;
        p->checked_epoch = epoch;
        p->checked |= bit;
        vertex_limits(p);
    }
    if (indexed) {
        uint64_t isz = p->ib_format == KILN_INDEX_UINT16 ? 2 : 4;
        uint64_t need = p->ib_offset + ((uint64_t)start + count) * isz;
        if (need > p->ib->width)
            return FAIL(KILN_E_INVALID_ARG, DRAW_BUFFER_TOO_SMALL, "indices [%u, %u) need %llu bytes, the index buffer has %u",
                        start, start + count, (unsigned long long)need, p->ib->width);
    }
    /* Vertex buffers must hold what the draw reads (indexed draws read
     * vertices the indices name: checked as D3D10 does, at execution, where
     * reads outside the buffer give zeros). */
    if (!p->full_check && (indexed || is_auto || (uint64_t)start + count - 1 <= p->max_vertex))
        return KILN_OK;
    const kiln_input_layout_desc *l = &p->layout->u.layout;
    for (uint32_t e = 0; e < l->num_elements; e++) {
        const kiln_input_element *el = &l->elements[e];
        kres_resource *vb = p->vb[el->slot];
        uint64_t last;
        if (el->per_instance)
            last = (uint64_t)start_instance +
                   (instances - 1) / (el->instance_step_rate ? el->instance_step_rate : 1);
        else if (!indexed && !is_auto)
            last = (uint64_t)start + count - 1;
        else
            continue;
        uint64_t need = p->vb_offset[el->slot] + last * p->vb_stride[el->slot] + el->offset + kiln_format_size(el->format);
        if (need > vb->width)
            return FAIL(KILN_E_INVALID_ARG, DRAW_BUFFER_TOO_SMALL, "slot %u needs %llu bytes, the buffer has %u",
                        el->slot, (unsigned long long)need, vb->width);
    }
    return KILN_OK;
}

/* A draw that streams out is a scene of its own: its buffers are written
 * nodes of that scene (later readers wait for it, nothing else does), and
 * its primitives reach them in the serial order (backend: per-job lists
 * written in job order). Rasterization off: the scene names no target. */
static bool stream_scene(kiln_context *ctx, kd_scene *s)
{
    ka_pipeline *p = ctx->pipe;
    s->streams = true;
    for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++) {
        kres_resource *res = p->so[k];
        if (!res)
            continue;
        if (!kd_scene_use(s, res, res->current, KQ_WRITE))
            return false;
        s->so[k] = res; /* held by its node */
        s->so_offset[k] = p->so_offset[k];
    }
    return true;
}

static kiln_result draw(kiln_context *ctx, const char *api, bool indexed, bool is_auto, uint32_t count,
                        uint32_t instances, uint32_t start, int32_t base_vertex, uint32_t start_instance)
{
    kiln_device *dev = ctx->dev;
    ka_pipeline *p = ctx->pipe;
    if (instances == 0 || count == 0)
        return KILN_OK; /* nothing to draw, as in D3D10 */
    /* Bounds the memory a scene's jobs take (one segment per instance and
     * about 1,024 output primitives at most; a geometry shader's input
     * primitive weighs the vertices it may emit). */
    bool gs_fn = p->gs && p->gs->u.gs.d.fn;
    uint64_t amplify = gs_fn ? p->gs->u.gs.d.max_vertices : 1;
    if ((uint64_t)count * instances * amplify > (1ull << 28) || instances > (1u << 20))
        return FAIL(KILN_E_INVALID_ARG, DRAW_TOO_LARGE, "%u vertices%s x %u instances%s", count,
                    is_auto ? " (what the buffer can hold)" : "", instances,
                    gs_fn ? " x the geometry shader's max_vertices" : "");
    kiln_result r = validate(ctx, api, indexed, is_auto, count, start, instances, start_instance);
    if (r != KILN_OK)
        return r;
    bool so = p->gs && p->gs->u.gs.so.n;
    bool raster = (p->ps && (p->nrt || p->dsv)) || depth_only(p);
    if (kd_prim_count(p->topology, count) == 0 || (!raster && !so))
        return KILN_OK;
    if (ctx->scene && (so || !same_views(ctx->scene, p) || scene_full(ctx, ctx->scene) ||
                       ctx->scene->vertices >= KD_SCENE_MAX_VERTICES || after_map(ctx)))
        if ((r = ka_flush_scene(ctx, api)) != KILN_OK)
            return r;
    if (!p->block && !(p->block = build_state(ctx)))
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "state block");
    kd_scene *s = ctx->scene;
    bool fresh = !s;
    if (!s && !(s = open_scene(ctx, raster)))
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "scene");
    if (so && !stream_scene(ctx, s)) {
        kd_scene_free(s);
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "stream-output scene");
    }
    kd_draw *d = kd_scene_new_draw(s);
    bool ok = d && kd_scene_hold_state(s, p->block);
    if (ok) {
        d->state = p->block;
        d->indexed = indexed;
        d->count = count;
        d->start = start;
        d->base_vertex = base_vertex;
        d->instances = instances;
        d->start_instance = start_instance;
        d->is_auto = is_auto; /* its count is set when it runs */
        /* Consecutive draws binding the same storages share a record;
         * after a draw that captured or matched it, with no setter since,
         * without comparing. */
        uint32_t bit = indexed ? 2u : 1u;
        const kd_bind *b = s->binds;
        if (!b || !(p->bind_fresh & bit)) {
            uint32_t valid = 0;
            if (b && bind_current(p, b, indexed)) {
                valid = p->bind_fresh | bit;
            } else {
                b = capture_bind(dev, p, s, indexed);
                valid = indexed ? 3u : 1u; /* an indexed capture holds the index buffer too */
            }
            p->bind_fresh = b && !binds_dynamic(p) ? valid : 0;
        }
        d->bind = b;
        ok = b != NULL;
    }
    if (ok && (p->block->nsrv || p->block->n_vs_srv || p->block->n_gs_srv) &&
        (s->tex_state != p->block || !kd_bind_same_views(s->tex_bind, d->bind))) {
        /* bounds what the backend resolves per scene: views, not the
         * other storages (a draw per WRITE_DISCARD of its constants) */
        s->texsets++;
        s->tex_state = p->block;
        s->tex_bind = d->bind;
    }
    kd_op op = {.kind = KD_OP_DRAW, .draw = d};
    if (!ok || !kd_scene_push(s, &op)) {
        /* The scene keeps what it gathered; this draw is undone. */
        if (d)
            kd_scene_drop_draw(s);
        if (fresh)
            kd_scene_free(s);
        else
            ctx->scene = s;
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "gathering the draw");
    }
    s->vertices += (uint64_t)count * instances;
    ctx->scene = s;
    if (!so && s->texsets >= KD_SCENE_MAX_TEXSETS)
        return ka_flush_scene(ctx, api);
    if (so) {
        /* Later draws continue where this one ends (D3D10: the offsets
         * apply to the first draw after SOSetTargets). */
        for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++)
            p->so_offset[k] = KILN_SO_APPEND;
        return ka_flush_scene(ctx, api);
    }
    return KILN_OK;
}

kiln_result kiln_draw(kiln_context *ctx, uint32_t count, uint32_t start)
{
    static const char api[] = "kiln_draw";
    CTX_PREAMBLE();
    kiln_result r = draw(ctx, api, false, false, count, 1, start, 0, 0);
    if (dev->capture)
        kcap_draw(ctx, KCAP_OP_DRAW, count, 1, start, 0, 0, r);
    return r;
}

kiln_result kiln_draw_indexed(kiln_context *ctx, uint32_t count, uint32_t start, int32_t base_vertex)
{
    static const char api[] = "kiln_draw_indexed";
    CTX_PREAMBLE();
    kiln_result r = draw(ctx, api, true, false, count, 1, start, base_vertex, 0);
    if (dev->capture)
        kcap_draw(ctx, KCAP_OP_DRAW_INDEXED, count, 1, start, base_vertex, 0, r);
    return r;
}

kiln_result kiln_draw_instanced(kiln_context *ctx, uint32_t count, uint32_t instances, uint32_t start,
                                uint32_t start_instance)
{
    static const char api[] = "kiln_draw_instanced";
    CTX_PREAMBLE();
    kiln_result r = draw(ctx, api, false, false, count, instances, start, 0, start_instance);
    if (dev->capture)
        kcap_draw(ctx, KCAP_OP_DRAW_INSTANCED, count, instances, start, 0, start_instance, r);
    return r;
}

kiln_result kiln_draw_indexed_instanced(kiln_context *ctx, uint32_t count, uint32_t instances, uint32_t start,
                                        int32_t base_vertex, uint32_t start_instance)
{
    static const char api[] = "kiln_draw_indexed_instanced";
    CTX_PREAMBLE();
    kiln_result r = draw(ctx, api, true, false, count, instances, start, base_vertex, start_instance);
    if (dev->capture)
        kcap_draw(ctx, KCAP_OP_DRAW_INDEXED_INSTANCED, count, instances, start, base_vertex,
                  start_instance, r);
    return r;
}

static kiln_result draw_auto(kiln_context *ctx, const char *api)
{
    kiln_device *dev = ctx->dev;
    ka_pipeline *p = ctx->pipe;
    if (!(dev->queue.backend->caps & KQ_BACKEND_STREAM_OUTPUT))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no stream output", dev->queue.backend->name);
    kres_resource *vb = p->vb[0];
    if (!vb || !(vb->bind_flags & KILN_BIND_STREAM_OUTPUT) || p->vb_stride[0] == 0)
        return FAIL(KILN_E_INVALID_CALL, DRAW_AUTO_NO_SO, "vertex-buffer slot 0 %s", !vb ? "is empty"
                    : p->vb_stride[0] == 0 ? "has stride 0" : "holds a buffer without KILN_BIND_STREAM_OUTPUT");
    /* The most it can draw: what the buffer holds past the offset. */
    uint32_t most = vb->width > p->vb_offset[0] ? (vb->width - p->vb_offset[0]) / p->vb_stride[0] : 0;
    return draw(ctx, api, false, true, most, 1, 0, 0, 0);
}

kiln_result kiln_draw_auto(kiln_context *ctx)
{
    static const char api[] = "kiln_draw_auto";
    CTX_PREAMBLE();
    kiln_result r = draw_auto(ctx, api);
    if (dev->capture)
        kcap_draw(ctx, KCAP_OP_DRAW_AUTO, 0, 0, 0, 0, 0, r);
    return r;
}

/* Clears of the scene's targets join the scene (cleared per tile, lazily);
 * other clears end it. Returns true when absorbed. */
bool ka_scene_clear(kiln_context *ctx, kres_view *v, bool depth, const uint8_t texel[16], uint32_t mask)
{
    ka_pipeline *p = ctx->pipe;
    kd_scene *s = ctx->scene;
    int slot = -1;
    if (!s && ((depth && p->dsv == v) || (!depth && p->nrt && p->rtv[0] == v)) && (s = open_scene(ctx, true)))
        ctx->scene = s;
    if (!s)
        return false;
    if (depth) {
        if (s->dsv != v)
            return false;
    } else {
        for (uint32_t i = 0; i < s->nrt; i++)
            if (s->rtv[i] == v)
                slot = (int)i;
        if (slot < 0)
            return false;
    }
    /* The scene clears whole targets: only views of one mip and slice. */
    if (v->num_slices != 1 || scene_full(ctx, s))
        return false;
    kd_op op = {.kind = depth ? KD_OP_CLEAR_DS : KD_OP_CLEAR_RT, .rt = slot < 0 ? 0 : (uint32_t)slot, .mask = mask};
    memcpy(op.texel, texel, 16);
    return kd_scene_push(s, &op);
}

static kiln_result generate_mips(kiln_context *ctx, kiln_srv view)
{
    static const char api[] = "kiln_generate_mips";
    CTX_PREAMBLE();
    kiln_result r;
    kres_view *v = ka_get_view(dev, view.id, KRES_TYPE_SRV, api, &r);
    if (!v)
        return r;
    if (kres_format_bc(v->format)) { /* before the binds: BC cannot have RENDER_TARGET */
        kiln_format f = v->format;
        kres_unref(&v->base);
        return FAIL(KILN_E_INVALID_ARG, MIPS_FORMAT, "format %d is block-compressed, which generate_mips cannot write", (int)f);
    }
    uint32_t need = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE;
    if ((v->res->bind_flags & need) != need) {
        kres_unref(&v->base);
        return FAIL(KILN_E_INVALID_ARG, MIPS_NO_RT, "the texture needs render-target and shader-resource binds");
    }
    if (kres_format_integer(v->format)) {
        kiln_format f = v->format;
        kres_unref(&v->base);
        return FAIL(KILN_E_INVALID_ARG, MIPS_FORMAT, "format %d is an integer format, which D3D10 cannot filter", (int)f);
    }
    if ((r = ka_flush_scene(ctx, api)) == KILN_OK && v->num_mips > 1) {
        kq_cmd *cmd;
        r = kq_begin(&ctx->q, api, &cmd);
        if (r != KILN_OK) {
            r = FAIL(r, WOULD_DEADLOCK, "the command ring is full of commands waiting for a resource this thread keeps mapped");
        } else {
            cmd->op = KQ_OP_GENERATE_MIPS;
            cmd->u.mips.first_mip = v->first_mip;
            cmd->u.mips.num_mips = v->num_mips;
            cmd->u.mips.first_slice = v->first_slice;
            cmd->u.mips.num_slices = v->num_slices;
            kq_access(cmd, v->res, KQ_WRITE);
            kq_submit(&ctx->q, cmd);
        }
    }
    kres_unref(&v->base);
    return r;
}

kiln_result kiln_generate_mips(kiln_context *ctx, kiln_srv view)
{
    kiln_result r = generate_mips(ctx, view);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_GENERATE_MIPS, view.id, r);
    return r;
}
