/*
 * Replay: runs a capture on a new device through the public API.
 *
 * Two passes over the file. The first decodes every record and checks what
 * one record alone cannot show: the capture starts with DEVICE and ends
 * with END; every handle, context and swapchain a record uses was created
 * by an earlier record, with the right type, and not destroyed since; the
 * sizes of uploads and mapped bytes; the live resources stay under a memory
 * budget. A capture that fails any of this is refused before anything runs,
 * with the offset of the first bad record. The second pass executes: ids
 * are translated (the replay device gives its own), shaders come from the
 * device's registry by name, mapped bytes are copied in before each Unmap,
 * and every result is compared with the live one (a call that failed live
 * was recorded as FAILED and is skipped).
 *
 * Waits are bounded (desc->wait_timeout_ns) and Maps always wait: a live
 * DO_NOT_WAIT Map that succeeded must succeed here too.
 *
 * Images: presented frames come from each swapchain, recreated with the
 * MEMORY target in FIFO mode (every presented frame is shown, whatever the
 * live mode and target were). A capture without presents gives the final
 * contents of every texture created with the render-target bind: read just
 * before it is destroyed, or at the end for those still alive.
 */
#include "replay.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void give_image(krp_replayer *r, const kcap_image *img)
{
    pthread_mutex_lock(&r->image_mu);
    r->d->image_fn(img, r->d->user);
    pthread_mutex_unlock(&r->image_mu);
}

/* ---- pass 2: running ---- */

static kiln_context *context(krp_replayer *r, uint32_t id)
{
    int i = krp_ctx_index(r, id);
    return i >= 0 ? r->ctxs[i].ctx : NULL;
}

/* The replay id of capture id `id` (0 stays 0). */
static uint32_t xl(krp_replayer *r, uint32_t id)
{
    krp_obj *o = krp_find(&r->objs, id);
    return o ? o->replay : id ? UINT32_MAX : 0;
}

/* Records the replay's handle for a capture handle. */
static krp_obj *bind_id(krp_replayer *r, uint32_t capture, uint32_t replay, enum krp_kind kind)
{
    krp_obj *o = krp_find(&r->objs, capture);
    if (!o && !(o = krp_insert(&r->objs, capture)))
        return NULL;
    o->kind = (uint8_t)kind;
    o->replay = replay;
    return o;
}

static void mismatch(krp_replayer *r, kiln_result got)
{
    if (r->rep->mismatches++ == 0)
        snprintf(r->rep->first_mismatch, sizeof r->rep->first_mismatch,
                 "record at offset %zu (%s): live KILN_OK, replay %s", r->offset,
                 kcap_op_name(r->c->op), kiln_result_string(got));
}

static void expect_ok(krp_replayer *r, kiln_result got)
{
    if (got != KILN_OK)
        mismatch(r, got);
}

static uint64_t bounded(const krp_replayer *r, uint64_t timeout)
{
    uint64_t max = r->d->wait_timeout_ns ? r->d->wait_timeout_ns : DEFAULT_WAIT_NS;
    return timeout < max ? timeout : max;
}

/* Every context hands over its gathered work (before a readback). */
static void flush_all(krp_replayer *r)
{
    for (uint32_t i = 0; i < r->nctx; i++)
        if (r->ctxs[i].ctx)
            kiln_flush(r->ctxs[i].ctx);
}

/* Reads mip 0 of every slice of a render-target texture into image_fn. */
static void read_target(krp_replayer *r, const krp_obj *o)
{
    if (!r->d->image_fn || r->has_presents || !o->target)
        return;
    flush_all(r);
    kiln_context *ctx = kiln_device_immediate_context(r->dev);
    kiln_texture2d_desc sd = {.width = o->width,
                              .height = o->height,
                              .mip_levels = 1,
                              .array_size = 1,
                              .format = o->format,
                              .usage = KILN_USAGE_STAGING,
                              .cpu_access = KILN_CPU_ACCESS_READ};
    kiln_texture staging;
    if (kiln_create_texture2d(r->dev, &sd, NULL, &staging) != KILN_OK)
        return;
    for (uint32_t s = 0; s < o->layers; s++) {
        kiln_mapped_subresource m;
        if (kiln_copy_subresource_region(ctx, kiln_texture_resource(staging), 0, 0, 0, 0,
                                         kiln_texture_resource((kiln_texture){o->replay}),
                                         s * o->mips, NULL) != KILN_OK ||
            kiln_map(ctx, kiln_texture_resource(staging), 0, KILN_MAP_READ, 0, &m) != KILN_OK)
            break;
        kcap_image img = {.kind = KCAP_IMAGE_TARGET,
                          .target = o->target - 1,
                          .slice = s,
                          .width = o->width,
                          .height = o->height,
                          .row_pitch = m.row_pitch,
                          .format = o->format,
                          .pixels = m.data};
        give_image(r, &img);
        kiln_unmap(ctx, kiln_texture_resource(staging), 0);
    }
    kiln_destroy_texture(r->dev, staging);
}

static bool in_range(const krp_replayer *r, uint64_t frame)
{
    return !r->d->frame_range || (frame >= r->d->first_frame && frame <= r->d->last_frame);
}

static void on_frame(const kiln_frame *f, void *user)
{
    krp_swapchain *s = user;
    krp_replayer *r = s->r;
    pthread_mutex_lock(&s->mu);
    uint64_t frame = s->frames[(f->frame_number - 1) % FRAME_RING];
    pthread_mutex_unlock(&s->mu);
    if (!r->d->image_fn || !in_range(r, frame))
        return;
    kcap_image img = {.kind = KCAP_IMAGE_PRESENT,
                      .frame = frame,
                      .width = f->width,
                      .height = f->height,
                      .row_pitch = f->row_pitch,
                      .format = f->format,
                      .pixels = f->pixels};
    give_image(r, &img);
}

/* Ends a frame (a present or a mark): its statistics, and the stop. */
static void end_frame(krp_replayer *r, bool presented)
{
    /* finish_frames: the frame's rendering is in its time (a result of
     * kiln_finish does not count: a context may keep a map open). */
    for (uint32_t i = 0; r->d->finish_frames && i < r->nctx; i++)
        if (r->ctxs[i].ctx)
            kiln_finish(r->ctxs[i].ctx);
    r->fs.presented = presented;
    r->fs.wall_ms = krp_now_ms() - r->frame_start;
    r->rep->frames++;
    r->rep->calls += r->fs.calls;
    r->rep->draws += r->fs.draws;
    r->rep->bytes_uploaded += r->fs.bytes_uploaded;
    if (r->d->frame_fn && in_range(r, r->fs.frame))
        r->d->frame_fn(&r->fs, r->d->user);
    if (r->d->frame_range && r->fs.frame >= r->d->last_frame)
        r->stop = true;
    uint64_t next = r->fs.frame + 1;
    r->fs = (kcap_frame_stats){.frame = next};
    r->frame_start = krp_now_ms();
}

static krp_map *find_map(krp_replayer *r, uint32_t res, uint32_t sub)
{
    for (uint32_t i = 0; i < r->nmaps; i++)
        if (r->maps[i].res == res && r->maps[i].sub == sub)
            return &r->maps[i];
    return NULL;
}

/* Copies tight bytes [off, off + n) of a subresource into the mapped rows. */
static void put_tight(const kiln_mapped_subresource *m, uint32_t row_bytes, uint64_t off,
                      uint64_t n, const uint8_t *src)
{
    while (n) {
        uint64_t y = off / row_bytes, x = off % row_bytes;
        uint64_t k = row_bytes - x < n ? row_bytes - x : n;
        memcpy((uint8_t *)m->data + y * m->row_pitch + x, src, (size_t)k);
        off += k;
        src += k;
        n -= k;
    }
}

static void run_unmap(krp_replayer *r, const kcap_call *c, kiln_context *ctx)
{
    krp_map *m = find_map(r, c->u.unmap.res, c->u.unmap.sub);
    krp_obj *o = krp_find(&r->objs, c->u.unmap.res);
    if (m && o && c->u.unmap.kind != KCAP_UNMAP_NONE) {
        uint32_t row, rows;
        krp_sub_layout(r, o, c->u.unmap.sub, &row, &rows); /* checked in pass 1 */
        if (o->kind == K_BUFFER)
            m->m.row_pitch = row;
        if (c->u.unmap.kind == KCAP_UNMAP_FULL) {
            for (uint32_t y = 0; y < rows; y++)
                memcpy((uint8_t *)m->m.data + (size_t)y * m->m.row_pitch,
                       c->u.unmap.full.data + (size_t)y * row, row);
            r->fs.bytes_uploaded += (uint64_t)row * rows;
        } else {
            kcap_range_iter it;
            uint64_t off, n;
            const uint8_t *b;
            kcap_range_begin(&c->u.unmap.ranges, &it);
            while (kcap_range_next(&it, &off, &n, &b)) {
                put_tight(&m->m, row, off, n, b);
                r->fs.bytes_uploaded += n;
            }
        }
    }
    if (m)
        *m = r->maps[--r->nmaps];
    expect_ok(r, kiln_unmap(ctx, (kiln_resource){xl(r, c->u.unmap.res)}, c->u.unmap.sub));
}

static void run_map(krp_replayer *r, const kcap_call *c, kiln_context *ctx)
{
    kiln_mapped_subresource m;
    kiln_resource res = {xl(r, c->u.map.res)};
    /* Always wait: the live Map succeeded, so it did not need to. */
    uint32_t flags = c->u.map.flags & ~(uint32_t)KILN_MAP_FLAG_DO_NOT_WAIT;
    kiln_result got = kiln_map(ctx, res, c->u.map.sub, (kiln_map_type)c->u.map.type, flags, &m);
    expect_ok(r, got);
    if (got != KILN_OK)
        return;
    if (r->nmaps == MAX_MAPS) { /* its bytes could not be written at Unmap */
        krp_refuse(r, KILN_E_UNSUPPORTED, "more than %u subresources mapped at once", MAX_MAPS);
        return;
    }
    r->maps[r->nmaps++] = (krp_map){c->u.map.res, c->u.map.sub, m};
}

static void ignore_fence(kiln_fence f, kiln_result status, void *user)
{
    (void)f;
    (void)status;
    (void)user;
}

/* CREATE_GEOMETRY_SHADER, and CREATE_GEOMETRY_SHADER_SO (a pass-through
 * has no geometry shader to look up). */
static bool run_geometry_shader(krp_replayer *r, const kcap_call *c)
{
    bool so = c->op == KCAP_OP_CREATE_GEOMETRY_SHADER_SO;
    kiln_so_desc sd = {c->u.shader.so, c->u.shader.so_count, c->u.shader.so_stride};
    uint32_t id = 0;
    if (so && !c->u.shader.has_gs) {
        expect_ok(r, kiln_create_geometry_shader_with_so(r->dev, NULL, &sd, (kiln_geometry_shader *)&id));
        bind_id(r, c->out[0], id, K_GS);
        return true;
    }
    if (!c->u.shader.name[0])
        return krp_refuse(r, KILN_E_UNSUPPORTED,
                          "the shader was unnamed when captured (its desc was not registered with "
                          "kiln_capture_register_geometry_shader): %s cannot be replayed",
                          kcap_op_name(c->op));
    kiln_geometry_shader_desc gd;
    if (!kcap_registry_gs(r->dev, c->u.shader.name, &gd))
        return krp_refuse(r, KILN_E_UNSUPPORTED,
                          "geometry shader \"%s\" is not registered in this replay (kiln_replay "
                          "knows the built-in effects only)",
                          c->u.shader.name);
    gd.input = (kiln_gs_input)c->u.shader.gs_input;
    gd.output = (kiln_gs_output)c->u.shader.gs_output;
    gd.max_vertices = c->u.shader.max_vertices;
    gd.num_varyings = c->u.shader.num_varyings;
    gd.flags = c->u.shader.flags;
    expect_ok(r, so ? kiln_create_geometry_shader_with_so(r->dev, &gd, &sd, (kiln_geometry_shader *)&id)
                    : kiln_create_geometry_shader(r->dev, &gd, (kiln_geometry_shader *)&id));
    bind_id(r, c->out[0], id, K_GS);
    return true;
}

static bool run_shader(krp_replayer *r, const kcap_call *c)
{
    bool vs = c->op == KCAP_OP_CREATE_VERTEX_SHADER;
    const char *api = kcap_op_name(c->op);
    if (!c->u.shader.name[0])
        return krp_refuse(r, KILN_E_UNSUPPORTED,
                          "the shader was unnamed when captured (its desc was not registered with "
                          "kiln_capture_register_%s_shader): %s cannot be replayed",
                          vs ? "vertex" : "pixel", api);
    kiln_vertex_shader_desc vd;
    kiln_pixel_shader_desc pd;
    if (vs ? !kcap_registry_vs(r->dev, c->u.shader.name, &vd)
           : !kcap_registry_ps(r->dev, c->u.shader.name, &pd))
        return krp_refuse(
            r, KILN_E_UNSUPPORTED,
            "%s shader \"%s\" is not registered in this replay (kiln_replay knows the "
            "built-in effects only)",
            vs ? "vertex" : "pixel", c->u.shader.name);
    kiln_result got;
    uint32_t id = 0;
    if (vs) {
        vd.num_inputs = c->u.shader.num_inputs;
        vd.num_varyings = c->u.shader.num_varyings;
        got = kiln_create_vertex_shader(r->dev, &vd, (kiln_vertex_shader *)&id);
    } else {
        pd.num_varyings = c->u.shader.num_varyings;
        pd.num_outputs = c->u.shader.num_outputs;
        pd.flags = c->u.shader.flags;
        got = kiln_create_pixel_shader(r->dev, &pd, (kiln_pixel_shader *)&id);
    }
    expect_ok(r, got);
    bind_id(r, c->out[0], id, vs ? K_VS : K_PS);
    return true;
}

static void run_texture(krp_replayer *r, const kcap_call *c)
{
    const kiln_texture2d_desc *d = &c->u.texture.desc;
    uint32_t depth = c->u.texture.depth ? c->u.texture.depth : 1;
    uint32_t mips = d->mip_levels ? d->mip_levels : krp_full_chain(d->width > depth ? d->width : depth, d->height);
    uint32_t layers = d->array_size ? d->array_size : 1;
    kiln_subresource_data *init = NULL;
    if (c->u.texture.has_init) {
        init = calloc((size_t)mips * layers, sizeof *init);
        if (!init) {
            krp_refuse(r, KILN_E_OUT_OF_MEMORY, "out of memory");
            return;
        }
        const uint8_t *p = c->u.texture.init.data;
        for (uint32_t s = 0; s < mips * layers; s++) {
            uint32_t m = s % mips, w = d->width >> m ? d->width >> m : 1,
                     h = d->height >> m ? d->height >> m : 1, z = depth >> m ? depth >> m : 1;
            init[s] = (kiln_subresource_data){p, kcap_row_bytes(d->format, w)};
            p += (size_t)kcap_row_bytes(d->format, w) * kcap_row_count(d->format, h) * z;
        }
        r->fs.bytes_uploaded += c->u.texture.init.size;
    }
    kiln_texture t = {0};
    if (c->op == KCAP_OP_CREATE_TEXTURE1D) {
        kiln_texture1d_desc d1 = {d->width, d->mip_levels, d->array_size, d->format, d->usage, d->bind_flags,
                                  d->cpu_access};
        expect_ok(r, kiln_create_texture1d(r->dev, &d1, init, &t));
    } else if (c->op == KCAP_OP_CREATE_TEXTURE3D) {
        kiln_texture3d_desc d3 = {d->width,  d->height, depth,         d->mip_levels,
                                  d->format, d->usage,  d->bind_flags, d->cpu_access};
        expect_ok(r, kiln_create_texture3d(r->dev, &d3, init, &t));
    } else if (c->op == KCAP_OP_CREATE_TEXTURE_CUBE) {
        kiln_texture_cube_desc dc = {d->width, d->mip_levels, d->format, d->usage, d->bind_flags, d->cpu_access};
        expect_ok(r, kiln_create_texture_cube(r->dev, &dc, init, &t));
    } else {
        expect_ok(r, kiln_create_texture2d(r->dev, d, init, &t));
    }
    free(init);
    krp_obj *o = bind_id(r, c->out[0], t.id, K_TEXTURE);
    if (!o)
        return;
    o->width = d->width;
    o->height = d->height;
    o->depth = depth;
    o->mips = mips;
    o->layers = layers;
    o->format = d->format;
    o->bind = d->bind_flags;
    /* render-target images are read back from 2D kinds (cubes: each face) */
    bool two_d = c->op == KCAP_OP_CREATE_TEXTURE2D || c->op == KCAP_OP_CREATE_TEXTURE_CUBE;
    o->target = t.id && two_d && (d->bind_flags & KILN_BIND_RENDER_TARGET) ? ++r->targets : 0;
}

static void run_swapchain_create(krp_replayer *r, const kcap_call *c, kiln_context *ctx)
{
    uint32_t i = 0;
    while (i < MAX_SWAPCHAINS && r->sc_used[i])
        i++;
    krp_swapchain *s = &r->scs[i];
    memset(s, 0, sizeof *s);
    s->id = c->out[0];
    s->r = r;
    pthread_mutex_init(&s->mu, NULL);
    r->sc_used[i] = true;
    kiln_swapchain_desc d = {
        .width = c->u.swapchain.width,
        .height = c->u.swapchain.height,
        .format = (kiln_format)c->u.swapchain.format,
        .buffer_count = c->u.swapchain.buffer_count,
        .mode = KILN_PRESENT_FIFO,
        .winsys = KILN_WINSYS_MEMORY,
        .frame_fn = on_frame,
        .frame_user = s,
    };
    expect_ok(r, kiln_swapchain_create(ctx, &d, &s->sc));
}

static void destroy_swapchain(krp_replayer *r, int i)
{
    krp_swapchain *s = &r->scs[i];
    kiln_swapchain_destroy(s->sc); /* shows what was presented */
    pthread_mutex_destroy(&s->mu);
    r->sc_used[i] = false;
}

static void run_query_get_data(krp_replayer *r, const kcap_call *c, kiln_context *ctx)
{
    /* Only whether the result is known is replayed (the live data is not
     * recorded): asking without data is valid for every query type. */
    kiln_query q = {xl(r, c->u.get_data.query)};
    void *p = NULL;
    uint32_t size = 0;
    double deadline = krp_now_ms() + (double)bounded(r, UINT64_MAX) / 1e6;
    kiln_result got;
    /* The live call saw the work complete: poll until this one does. */
    while ((got = kiln_query_get_data(ctx, q, p, size, c->u.get_data.flags)) ==
               KILN_E_WAS_STILL_DRAWING &&
           krp_now_ms() < deadline)
        sched_yield();
    expect_ok(r, got);
}

static void run(krp_replayer *r, const kcap_call *c)
{
    kiln_device *dev = r->dev;
    kiln_context *ctx = context(r, c->ctx);
    kiln_result got = KILN_OK;
    uint32_t id = 0;
    r->fs.calls += c->op != KCAP_OP_FAILED && c->op != KCAP_OP_FRAME && c->op != KCAP_OP_END &&
                   c->op != KCAP_OP_CONTEXT_STATE;
    switch (c->op) {
    case KCAP_OP_NONE:
    case KCAP_OP_COUNT:
    case KCAP_OP_DEVICE:
        break;
    case KCAP_OP_CONTEXT_STATE: {
        ctx = kiln_device_immediate_context(dev);
        if (c->ctx != 1 && (got = kiln_context_create(dev, &ctx)) != KILN_OK)
            break;
        krp_add_ctx(r, c->ctx);
        r->ctxs[krp_ctx_index(r, c->ctx)].ctx = ctx;
        kiln_buffer none[KILN_MAX_VERTEX_BUFFERS] = {{0}};
        kiln_ia_set_topology(ctx, (kiln_topology)c->u.state.topology);
        if (c->u.state.viewport_set)
            kiln_rs_set_viewport(ctx, &c->u.state.viewport);
        kiln_rs_set_scissor_rect(ctx, &c->u.state.scissor);
        kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, c->u.state.blend_factor);
        kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, c->u.state.stencil_ref);
        kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, (kiln_index_format)c->u.state.index_format,
                                 c->u.state.index_offset);
        kiln_ia_set_vertex_buffers(ctx, 0, KILN_MAX_VERTEX_BUFFERS, none, c->u.state.vb_stride,
                                   c->u.state.vb_offset);
        break;
    }
    case KCAP_OP_END:
        r->stop = true;
        break;
    case KCAP_OP_FAILED:
        r->fs.failed_live++;
        r->rep->failed_live++;
        break;
    case KCAP_OP_FRAME:
        end_frame(r, false);
        break;
    case KCAP_OP_DEVICE_GET_STATS: {
        kiln_device_stats s;
        got = kiln_device_get_stats(dev, &s);
        break;
    }
    case KCAP_OP_CREATE_BUFFER: {
        kiln_subresource_data init = {c->u.buffer.init.data, 0};
        kiln_buffer b = {0};
        got = kiln_create_buffer(dev, &c->u.buffer.desc, c->u.buffer.has_init ? &init : NULL, &b);
        krp_obj *o = bind_id(r, c->out[0], b.id, K_BUFFER);
        if (o) {
            o->width = c->u.buffer.desc.size;
            o->height = o->mips = o->layers = 1;
        }
        if (c->u.buffer.has_init)
            r->fs.bytes_uploaded += c->u.buffer.init.size;
        break;
    }
    case KCAP_OP_CREATE_TEXTURE2D:
    case KCAP_OP_CREATE_TEXTURE2D_MS:
    case KCAP_OP_CREATE_TEXTURE_CUBE:
    case KCAP_OP_CREATE_TEXTURE1D:
    case KCAP_OP_CREATE_TEXTURE3D:
        run_texture(r, c);
        return;
    case KCAP_OP_DESTROY_BUFFER:
        got = kiln_destroy_buffer(dev, (kiln_buffer){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_TEXTURE: {
        krp_obj *o = krp_find(&r->objs, c->u.obj.id);
        if (o)
            read_target(r, o);
        got = kiln_destroy_texture(dev, (kiln_texture){xl(r, c->u.obj.id)});
        break;
    }
    case KCAP_OP_BUFFER_GET_DESC: {
        kiln_buffer_desc d;
        got = kiln_buffer_get_desc(dev, (kiln_buffer){xl(r, c->u.obj.id)}, &d);
        break;
    }
    case KCAP_OP_TEXTURE_GET_DESC: {
        kiln_texture2d_desc d;
        got = kiln_texture_get_desc(dev, (kiln_texture){xl(r, c->u.obj.id)}, &d);
        break;
    }
    case KCAP_OP_TEXTURE3D_GET_DESC: {
        kiln_texture3d_desc d;
        got = kiln_texture3d_get_desc(dev, (kiln_texture){xl(r, c->u.obj.id)}, &d);
        break;
    }
    case KCAP_OP_CREATE_RTV:
        got = kiln_create_rtv(dev, (kiln_texture){xl(r, c->u.view.texture)},
                              c->u.view.has_desc ? &c->u.view.rtv : NULL, (kiln_rtv *)&id);
        bind_id(r, c->out[0], id, K_RTV);
        break;
    case KCAP_OP_CREATE_DSV: {
        const kiln_rtv_desc *v = &c->u.view.rtv;
        kiln_dsv_desc d = {v->format, v->mip_slice, v->first_array_slice, v->array_size};
        got = kiln_create_dsv(dev, (kiln_texture){xl(r, c->u.view.texture)},
                              c->u.view.has_desc ? &d : NULL, (kiln_dsv *)&id);
        bind_id(r, c->out[0], id, K_DSV);
        break;
    }
    case KCAP_OP_CREATE_SRV:
    case KCAP_OP_CREATE_SRV_DIM:
        got = kiln_create_srv(dev, (kiln_texture){xl(r, c->u.view.texture)},
                              c->u.view.has_desc ? &c->u.view.srv : NULL, (kiln_srv *)&id);
        bind_id(r, c->out[0], id, K_SRV);
        break;
    case KCAP_OP_CREATE_BUFFER_SRV:
        got = kiln_create_buffer_srv(dev, (kiln_buffer){xl(r, c->u.view.texture)},
                                     c->u.view.has_desc ? &c->u.view.buf : NULL, (kiln_srv *)&id);
        bind_id(r, c->out[0], id, K_SRV);
        break;
    case KCAP_OP_DESTROY_RTV:
        got = kiln_destroy_rtv(dev, (kiln_rtv){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_DSV:
        got = kiln_destroy_dsv(dev, (kiln_dsv){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_SRV:
        got = kiln_destroy_srv(dev, (kiln_srv){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_CLEAR_RTV:
        got = kiln_clear_rtv(ctx, (kiln_rtv){xl(r, c->u.clear_rtv.view)}, c->u.clear_rtv.color);
        break;
    case KCAP_OP_CLEAR_DSV:
        got = kiln_clear_dsv(ctx, (kiln_dsv){xl(r, c->u.clear_dsv.view)}, c->u.clear_dsv.flags,
                             c->u.clear_dsv.depth, (uint8_t)c->u.clear_dsv.stencil);
        break;
    case KCAP_OP_UPDATE_SUBRESOURCE:
    case KCAP_OP_UPDATE_SUBRESOURCE_3D: {
        static const uint8_t none[1];
        const kcap_rows *d = &c->u.update.data;
        /* 3D: the rows of each depth slice follow each other (tight) */
        const kiln_box *b = &c->u.update.box;
        uint32_t slice_rows = c->u.update.has_box ? b->bottom - b->top : 0;
        if (!c->u.update.has_box) {
            krp_obj *o = krp_find(&r->objs, c->u.update.dst);
            uint32_t m = o && o->mips ? c->u.update.sub % o->mips : 0;
            slice_rows = o ? (o->height >> m ? o->height >> m : 1) : 0;
        }
        got = kiln_update_subresource(ctx, (kiln_resource){xl(r, c->u.update.dst)}, c->u.update.sub,
                                      c->u.update.has_box ? &c->u.update.box : NULL,
                                      d->data ? d->data : none, d->row_bytes, d->row_bytes * slice_rows);
        r->fs.bytes_uploaded += (uint64_t)d->row_bytes * d->rows;
        break;
    }
    case KCAP_OP_COPY_RESOURCE:
        got = kiln_copy_resource(ctx, (kiln_resource){xl(r, c->u.copy.dst)},
                                 (kiln_resource){xl(r, c->u.copy.src)});
        break;
    case KCAP_OP_RESOLVE_SUBRESOURCE:
        got = kiln_resolve_subresource(ctx, (kiln_resource){xl(r, c->u.resolve.dst)}, c->u.resolve.dst_sub,
                                       (kiln_resource){xl(r, c->u.resolve.src)}, c->u.resolve.src_sub,
                                       c->u.resolve.format);
        break;
    case KCAP_OP_COPY_SUBRESOURCE_REGION:
        got = kiln_copy_subresource_region(
            ctx, (kiln_resource){xl(r, c->u.region.dst)}, c->u.region.dst_sub, c->u.region.x,
            c->u.region.y, c->u.region.z, (kiln_resource){xl(r, c->u.region.src)},
            c->u.region.src_sub, c->u.region.has_box ? &c->u.region.box : NULL);
        break;
    case KCAP_OP_MAP:
        run_map(r, c, ctx);
        return;
    case KCAP_OP_UNMAP:
        run_unmap(r, c, ctx);
        return;
    case KCAP_OP_FLUSH:
        got = kiln_flush(ctx);
        break;
    case KCAP_OP_FINISH:
        got = kiln_finish(ctx);
        break;
    case KCAP_OP_CONTEXT_CREATE: {
        kiln_context *n = NULL;
        got = kiln_context_create(dev, &n);
        krp_add_ctx(r, c->out[0]);
        r->ctxs[krp_ctx_index(r, c->out[0])].ctx = n;
        break;
    }
    case KCAP_OP_CONTEXT_DESTROY: /* its maps were unmapped by records before this one */
        got = kiln_context_destroy(ctx);
        krp_remove_ctx(r, c->ctx);
        break;
    case KCAP_OP_CREATE_TIMELINE:
        got = kiln_create_timeline(dev, c->u.tl.value, (kiln_timeline *)&id);
        bind_id(r, c->out[0], id, K_TIMELINE);
        break;
    case KCAP_OP_DESTROY_TIMELINE:
        got = kiln_destroy_timeline(dev, (kiln_timeline){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_TIMELINE_GET_VALUE: {
        uint64_t v;
        got = kiln_timeline_get_value(dev, (kiln_timeline){xl(r, c->u.obj.id)}, &v);
        break;
    }
    case KCAP_OP_TIMELINE_SIGNAL:
        got = kiln_timeline_signal(dev, (kiln_timeline){xl(r, c->u.tl.timeline)}, c->u.tl.value);
        break;
    case KCAP_OP_CREATE_FENCE:
        got = kiln_create_fence(dev, (kiln_timeline){xl(r, c->u.tl.timeline)}, c->u.tl.value,
                                (kiln_fence *)&id);
        bind_id(r, c->out[0], id, K_FENCE);
        break;
    case KCAP_OP_FENCE_MERGE:
        got = kiln_fence_merge(dev, (kiln_fence){xl(r, c->u.merge.a)},
                               (kiln_fence){xl(r, c->u.merge.b)}, (kiln_fence *)&id);
        bind_id(r, c->out[0], id, K_FENCE);
        break;
    case KCAP_OP_DESTROY_FENCE:
        got = kiln_destroy_fence(dev, (kiln_fence){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_FENCE_POLL: {
        kiln_fence_status s;
        got = kiln_fence_poll(dev, (kiln_fence){xl(r, c->u.obj.id)}, &s);
        break;
    }
    case KCAP_OP_FENCE_WAIT:
        got = kiln_fence_wait(dev, (kiln_fence){xl(r, c->u.wait.fence)},
                              bounded(r, c->u.wait.timeout));
        break;
    case KCAP_OP_FENCE_WAIT_ASYNC:
        got = kiln_fence_wait_async(dev, (kiln_fence){xl(r, c->u.obj.id)}, ignore_fence, NULL);
        break;
    case KCAP_OP_CONTEXT_SIGNAL:
        got = kiln_context_signal(ctx, (kiln_timeline){xl(r, c->u.tl.timeline)}, c->u.tl.value);
        break;
    case KCAP_OP_CONTEXT_WAIT:
        got = kiln_context_wait(ctx, (kiln_fence){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_CONTEXT_INSERT_FENCE:
        got = kiln_context_insert_fence(ctx, (kiln_fence *)&id);
        bind_id(r, c->out[0], id, K_FENCE);
        break;
    case KCAP_OP_CONTEXT_SYNC_TOKEN: {
        kiln_sync_token t = {0};
        got = kiln_context_sync_token(ctx, &t);
        krp_obj *o = bind_id(r, c->u.token.timeline, t.timeline, K_TIMELINE);
        if (o)
            o->shared = true;
        if (got == KILN_OK && t.value != c->u.token.value && r->rep->mismatches++ == 0)
            snprintf(r->rep->first_mismatch, sizeof r->rep->first_mismatch,
                     "record at offset %zu (%s): live token value %llu, replay %llu", r->offset,
                     kcap_op_name(c->op), (unsigned long long)c->u.token.value,
                     (unsigned long long)t.value);
        break;
    }
    case KCAP_OP_CONTEXT_WAIT_SYNC_TOKEN:
        got = kiln_context_wait_sync_token(
            ctx, (kiln_sync_token){xl(r, c->u.token.timeline), 0, c->u.token.value});
        break;
    case KCAP_OP_WAIT_SYNC_TOKEN:
        got = kiln_wait_sync_token(
            dev, (kiln_sync_token){xl(r, c->u.token.timeline), 0, c->u.token.value},
            bounded(r, c->u.token.timeout));
        break;
    case KCAP_OP_CREATE_QUERY:
        got = kiln_create_query(dev, (kiln_query_type)c->u.query.type, (kiln_query *)&id);
        bind_id(r, c->out[0], id, K_QUERY);
        break;
    case KCAP_OP_DESTROY_QUERY:
        got = kiln_destroy_query(dev, (kiln_query){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_QUERY_BEGIN:
        got = kiln_query_begin(ctx, (kiln_query){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_QUERY_END:
        got = kiln_query_end(ctx, (kiln_query){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_QUERY_GET_DATA:
        run_query_get_data(r, c, ctx);
        return;
    case KCAP_OP_CREATE_VERTEX_SHADER:
    case KCAP_OP_CREATE_PIXEL_SHADER:
        run_shader(r, c);
        return;
    case KCAP_OP_DESTROY_VERTEX_SHADER:
        got = kiln_destroy_vertex_shader(dev, (kiln_vertex_shader){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_PIXEL_SHADER:
        got = kiln_destroy_pixel_shader(dev, (kiln_pixel_shader){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_CREATE_GEOMETRY_SHADER:
    case KCAP_OP_CREATE_GEOMETRY_SHADER_SO:
        run_geometry_shader(r, c);
        return;
    case KCAP_OP_SO_SET_TARGETS: {
        kiln_buffer b[KILN_SO_BUFFER_SLOTS];
        for (uint32_t i = 0; i < c->u.slots.count; i++)
            b[i] = (kiln_buffer){xl(r, c->u.slots.ids[i])};
        got = kiln_so_set_targets(ctx, c->u.slots.count, b, c->u.slots.has_offsets ? c->u.slots.offsets : NULL);
        break;
    }
    case KCAP_OP_DESTROY_GEOMETRY_SHADER:
        got = kiln_destroy_geometry_shader(dev, (kiln_geometry_shader){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_GS_SET_SHADER:
        got = kiln_gs_set_shader(ctx, (kiln_geometry_shader){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_CREATE_INPUT_LAYOUT:
        got = kiln_create_input_layout(dev, &c->u.layout.desc,
                                       (kiln_vertex_shader){xl(r, c->u.layout.vs)},
                                       (kiln_input_layout *)&id);
        bind_id(r, c->out[0], id, K_LAYOUT);
        break;
    case KCAP_OP_DESTROY_INPUT_LAYOUT:
        got = kiln_destroy_input_layout(dev, (kiln_input_layout){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_CREATE_RASTERIZER_STATE:
        got = kiln_create_rasterizer_state(dev, &c->u.rasterizer, (kiln_rasterizer_state *)&id);
        bind_id(r, c->out[0], id, K_RS);
        break;
    case KCAP_OP_CREATE_DEPTH_STENCIL_STATE:
        got = kiln_create_depth_stencil_state(dev, &c->u.depth_stencil,
                                              (kiln_depth_stencil_state *)&id);
        bind_id(r, c->out[0], id, K_DSS);
        break;
    case KCAP_OP_CREATE_BLEND_STATE:
    case KCAP_OP_CREATE_BLEND_STATE_8:
    case KCAP_OP_CREATE_BLEND_STATE_A2C:
        got = kiln_create_blend_state(dev, &c->u.blend, (kiln_blend_state *)&id);
        bind_id(r, c->out[0], id, K_BS);
        break;
    case KCAP_OP_CREATE_SAMPLER:
    case KCAP_OP_CREATE_SAMPLER_CMP:
    case KCAP_OP_CREATE_SAMPLER_EXT:
    case KCAP_OP_CREATE_SAMPLER_W:
        got = kiln_create_sampler(dev, &c->u.sampler, (kiln_sampler *)&id);
        bind_id(r, c->out[0], id, K_SAMPLER);
        break;
    case KCAP_OP_DESTROY_RASTERIZER_STATE:
        got = kiln_destroy_rasterizer_state(dev, (kiln_rasterizer_state){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_DEPTH_STENCIL_STATE:
        got = kiln_destroy_depth_stencil_state(dev, (kiln_depth_stencil_state){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_BLEND_STATE:
        got = kiln_destroy_blend_state(dev, (kiln_blend_state){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_SAMPLER:
        got = kiln_destroy_sampler(dev, (kiln_sampler){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_IA_SET_INPUT_LAYOUT:
        got = kiln_ia_set_input_layout(ctx, (kiln_input_layout){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_VS_SET_SHADER:
        got = kiln_vs_set_shader(ctx, (kiln_vertex_shader){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_PS_SET_SHADER:
        got = kiln_ps_set_shader(ctx, (kiln_pixel_shader){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_RS_SET_STATE:
        got = kiln_rs_set_state(ctx, (kiln_rasterizer_state){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_IA_SET_VERTEX_BUFFERS:
    case KCAP_OP_VS_SET_CONSTANT_BUFFERS:
    case KCAP_OP_PS_SET_CONSTANT_BUFFERS:
    case KCAP_OP_PS_SET_SHADER_RESOURCES:
    case KCAP_OP_PS_SET_SAMPLERS:
    case KCAP_OP_VS_SET_SHADER_RESOURCES:
    case KCAP_OP_VS_SET_SAMPLERS:
    case KCAP_OP_GS_SET_SHADER_RESOURCES:
    case KCAP_OP_GS_SET_SAMPLERS: {
        enum { N = KILN_MAX_SHADER_RESOURCES }; /* the largest range (decoded within its op's) */
        uint32_t n = c->u.slots.count, ids[N];
        for (uint32_t i = 0; i < n; i++)
            ids[i] = xl(r, c->u.slots.ids[i]);
        /* Every handle type is a struct of one uint32_t: pass arrays of them. */
        kiln_buffer b[N];
        kiln_srv v[N];
        kiln_sampler s[N];
        for (uint32_t i = 0; i < n; i++) {
            b[i].id = ids[i];
            v[i].id = ids[i];
            s[i].id = ids[i];
        }
        uint32_t start = c->u.slots.start;
        if (c->op == KCAP_OP_IA_SET_VERTEX_BUFFERS)
            got = kiln_ia_set_vertex_buffers(ctx, start, n, b, c->u.slots.strides,
                                             c->u.slots.offsets);
        else if (c->op == KCAP_OP_VS_SET_CONSTANT_BUFFERS)
            got = kiln_vs_set_constant_buffers(ctx, start, n, b);
        else if (c->op == KCAP_OP_PS_SET_CONSTANT_BUFFERS)
            got = kiln_ps_set_constant_buffers(ctx, start, n, b);
        else if (c->op == KCAP_OP_PS_SET_SHADER_RESOURCES)
            got = kiln_ps_set_shader_resources(ctx, start, n, v);
        else if (c->op == KCAP_OP_VS_SET_SHADER_RESOURCES)
            got = kiln_vs_set_shader_resources(ctx, start, n, v);
        else if (c->op == KCAP_OP_VS_SET_SAMPLERS)
            got = kiln_vs_set_samplers(ctx, start, n, s);
        else if (c->op == KCAP_OP_GS_SET_SHADER_RESOURCES)
            got = kiln_gs_set_shader_resources(ctx, start, n, v);
        else if (c->op == KCAP_OP_GS_SET_SAMPLERS)
            got = kiln_gs_set_samplers(ctx, start, n, s);
        else
            got = kiln_ps_set_samplers(ctx, start, n, s);
        break;
    }
    case KCAP_OP_IA_SET_INDEX_BUFFER:
        got = kiln_ia_set_index_buffer(ctx, (kiln_buffer){xl(r, c->u.ib.buffer)},
                                       (kiln_index_format)c->u.ib.format, c->u.ib.offset);
        break;
    case KCAP_OP_IA_SET_TOPOLOGY:
        got = kiln_ia_set_topology(ctx, (kiln_topology)c->u.topology.topology);
        break;
    case KCAP_OP_RS_SET_VIEWPORT:
        got = kiln_rs_set_viewport(ctx, &c->u.viewport);
        break;
    case KCAP_OP_RS_SET_SCISSOR_RECT:
        got = kiln_rs_set_scissor_rect(ctx, &c->u.scissor);
        break;
    case KCAP_OP_OM_SET_RENDER_TARGETS: {
        kiln_rtv v[KILN_MAX_RENDER_TARGETS];
        for (uint32_t i = 0; i < c->u.rts.count; i++)
            v[i].id = xl(r, c->u.rts.rtv[i]);
        got = kiln_om_set_render_targets(ctx, c->u.rts.count, v, (kiln_dsv){xl(r, c->u.rts.dsv)});
        break;
    }
    case KCAP_OP_OM_SET_BLEND_STATE:
        got = kiln_om_set_blend_state(ctx, (kiln_blend_state){xl(r, c->u.blend_set.state)},
                                      c->u.blend_set.has_factor ? c->u.blend_set.factor : NULL);
        break;
    case KCAP_OP_OM_SET_DEPTH_STENCIL_STATE:
        got = kiln_om_set_depth_stencil_state(
            ctx, (kiln_depth_stencil_state){xl(r, c->u.dss_set.state)}, c->u.dss_set.ref);
        break;
    case KCAP_OP_DRAW:
        got = kiln_draw(ctx, c->u.draw.count, c->u.draw.start);
        r->fs.draws++;
        break;
    case KCAP_OP_DRAW_INDEXED:
        got = kiln_draw_indexed(ctx, c->u.draw.count, c->u.draw.start, c->u.draw.base_vertex);
        r->fs.draws++;
        break;
    case KCAP_OP_DRAW_INSTANCED:
        got = kiln_draw_instanced(ctx, c->u.draw.count, c->u.draw.instances, c->u.draw.start,
                                  c->u.draw.start_instance);
        r->fs.draws++;
        break;
    case KCAP_OP_DRAW_INDEXED_INSTANCED:
        got =
            kiln_draw_indexed_instanced(ctx, c->u.draw.count, c->u.draw.instances, c->u.draw.start,
                                        c->u.draw.base_vertex, c->u.draw.start_instance);
        r->fs.draws++;
        break;
    case KCAP_OP_DRAW_AUTO:
        got = kiln_draw_auto(ctx);
        r->fs.draws++;
        break;
    case KCAP_OP_GENERATE_MIPS:
        got = kiln_generate_mips(ctx, (kiln_srv){xl(r, c->u.obj.id)});
        break;
    case KCAP_OP_SWAPCHAIN_CREATE:
        run_swapchain_create(r, c, ctx);
        return;
    case KCAP_OP_SWAPCHAIN_DESTROY:
        destroy_swapchain(r, krp_sc_index(r, c->swapchain));
        break;
    case KCAP_OP_SWAPCHAIN_GET_BACK_BUFFER: {
        krp_swapchain *s = &r->scs[krp_sc_index(r, c->swapchain)];
        kiln_texture t = {0};
        kiln_rtv v = {0};
        got = kiln_swapchain_get_back_buffer(s->sc, &t, &v);
        krp_obj *o = bind_id(r, c->out[0], t.id, K_TEXTURE);
        if (o)
            o->shared = true;
        if ((o = bind_id(r, c->out[1], v.id, K_RTV)) != NULL)
            o->shared = true;
        break;
    }
    case KCAP_OP_SWAPCHAIN_PRESENT: {
        krp_swapchain *s = &r->scs[krp_sc_index(r, c->swapchain)];
        pthread_mutex_lock(&s->mu);
        s->frames[s->presented % FRAME_RING] = r->fs.frame;
        pthread_mutex_unlock(&s->mu);
        got = kiln_swapchain_present(s->sc);
        if (got == KILN_OK)
            s->presented++;
        expect_ok(r, got);
        end_frame(r, true);
        return;
    }
    case KCAP_OP_SWAPCHAIN_RESIZE:
        got = kiln_swapchain_resize(r->scs[krp_sc_index(r, c->swapchain)].sc, c->u.swapchain.width,
                                    c->u.swapchain.height);
        break;
    case KCAP_OP_SWAPCHAIN_GET_STATS: {
        kiln_swapchain_stats s;
        got = kiln_swapchain_get_stats(r->scs[krp_sc_index(r, c->swapchain)].sc, &s);
        break;
    }
    case KCAP_OP_SWAPCHAIN_WAIT_IDLE:
        got = kiln_swapchain_wait_idle(r->scs[krp_sc_index(r, c->swapchain)].sc);
        break;
    case KCAP_OP_SET_PREDICATION:
        got = kiln_set_predication(ctx, (kiln_query){xl(r, c->u.pred.query)}, (int)c->u.pred.value);
        break;
    }
    expect_ok(r, got);
}

static bool is_destroy(kcap_op op)
{
    switch (op) {
    case KCAP_OP_DESTROY_BUFFER:
    case KCAP_OP_DESTROY_TEXTURE:
    case KCAP_OP_DESTROY_RTV:
    case KCAP_OP_DESTROY_DSV:
    case KCAP_OP_DESTROY_SRV:
    case KCAP_OP_DESTROY_TIMELINE:
    case KCAP_OP_DESTROY_FENCE:
    case KCAP_OP_DESTROY_QUERY:
    case KCAP_OP_DESTROY_VERTEX_SHADER:
    case KCAP_OP_DESTROY_PIXEL_SHADER:
    case KCAP_OP_DESTROY_GEOMETRY_SHADER:
    case KCAP_OP_DESTROY_INPUT_LAYOUT:
    case KCAP_OP_DESTROY_RASTERIZER_STATE:
    case KCAP_OP_DESTROY_DEPTH_STENCIL_STATE:
    case KCAP_OP_DESTROY_BLEND_STATE:
    case KCAP_OP_DESTROY_SAMPLER:
        return true;
    default:
        return false;
    }
}

static int by_target(const void *a, const void *b)
{
    const krp_obj *x = *(const krp_obj *const *)a, *y = *(const krp_obj *const *)b;
    return (x->target > y->target) - (x->target < y->target);
}

/* The render targets still alive at the end, in creation order. */
static void read_live_targets(krp_replayer *r)
{
    if (r->has_presents || !r->d->image_fn)
        return;
    const krp_obj **list = malloc(sizeof *list * (r->targets + 1));
    uint32_t n = 0;
    for (uint32_t i = 0; list && i < r->objs.cap; i++) {
        const krp_obj *o = &r->objs.v[i];
        if (o->key && !o->dead && o->kind == K_TEXTURE && o->target && n < r->targets)
            list[n++] = o;
    }
    if (list)
        qsort(list, n, sizeof *list, by_target);
    for (uint32_t i = 0; i < n; i++)
        read_target(r, list[i]);
    free(list);
}

static void execute(krp_replayer *r)
{
    const kcap_replay_desc *d = r->d;
    kiln_device_desc dd = {
        .backend = d->backend,
        .num_threads = d->num_threads,
        .command_ring_capacity = r->device.u.device.ring_capacity,
        .transfer_ring_size = r->device.u.device.transfer_size,
        .exec_mode = d->exec_mode,
        .log_fn = d->log_fn,
        .log_user = d->log_user,
    };
    kiln_result res = kiln_device_create(&dd, &r->dev);
    if (res != KILN_OK) {
        r->c = NULL;
        r->offset = 0;
        krp_refuse(r, res, "cannot create the replay device (%s)", kiln_result_string(res));
        return;
    }
    if (d->setup_fn)
        d->setup_fn(r->dev, d->user);
    r->frame_start = krp_now_ms();
    size_t off = r->first;
    kcap_call c;
    krp_next_record(r, &off, &c); /* DEVICE: the device is made */
    while (!r->stop && off < r->len) {
        if (!krp_next_record(r, &off, &c))
            break;
        r->c = &c;
        run(r, &c);
        if (is_destroy(c.op)) {
            krp_obj *o = krp_find(&r->objs, c.u.obj.id);
            if (o)
                o->dead = true;
        }
    }
    bool by_range = d->frame_range && r->fs.frame > d->last_frame;
    if (!by_range && (r->fs.calls || r->fs.failed_live))
        end_frame(r, false); /* the calls after the last mark */
    if (r->rep->result == KILN_OK)
        read_live_targets(r);
    for (int i = 0; i < (int)MAX_SWAPCHAINS; i++)
        if (r->sc_used[i])
            destroy_swapchain(r, i);
    kiln_device_destroy(r->dev);
    r->dev = NULL;
}

kiln_result kcap_replay(const uint8_t *bytes, size_t len, const kcap_replay_desc *desc,
                        kcap_replay_report *rep)
{
    memset(rep, 0, sizeof *rep);
    double t0 = krp_now_ms();
    krp_replayer *r = calloc(1, sizeof *r);
    if (!r) {
        rep->result = KILN_E_OUT_OF_MEMORY;
        snprintf(rep->error.message, sizeof rep->error.message, "out of memory");
        return rep->result;
    }
    r->d = desc;
    r->rep = rep;
    pthread_mutex_init(&r->image_mu, NULL);
    r->bytes = bytes;
    r->len = len;
    if (krp_validate(r)) {
        /* Pass 2 rebuilds the tables with the replay's ids. */
        free(r->objs.v);
        r->objs = (krp_objmap){0};
        r->nctx = 0;
        memset(r->sc_used, 0, sizeof r->sc_used);
        r->stop = false;
        execute(r);
    }
    free(r->objs.v);
    pthread_mutex_destroy(&r->image_mu);
    free(r);
    rep->wall_ms = krp_now_ms() - t0;
    return rep->result;
}

uint8_t *kcap_read_file(const char *path, size_t *len, kcap_error *err)
{
    memset(err, 0, sizeof *err);
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        snprintf(err->message, sizeof err->message, "cannot open %s", path);
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1u << 20;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                snprintf(err->message, sizeof err->message, "out of memory reading %s", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        snprintf(err->message, sizeof err->message, "cannot read %s", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}
