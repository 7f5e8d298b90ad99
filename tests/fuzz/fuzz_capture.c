/*
 * The capture fuzzer (issue 14; docs/capture.md "Fuzzing"): arbitrary bytes
 * are read as a capture stream by the replay's own decoder in its tolerant
 * mode (kcap_decode with KCAP_DECODE_TOLERANT: enums and counts reduced
 * into range, unknown ops mapped onto known ones), and every record that
 * decodes becomes the public call it names, on a fresh device.
 *
 * Unlike kcap_replay, nothing is checked first: handles are translated when
 * an earlier record of the same input created them (so destroyed ones
 * arrive stale and others may be of the wrong type) and passed raw
 * otherwise; context 0 and swapchain ids that name nothing become NULL. What
 * the harness bounds, it bounds only to keep one input small and finite,
 * never to protect kiln from a value the API must refuse:
 * - sizes inside the API's limits are reduced (textures to 256x256, 4
 *   slices; buffers to 64 KiB; draws to 3,000 vertices and 8 instances),
 *   sizes beyond them go through unchanged;
 * - the bytes behind a pointer the API reads (initial data, updates) come
 *   from a zeroed scratch area large enough for any reduced size, with the
 *   record's bytes at its start;
 * - client waits are bounded to 1 ms; once a server wait has been queued,
 *   every timeline the input created is signaled to the largest value
 *   before the next call (any call that queues work may wait for a command
 *   slot or transfer space, which a held-back stream never frees), so that
 *   a server wait on a timeline nobody signals (which would block any
 *   program forever) cannot hang the input; for that signal to be allowed,
 *   the input's own queued signals (kiln_context_signal) stay below 2^62
 *   (larger ones are skipped);
 * - swapchains display to the MEMORY or NULL target (no files, no windows).
 *
 * The same file builds as a libFuzzer target (KILN_FUZZ=ON, clang) and,
 * with tests/fuzz/driver.c, as a plain program that replays files (gcc).
 */
#include "capture/capture.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEX 256u
#define MAX_SLICES 4u
#define MAX_BUFFER (64u << 10)
#define MAX_VERTICES 3000u
#define MAX_INSTANCES 8u
#define MAX_ROW_PITCH 8192u
#define SCRATCH_SIZE (4u << 20) /* MAX_ROW_PITCH * MAX_TEX + a row, and more */
#define MAX_RECORDS 1024u /* calls per input */
#define MAX_IDS 512u
#define MAX_CTX 8u
#define MAX_SC 4u
#define MAX_MAPS 16u
#define MAX_TIMELINES MAX_RECORDS /* every one the input can create */
#define WAIT_NS 1000000ull
#define SIGNAL_LIMIT (1ull << 62) /* signals the input queues stay below */

typedef struct fz_map {
    uint32_t res, sub; /* live ids */
    kiln_context *ctx;
    kiln_mapped_subresource m;
} fz_map;

typedef struct fz {
    kiln_device *dev;
    uint32_t from[MAX_IDS], to[MAX_IDS]; /* record id -> live id */
    uint32_t nids;
    uint32_t ctx_id[MAX_CTX];
    kiln_context *ctx[MAX_CTX];
    uint32_t sc_id[MAX_SC];
    kiln_swapchain *sc[MAX_SC];
    fz_map maps[MAX_MAPS];
    uint32_t nmaps;
    uint32_t timelines[MAX_TIMELINES]; /* live ids */
    uint32_t ntimelines;
    bool server_wait;                  /* a server wait may be pending */
    uint8_t *scratch;
} fz;

static void quiet_log(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    (void)level, (void)id, (void)message, (void)user;
}

static uint32_t xl(const fz *f, uint32_t id)
{
    for (uint32_t i = f->nids; i-- > 0;)
        if (f->from[i] == id)
            return f->to[i];
    return id; /* a handle nothing created: hostile, passed as it is */
}

static void bind(fz *f, uint32_t from, uint32_t to)
{
    if (from && to && f->nids < MAX_IDS) {
        f->from[f->nids] = from;
        f->to[f->nids++] = to;
    }
}

/* Context 0 is NULL (refused by every call); an id the input never
 * created is the immediate context, so that its calls do something. */
static kiln_context *context(fz *f, uint32_t id)
{
    if (id == 0)
        return NULL;
    for (uint32_t i = 0; i < MAX_CTX; i++)
        if (f->ctx[i] && f->ctx_id[i] == id)
            return f->ctx[i];
    return kiln_device_immediate_context(f->dev);
}

static kiln_swapchain *swapchain(fz *f, uint32_t id)
{
    for (uint32_t i = 0; i < MAX_SC; i++)
        if (f->sc[i] && f->sc_id[i] == id)
            return f->sc[i];
    return NULL;
}

/* Before a call that blocks until queued work completes: no server wait
 * on a timeline nobody signals may hold that work back. */
static void release_waits(fz *f)
{
    if (!f->server_wait)
        return;
    f->server_wait = false;
    for (uint32_t i = 0; i < f->ntimelines; i++)
        kiln_timeline_signal(f->dev, (kiln_timeline){f->timelines[i]}, UINT64_MAX);
}

/* A size inside the API's limit reduced to `cap`; outside it, unchanged. */
static uint32_t reduce(uint32_t v, uint32_t cap, uint32_t api_limit)
{
    return v > cap && v <= api_limit ? cap : v;
}

/* The scratch area with `data` at its start (zeros after it). */
static const uint8_t *scratch_with(fz *f, const uint8_t *data, uint64_t size)
{
    static uint64_t dirty; /* bytes written last time: cleared again */
    memset(f->scratch, 0, dirty);
    dirty = size < SCRATCH_SIZE ? size : SCRATCH_SIZE;
    if (data && dirty)
        memcpy(f->scratch, data, dirty);
    return f->scratch;
}

static void ignore_fence(kiln_fence fence, kiln_result status, void *user)
{
    (void)fence, (void)status, (void)user;
}

static void ignore_frame(const kiln_frame *frame, void *user)
{
    (void)frame, (void)user;
}

static void create_shader(fz *f, const kcap_call *c, bool vertex)
{
    /* Shaders are C functions: a name picks one of the built-in effects,
     * whose functions read exactly what their descs declare. */
    uint32_t h = 2166136261u;
    for (const char *s = c->u.shader.name; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    kiln_vertex_shader_desc vs;
    kiln_pixel_shader_desc ps;
    kiln_effect_get((kiln_effect)(h % KILN_EFFECT_COUNT), &vs, &ps);
    if (vertex) {
        kiln_vertex_shader out = {0};
        kiln_create_vertex_shader(f->dev, &vs, &out);
        bind(f, c->out[0], out.id);
    } else {
        kiln_pixel_shader out = {0};
        kiln_create_pixel_shader(f->dev, &ps, &out);
        bind(f, c->out[0], out.id);
    }
}

/* Geometry shaders for any desc: they read the vertices the call hands
 * them and emit vertices of the most floats a desc can declare (extra
 * floats are not read), past max_vertices too (dropped by kiln). */
#define FZ_GS_FLOATS (4 + 4 * KILN_MAX_VARYINGS)

static void fz_gs_pass(kiln_gs_args *a)
{
    float v[FZ_GS_FLOATS] = {0};
    uint32_t n = a->in_stride < FZ_GS_FLOATS ? a->in_stride : FZ_GS_FLOATS;
    for (uint32_t k = 0; k < a->num_vertices; k++) {
        memcpy(v, a->in + (size_t)k * a->in_stride, sizeof(float) * n);
        kiln_gs_emit(a, v);
    }
    kiln_gs_cut(a);
    a->out_primitive_id = a->primitive_id * 3u + 1u;
    a->out_rt_array_index = a->primitive_id % 5u; /* used when declared */
    kiln_gs_emit(a, v);
}

static void fz_gs_expand(kiln_gs_args *a)
{
    float v[FZ_GS_FLOATS] = {0};
    uint32_t n = a->in_stride < FZ_GS_FLOATS ? a->in_stride : FZ_GS_FLOATS;
    for (uint32_t e = 0; e < 300; e++) {
        memcpy(v, a->in + (size_t)(e % a->num_vertices) * a->in_stride, sizeof(float) * n);
        v[0] += (e & 1 ? 0.05f : -0.05f) * v[3];
        v[1] += (e & 2 ? 0.05f : -0.05f) * v[3];
        kiln_gs_emit(a, v);
        if (e % 7 == 6)
            kiln_gs_cut(a);
    }
}

/* CREATE_GEOMETRY_SHADER, and CREATE_GEOMETRY_SHADER_SO with or without
 * a geometry shader (its declaration as the record holds it: kiln
 * validates it). */
static void create_geometry_shader(fz *f, const kcap_call *c)
{
    uint32_t h = 2166136261u;
    for (const char *s = c->u.shader.name; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    kiln_geometry_shader_desc d = {
        .fn = h & 1 ? fz_gs_expand : fz_gs_pass,
        .input = (kiln_gs_input)c->u.shader.gs_input,
        .output = (kiln_gs_output)c->u.shader.gs_output,
        .max_vertices = c->u.shader.max_vertices,
        .num_varyings = c->u.shader.num_varyings,
        .flags = c->u.shader.flags,
    };
    kiln_geometry_shader out = {0};
    if (c->op == KCAP_OP_CREATE_GEOMETRY_SHADER_SO) {
        kiln_so_desc so = {c->u.shader.so, c->u.shader.so_count, c->u.shader.so_stride};
        kiln_create_geometry_shader_with_so(f->dev, c->u.shader.has_gs ? &d : NULL, &so, &out);
    } else {
        kiln_create_geometry_shader(f->dev, &d, &out);
    }
    bind(f, c->out[0], out.id);
}

static void create_texture(fz *f, const kcap_call *c)
{
    kiln_texture2d_desc d = c->u.texture.desc;
    d.width = reduce(d.width, MAX_TEX, 8192);
    d.height = reduce(d.height, MAX_TEX, 8192);
    d.array_size = reduce(d.array_size, MAX_SLICES, 2048);
    if (c->op == KCAP_OP_CREATE_TEXTURE_CUBE) /* six faces, whatever the reduction: init has one entry each */
        d.array_size = 6;
    kiln_subresource_data init[16 * MAX_SLICES];
    const uint8_t *bytes = scratch_with(f, c->u.texture.init.data, c->u.texture.init.size);
    uint32_t n = (d.mip_levels ? d.mip_levels : 16) * (d.array_size ? d.array_size : 1);
    bool with_init = c->u.texture.has_init && n <= sizeof init / sizeof init[0];
    for (uint32_t i = 0; with_init && i < n; i++)
        init[i] = (kiln_subresource_data){bytes, MAX_TEX * 16};
    kiln_texture out = {0};
    const kiln_subresource_data *in = with_init ? init : NULL;
    /* 3D: depth slices too, so that init (rows MAX_TEX * 16 bytes apart)
     * and any update of the whole texture (rows up to MAX_ROW_PITCH
     * apart) read inside the scratch bytes */
    uint32_t depth = reduce(c->u.texture.depth, MAX_TEX, 2048);
    uint32_t h = d.height ? (d.height < MAX_TEX ? d.height : MAX_TEX) : 1;
    uint32_t max_depth = SCRATCH_SIZE / (MAX_ROW_PITCH * h);
    if (depth <= 2048 && depth > max_depth)
        depth = max_depth;
    switch (c->op) { /* 1.4: the other kinds, from the same reduced desc */
    case KCAP_OP_CREATE_TEXTURE1D:
        kiln_create_texture1d(f->dev,
                              &(kiln_texture1d_desc){d.width, d.mip_levels, d.array_size, d.format, d.usage,
                                                     d.bind_flags, d.cpu_access},
                              in, &out);
        break;
    case KCAP_OP_CREATE_TEXTURE3D:
        kiln_create_texture3d(f->dev,
                              &(kiln_texture3d_desc){d.width, d.height, depth, d.mip_levels, d.format, d.usage,
                                                     d.bind_flags, d.cpu_access},
                              in, &out);
        break;
    case KCAP_OP_CREATE_TEXTURE_CUBE:
        kiln_create_texture_cube(f->dev,
                                 &(kiln_texture_cube_desc){d.width, d.mip_levels, d.format, d.usage, d.bind_flags,
                                                           d.cpu_access},
                                 in, &out);
        break;
    default:
        kiln_create_texture2d(f->dev, &d, in, &out);
        break;
    }
    bind(f, c->out[0], out.id);
}

static fz_map *find_map(fz *f, uint32_t res, uint32_t sub)
{
    for (uint32_t i = 0; i < f->nmaps; i++)
        if (f->maps[i].res == res && f->maps[i].sub == sub)
            return &f->maps[i];
    return NULL;
}

/* Destroying a resource unmaps it: its mapped memory is no longer the
 * program's to write. */
static void forget_maps(fz *f, uint32_t res)
{
    for (uint32_t k = 0; k < f->nmaps;)
        if (f->maps[k].res == res)
            f->maps[k] = f->maps[--f->nmaps];
        else
            k++;
}

/* The record's bytes into the mapped memory, never past it. */
static void write_mapped(const fz_map *m, const kcap_call *c)
{
    uint8_t *dst = m->m.data;
    uint64_t size = m->m.depth_pitch;
    if (!dst)
        return;
    if (c->u.unmap.kind == KCAP_UNMAP_FULL) {
        const kcap_rows *rows = &c->u.unmap.full;
        for (uint32_t r = 0; r < rows->rows; r++) {
            uint64_t at = (uint64_t)r * m->m.row_pitch, n = rows->row_bytes;
            if (at >= size)
                break;
            if (n > size - at)
                n = size - at;
            memcpy(dst + at, rows->data + (size_t)r * rows->pitch, n);
        }
    } else if (c->u.unmap.kind == KCAP_UNMAP_RANGES) {
        kcap_range_iter it;
        uint64_t off, n;
        const uint8_t *src;
        kcap_range_begin(&c->u.unmap.ranges, &it);
        while (kcap_range_next(&it, &off, &n, &src))
            if (off < size)
                memcpy(dst + off, src, n < size - off ? n : size - off);
    }
}

static void run(fz *f, const kcap_call *c)
{
    kiln_device *dev = f->dev;
    kiln_context *ctx = context(f, c->ctx);
    kiln_swapchain *sc = swapchain(f, c->swapchain);
#define ID(x) xl(f, (x))
    switch (c->op) {
    case KCAP_OP_NONE:
    case KCAP_OP_DEVICE:
    case KCAP_OP_END:
    case KCAP_OP_FAILED:
    case KCAP_OP_FRAME:
        break;
    case KCAP_OP_CONTEXT_STATE:
        if (ctx) {
            kiln_ia_set_topology(ctx, (kiln_topology)c->u.state.topology);
            if (c->u.state.viewport_set)
                kiln_rs_set_viewport(ctx, &c->u.state.viewport);
            kiln_rs_set_scissor_rect(ctx, &c->u.state.scissor);
        }
        break;
    case KCAP_OP_DEVICE_GET_STATS: {
        kiln_device_stats st;
        kiln_device_get_stats(dev, &st);
        break;
    }
    case KCAP_OP_CREATE_BUFFER: {
        kiln_buffer_desc d = c->u.buffer.desc;
        d.size = reduce(d.size, MAX_BUFFER, UINT32_MAX);
        kiln_subresource_data init = {scratch_with(f, c->u.buffer.init.data, c->u.buffer.init.size), 0};
        kiln_buffer out = {0};
        kiln_create_buffer(dev, &d, c->u.buffer.has_init ? &init : NULL, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_TEXTURE2D:
    case KCAP_OP_CREATE_TEXTURE2D_MS:
    case KCAP_OP_CREATE_TEXTURE1D:
    case KCAP_OP_CREATE_TEXTURE3D:
    case KCAP_OP_CREATE_TEXTURE_CUBE:
        create_texture(f, c);
        break;
    case KCAP_OP_DESTROY_BUFFER:
        if (kiln_destroy_buffer(dev, (kiln_buffer){ID(c->u.obj.id)}) == KILN_OK)
            forget_maps(f, ID(c->u.obj.id));
        break;
    case KCAP_OP_DESTROY_TEXTURE:
        if (kiln_destroy_texture(dev, (kiln_texture){ID(c->u.obj.id)}) == KILN_OK)
            forget_maps(f, ID(c->u.obj.id));
        break;
    case KCAP_OP_BUFFER_GET_DESC: {
        kiln_buffer_desc d;
        kiln_buffer_get_desc(dev, (kiln_buffer){ID(c->u.obj.id)}, &d);
        break;
    }
    case KCAP_OP_TEXTURE_GET_DESC: {
        kiln_texture2d_desc d;
        kiln_texture_get_desc(dev, (kiln_texture){ID(c->u.obj.id)}, &d);
        break;
    }
    case KCAP_OP_TEXTURE3D_GET_DESC: {
        kiln_texture3d_desc d;
        kiln_texture3d_get_desc(dev, (kiln_texture){ID(c->u.obj.id)}, &d);
        break;
    }
    case KCAP_OP_CREATE_RTV: {
        kiln_rtv out = {0};
        kiln_create_rtv(dev, (kiln_texture){ID(c->u.view.texture)},
                        c->u.view.has_desc ? &c->u.view.rtv : NULL, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_DSV: {
        kiln_dsv out = {0};
        kiln_create_dsv(dev, (kiln_texture){ID(c->u.view.texture)},
                        c->u.view.has_desc ? (const kiln_dsv_desc *)&c->u.view.rtv : NULL, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_SRV:
    case KCAP_OP_CREATE_SRV_DIM: {
        kiln_srv out = {0};
        kiln_create_srv(dev, (kiln_texture){ID(c->u.view.texture)},
                        c->u.view.has_desc ? &c->u.view.srv : NULL, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_BUFFER_SRV: {
        kiln_srv out = {0};
        kiln_create_buffer_srv(dev, (kiln_buffer){ID(c->u.view.texture)},
                               c->u.view.has_desc ? &c->u.view.buf : NULL, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_DESTROY_RTV:
        kiln_destroy_rtv(dev, (kiln_rtv){ID(c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_DSV:
        kiln_destroy_dsv(dev, (kiln_dsv){ID(c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_SRV:
        kiln_destroy_srv(dev, (kiln_srv){ID(c->u.obj.id)});
        break;
    case KCAP_OP_CLEAR_RTV:
        kiln_clear_rtv(ctx, (kiln_rtv){ID(c->u.clear_rtv.view)}, c->u.clear_rtv.color);
        break;
    case KCAP_OP_CLEAR_DSV:
        kiln_clear_dsv(ctx, (kiln_dsv){ID(c->u.clear_dsv.view)}, c->u.clear_dsv.flags,
                       c->u.clear_dsv.depth, (uint8_t)c->u.clear_dsv.stencil);
        break;
    case KCAP_OP_UPDATE_SUBRESOURCE:
    case KCAP_OP_UPDATE_SUBRESOURCE_3D: {
        /* the data is the record's rows (3D: every slice's, but a box the
         * record does not fill reads the scratch zeros past them, and a
         * depth pitch of 0 keeps each slice inside what the call reads) */
        const kcap_rows *rows = &c->u.update.data;
        uint32_t pitch = rows->row_bytes > MAX_ROW_PITCH ? MAX_ROW_PITCH : rows->row_bytes;
        const uint8_t *data = scratch_with(f, rows->data, (uint64_t)rows->row_bytes * rows->rows);
        kiln_update_subresource(ctx, (kiln_resource){ID(c->u.update.dst)}, c->u.update.sub,
                                c->u.update.has_box ? &c->u.update.box : NULL, data, pitch, 0);
        break;
    }
    case KCAP_OP_COPY_RESOURCE:
        kiln_copy_resource(ctx, (kiln_resource){ID(c->u.copy.dst)}, (kiln_resource){ID(c->u.copy.src)});
        break;
    case KCAP_OP_RESOLVE_SUBRESOURCE:
        kiln_resolve_subresource(ctx, (kiln_resource){ID(c->u.resolve.dst)}, c->u.resolve.dst_sub,
                                 (kiln_resource){ID(c->u.resolve.src)}, c->u.resolve.src_sub, c->u.resolve.format);
        break;
    case KCAP_OP_COPY_SUBRESOURCE_REGION:
        kiln_copy_subresource_region(ctx, (kiln_resource){ID(c->u.region.dst)}, c->u.region.dst_sub,
                                     c->u.region.x, c->u.region.y, c->u.region.z,
                                     (kiln_resource){ID(c->u.region.src)}, c->u.region.src_sub,
                                     c->u.region.has_box ? &c->u.region.box : NULL);
        break;
    case KCAP_OP_MAP: {
        if (!(c->u.map.flags & KILN_MAP_FLAG_DO_NOT_WAIT)) /* may wait for queued work */
            release_waits(f);
        kiln_mapped_subresource m;
        uint32_t res = ID(c->u.map.res);
        if (kiln_map(ctx, (kiln_resource){res}, c->u.map.sub, (kiln_map_type)c->u.map.type,
                     c->u.map.flags, &m) == KILN_OK &&
            f->nmaps < MAX_MAPS)
            f->maps[f->nmaps++] = (fz_map){res, c->u.map.sub, ctx, m};
        break;
    }
    case KCAP_OP_UNMAP: {
        uint32_t res = ID(c->u.unmap.res);
        fz_map *m = find_map(f, res, c->u.unmap.sub);
        if (m && m->ctx == ctx)
            write_mapped(m, c);
        if (kiln_unmap(ctx, (kiln_resource){res}, c->u.unmap.sub) == KILN_OK && m)
            *m = f->maps[--f->nmaps];
        break;
    }
    case KCAP_OP_FLUSH:
        kiln_flush(ctx);
        break;
    case KCAP_OP_FINISH:
        release_waits(f);
        kiln_finish(ctx);
        break;
    case KCAP_OP_CONTEXT_CREATE:
        for (uint32_t i = 0; i < MAX_CTX; i++)
            if (!f->ctx[i]) {
                if (kiln_context_create(dev, &f->ctx[i]) == KILN_OK)
                    f->ctx_id[i] = c->out[0];
                break;
            }
        break;
    case KCAP_OP_CONTEXT_DESTROY:
        release_waits(f);
        for (uint32_t i = 0; i < MAX_CTX; i++)
            if (f->ctx[i] && f->ctx[i] == ctx) {
                for (uint32_t k = 0; k < f->nmaps;) /* it unmaps what it mapped */
                    if (f->maps[k].ctx == ctx)
                        f->maps[k] = f->maps[--f->nmaps];
                    else
                        k++;
                kiln_context_destroy(ctx);
                f->ctx[i] = NULL;
                return;
            }
        kiln_context_destroy(ctx); /* the immediate context, or NULL: refused */
        break;
    case KCAP_OP_CREATE_TIMELINE: {
        kiln_timeline out = {0};
        if (kiln_create_timeline(dev, c->u.tl.value, &out) == KILN_OK &&
            f->ntimelines < MAX_TIMELINES)
            f->timelines[f->ntimelines++] = out.id;
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_DESTROY_TIMELINE:
        kiln_destroy_timeline(dev, (kiln_timeline){ID(c->u.obj.id)});
        break;
    case KCAP_OP_TIMELINE_GET_VALUE: {
        uint64_t v;
        kiln_timeline_get_value(dev, (kiln_timeline){ID(c->u.obj.id)}, &v);
        break;
    }
    case KCAP_OP_TIMELINE_SIGNAL:
        kiln_timeline_signal(dev, (kiln_timeline){ID(c->u.tl.timeline)}, c->u.tl.value);
        break;
    case KCAP_OP_CREATE_FENCE: {
        kiln_fence out = {0};
        kiln_create_fence(dev, (kiln_timeline){ID(c->u.tl.timeline)}, c->u.tl.value, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_FENCE_MERGE: {
        kiln_fence out = {0};
        kiln_fence_merge(dev, (kiln_fence){ID(c->u.merge.a)}, (kiln_fence){ID(c->u.merge.b)}, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_DESTROY_FENCE:
        kiln_destroy_fence(dev, (kiln_fence){ID(c->u.obj.id)});
        break;
    case KCAP_OP_FENCE_POLL: {
        kiln_fence_status st;
        kiln_fence_poll(dev, (kiln_fence){ID(c->u.obj.id)}, &st);
        break;
    }
    case KCAP_OP_FENCE_WAIT:
        kiln_fence_wait(dev, (kiln_fence){ID(c->u.wait.fence)},
                        c->u.wait.timeout < WAIT_NS ? c->u.wait.timeout : WAIT_NS);
        break;
    case KCAP_OP_FENCE_WAIT_ASYNC:
        kiln_fence_wait_async(dev, (kiln_fence){ID(c->u.wait.fence)}, ignore_fence, NULL);
        break;
    case KCAP_OP_CONTEXT_SIGNAL:
        if (c->u.tl.value < SIGNAL_LIMIT)
            kiln_context_signal(ctx, (kiln_timeline){ID(c->u.tl.timeline)}, c->u.tl.value);
        break;
    case KCAP_OP_CONTEXT_WAIT:
        f->server_wait = true;
        kiln_context_wait(ctx, (kiln_fence){ID(c->u.wait.fence)});
        break;
    case KCAP_OP_CONTEXT_INSERT_FENCE: {
        kiln_fence out = {0};
        kiln_context_insert_fence(ctx, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CONTEXT_SYNC_TOKEN: {
        kiln_sync_token t;
        kiln_context_sync_token(ctx, &t);
        break;
    }
    case KCAP_OP_CONTEXT_WAIT_SYNC_TOKEN: {
        kiln_sync_token t = {ID(c->u.token.timeline), 0, c->u.token.value};
        f->server_wait = true;
        kiln_context_wait_sync_token(ctx, t);
        break;
    }
    case KCAP_OP_WAIT_SYNC_TOKEN: {
        kiln_sync_token t = {ID(c->u.token.timeline), 0, c->u.token.value};
        kiln_wait_sync_token(dev, t, c->u.token.timeout < WAIT_NS ? c->u.token.timeout : WAIT_NS);
        break;
    }
    case KCAP_OP_CREATE_QUERY: {
        kiln_query out = {0};
        kiln_create_query(dev, (kiln_query_type)c->u.query.type, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_DESTROY_QUERY:
        kiln_destroy_query(dev, (kiln_query){ID(c->u.obj.id)});
        break;
    case KCAP_OP_QUERY_BEGIN:
        kiln_query_begin(ctx, (kiln_query){ID(c->u.obj.id)});
        break;
    case KCAP_OP_QUERY_END:
        kiln_query_end(ctx, (kiln_query){ID(c->u.obj.id)});
        break;
    case KCAP_OP_QUERY_GET_DATA: {
        /* Every type's data size in turn (the record does not say which),
         * picked by the recorded id's bits, and wrong sizes too. */
        static const uint32_t sizes[] = {4, 8, 16, 64, 0, 3};
        uint64_t data[8] = {0};
        uint32_t size = sizes[c->u.get_data.query % (sizeof sizes / sizeof sizes[0])];
        kiln_query_get_data(ctx, (kiln_query){ID(c->u.get_data.query)},
                            c->u.get_data.has_data ? data : NULL,
                            c->u.get_data.has_data ? size : 0, c->u.get_data.flags);
        break;
    }
    case KCAP_OP_SET_PREDICATION:
        kiln_set_predication(ctx, (kiln_query){ID(c->u.pred.query)}, (int)c->u.pred.value);
        break;
    case KCAP_OP_CREATE_VERTEX_SHADER:
        create_shader(f, c, true);
        break;
    case KCAP_OP_CREATE_PIXEL_SHADER:
        create_shader(f, c, false);
        break;
    case KCAP_OP_DESTROY_VERTEX_SHADER:
        kiln_destroy_vertex_shader(dev, (kiln_vertex_shader){ID(c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_PIXEL_SHADER:
        kiln_destroy_pixel_shader(dev, (kiln_pixel_shader){ID(c->u.obj.id)});
        break;
    case KCAP_OP_CREATE_GEOMETRY_SHADER:
    case KCAP_OP_CREATE_GEOMETRY_SHADER_SO:
        create_geometry_shader(f, c);
        break;
    case KCAP_OP_SO_SET_TARGETS: {
        kiln_buffer b[KILN_SO_BUFFER_SLOTS];
        for (uint32_t i = 0; i < c->u.slots.count; i++)
            b[i] = (kiln_buffer){ID(c->u.slots.ids[i])};
        kiln_so_set_targets(ctx, c->u.slots.count, b, c->u.slots.has_offsets ? c->u.slots.offsets : NULL);
        break;
    }
    case KCAP_OP_DRAW_AUTO:
        kiln_draw_auto(ctx);
        break;
    case KCAP_OP_DESTROY_GEOMETRY_SHADER:
        kiln_destroy_geometry_shader(dev, (kiln_geometry_shader){ID(c->u.obj.id)});
        break;
    case KCAP_OP_GS_SET_SHADER:
        kiln_gs_set_shader(ctx, (kiln_geometry_shader){ID(c->u.obj.id)});
        break;
    case KCAP_OP_CREATE_INPUT_LAYOUT: {
        kiln_input_layout out = {0};
        kiln_create_input_layout(dev, &c->u.layout.desc, (kiln_vertex_shader){ID(c->u.layout.vs)}, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_DESTROY_INPUT_LAYOUT:
        kiln_destroy_input_layout(dev, (kiln_input_layout){ID(c->u.obj.id)});
        break;
    case KCAP_OP_CREATE_RASTERIZER_STATE: {
        kiln_rasterizer_state out = {0};
        kiln_create_rasterizer_state(dev, &c->u.rasterizer, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_DEPTH_STENCIL_STATE: {
        kiln_depth_stencil_state out = {0};
        kiln_create_depth_stencil_state(dev, &c->u.depth_stencil, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_BLEND_STATE:
    case KCAP_OP_CREATE_BLEND_STATE_8:
    case KCAP_OP_CREATE_BLEND_STATE_A2C: {
        kiln_blend_state out = {0};
        kiln_create_blend_state(dev, &c->u.blend, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_CREATE_SAMPLER:
    case KCAP_OP_CREATE_SAMPLER_CMP:
    case KCAP_OP_CREATE_SAMPLER_EXT:
    case KCAP_OP_CREATE_SAMPLER_W: {
        kiln_sampler out = {0};
        kiln_create_sampler(dev, &c->u.sampler, &out);
        bind(f, c->out[0], out.id);
        break;
    }
    case KCAP_OP_DESTROY_RASTERIZER_STATE:
        kiln_destroy_rasterizer_state(dev, (kiln_rasterizer_state){ID(c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_DEPTH_STENCIL_STATE:
        kiln_destroy_depth_stencil_state(dev, (kiln_depth_stencil_state){ID(c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_BLEND_STATE:
        kiln_destroy_blend_state(dev, (kiln_blend_state){ID(c->u.obj.id)});
        break;
    case KCAP_OP_DESTROY_SAMPLER:
        kiln_destroy_sampler(dev, (kiln_sampler){ID(c->u.obj.id)});
        break;
    case KCAP_OP_IA_SET_INPUT_LAYOUT:
        kiln_ia_set_input_layout(ctx, (kiln_input_layout){ID(c->u.obj.id)});
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
        /* The arrays hold the largest range (128 views): a larger count is
         * what the call must refuse, so it gets that count and arrays it
         * will not read past. */
        enum { N = KILN_MAX_SHADER_RESOURCES };
        uint32_t ids[N] = {0};
        for (uint32_t i = 0; i < N; i++)
            ids[i] = ID(c->u.slots.ids[i]);
        uint32_t start = c->u.slots.start, n = c->u.slots.count;
        if (n > N)
            n = N + 1; /* beyond every stage's limit: refused before reading */
        switch (c->op) {
        case KCAP_OP_IA_SET_VERTEX_BUFFERS:
            kiln_ia_set_vertex_buffers(ctx, start, n, (const kiln_buffer *)ids, c->u.slots.strides,
                                       c->u.slots.offsets);
            break;
        case KCAP_OP_VS_SET_CONSTANT_BUFFERS:
            kiln_vs_set_constant_buffers(ctx, start, n, (const kiln_buffer *)ids);
            break;
        case KCAP_OP_PS_SET_CONSTANT_BUFFERS:
            kiln_ps_set_constant_buffers(ctx, start, n, (const kiln_buffer *)ids);
            break;
        case KCAP_OP_PS_SET_SHADER_RESOURCES:
            kiln_ps_set_shader_resources(ctx, start, n, (const kiln_srv *)ids);
            break;
        case KCAP_OP_VS_SET_SHADER_RESOURCES:
            kiln_vs_set_shader_resources(ctx, start, n, (const kiln_srv *)ids);
            break;
        case KCAP_OP_VS_SET_SAMPLERS:
            kiln_vs_set_samplers(ctx, start, n, (const kiln_sampler *)ids);
            break;
        case KCAP_OP_GS_SET_SHADER_RESOURCES:
            kiln_gs_set_shader_resources(ctx, start, n, (const kiln_srv *)ids);
            break;
        case KCAP_OP_GS_SET_SAMPLERS:
            kiln_gs_set_samplers(ctx, start, n, (const kiln_sampler *)ids);
            break;
        default:
            kiln_ps_set_samplers(ctx, start, n, (const kiln_sampler *)ids);
            break;
        }
        break;
    }
    case KCAP_OP_IA_SET_INDEX_BUFFER:
        kiln_ia_set_index_buffer(ctx, (kiln_buffer){ID(c->u.ib.buffer)}, (kiln_index_format)c->u.ib.format,
                                 c->u.ib.offset);
        break;
    case KCAP_OP_IA_SET_TOPOLOGY:
        kiln_ia_set_topology(ctx, (kiln_topology)c->u.topology.topology);
        break;
    case KCAP_OP_VS_SET_SHADER:
        kiln_vs_set_shader(ctx, (kiln_vertex_shader){ID(c->u.obj.id)});
        break;
    case KCAP_OP_PS_SET_SHADER:
        kiln_ps_set_shader(ctx, (kiln_pixel_shader){ID(c->u.obj.id)});
        break;
    case KCAP_OP_RS_SET_STATE:
        kiln_rs_set_state(ctx, (kiln_rasterizer_state){ID(c->u.obj.id)});
        break;
    case KCAP_OP_RS_SET_VIEWPORT:
        kiln_rs_set_viewport(ctx, &c->u.viewport);
        break;
    case KCAP_OP_RS_SET_SCISSOR_RECT:
        kiln_rs_set_scissor_rect(ctx, &c->u.scissor);
        break;
    case KCAP_OP_OM_SET_RENDER_TARGETS: {
        kiln_rtv rtv[KILN_MAX_RENDER_TARGETS];
        for (uint32_t i = 0; i < KILN_MAX_RENDER_TARGETS; i++)
            rtv[i].id = ID(c->u.rts.rtv[i]);
        uint32_t n = c->u.rts.count > KILN_MAX_RENDER_TARGETS ? KILN_MAX_RENDER_TARGETS + 1 : c->u.rts.count;
        kiln_om_set_render_targets(ctx, n, rtv, (kiln_dsv){ID(c->u.rts.dsv)});
        break;
    }
    case KCAP_OP_OM_SET_BLEND_STATE:
        kiln_om_set_blend_state(ctx, (kiln_blend_state){ID(c->u.blend_set.state)},
                                c->u.blend_set.has_factor ? c->u.blend_set.factor : NULL);
        break;
    case KCAP_OP_OM_SET_DEPTH_STENCIL_STATE:
        kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){ID(c->u.dss_set.state)},
                                        c->u.dss_set.ref);
        break;
    case KCAP_OP_DRAW:
    case KCAP_OP_DRAW_INDEXED:
    case KCAP_OP_DRAW_INSTANCED:
    case KCAP_OP_DRAW_INDEXED_INSTANCED: {
        uint32_t n = reduce(c->u.draw.count, MAX_VERTICES, 1u << 28);
        uint32_t inst = reduce(c->u.draw.instances, MAX_INSTANCES, 1u << 20);
        if (c->op == KCAP_OP_DRAW)
            kiln_draw(ctx, n, c->u.draw.start);
        else if (c->op == KCAP_OP_DRAW_INDEXED)
            kiln_draw_indexed(ctx, n, c->u.draw.start, c->u.draw.base_vertex);
        else if (c->op == KCAP_OP_DRAW_INSTANCED)
            kiln_draw_instanced(ctx, n, inst, c->u.draw.start, c->u.draw.start_instance);
        else
            kiln_draw_indexed_instanced(ctx, n, inst, c->u.draw.start, c->u.draw.base_vertex,
                                        c->u.draw.start_instance);
        break;
    }
    case KCAP_OP_GENERATE_MIPS:
        kiln_generate_mips(ctx, (kiln_srv){ID(c->u.obj.id)});
        break;
    case KCAP_OP_SWAPCHAIN_CREATE: {
        uint32_t i = 0;
        while (i < MAX_SC && f->sc[i])
            i++;
        if (i == MAX_SC)
            break;
        kiln_swapchain_desc d = {
            .width = reduce(c->u.swapchain.width, 64, 8192),
            .height = reduce(c->u.swapchain.height, 64, 8192),
            .format = (kiln_format)c->u.swapchain.format,
            .buffer_count = c->u.swapchain.buffer_count,
            .mode = (kiln_present_mode)c->u.swapchain.mode,
            .winsys = c->u.swapchain.winsys & 1 ? KILN_WINSYS_MEMORY : KILN_WINSYS_NULL,
            .frame_fn = ignore_frame,
        };
        if (kiln_swapchain_create(ctx, &d, &f->sc[i]) == KILN_OK)
            f->sc_id[i] = c->out[0];
        else
            f->sc[i] = NULL;
        break;
    }
    case KCAP_OP_SWAPCHAIN_DESTROY:
        release_waits(f);
        for (uint32_t i = 0; i < MAX_SC; i++)
            if (sc && f->sc[i] == sc)
                f->sc[i] = NULL;
        kiln_swapchain_destroy(sc);
        break;
    case KCAP_OP_SWAPCHAIN_GET_BACK_BUFFER: {
        release_waits(f);
        kiln_texture tex = {0};
        kiln_rtv rtv = {0};
        if (kiln_swapchain_get_back_buffer(sc, &tex, &rtv) == KILN_OK) {
            bind(f, c->out[0], tex.id);
            bind(f, c->out[1], rtv.id);
        }
        break;
    }
    case KCAP_OP_SWAPCHAIN_PRESENT:
        kiln_swapchain_present(sc);
        break;
    case KCAP_OP_SWAPCHAIN_RESIZE:
        release_waits(f);
        kiln_swapchain_resize(sc, reduce(c->u.swapchain.width, 64, 8192),
                              reduce(c->u.swapchain.height, 64, 8192));
        break;
    case KCAP_OP_SWAPCHAIN_GET_STATS: {
        kiln_swapchain_stats st;
        kiln_swapchain_get_stats(sc, &st);
        break;
    }
    case KCAP_OP_SWAPCHAIN_WAIT_IDLE:
        release_waits(f);
        kiln_swapchain_wait_idle(sc);
        break;
    default:
        break;
    }
#undef ID
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *scratch;
    if (!scratch && !(scratch = calloc(1, SCRATCH_SIZE)))
        return 0;
    /* A capture file starts after its header; anything else is records. */
    size_t off = 0;
    kcap_header h;
    kcap_error err;
    if (size >= KCAP_HEADER_SIZE && !memcmp(data, KCAP_MAGIC, 8) &&
        kcap_decode_header(data, size, &h, &err))
        off = h.size;
    /* The first byte that is not a header chooses the device. */
    uint8_t mode = off < size ? data[off] : 0;
    /* Small rings (every input makes a device: big ones cost more to
     * create than the calls cost to run), and full rings often. */
    kiln_device_desc dd = {
        .exec_mode = mode & 1 ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC,
        .num_threads = 1 + (mode >> 1 & 1),
        .command_ring_capacity = mode & 4 ? 4 : 64,
        .transfer_ring_size = mode & 8 ? 4096 : 65536,
        .log_fn = quiet_log,
    };
    fz *f = calloc(1, sizeof *f);
    if (!f)
        return 0;
    f->scratch = scratch;
    if (kiln_device_create(&dd, &f->dev) != KILN_OK) {
        free(f);
        return 0;
    }
    size_t records = 0;
    while (off < size && records < MAX_RECORDS) {
        kcap_call c;
        size_t next;
        if (!kcap_decode(data, size, off, KCAP_DECODE_TOLERANT, &c, &next, &err)) {
            off++; /* resynchronize on the next byte */
            continue;
        }
        /* A server wait holds back its stream only until the next call: a
         * call that queues work may wait for a slot it would never free. */
        if (c.op != KCAP_OP_CONTEXT_WAIT && c.op != KCAP_OP_CONTEXT_WAIT_SYNC_TOKEN)
            release_waits(f);
        run(f, &c);
        records++;
        off = next;
    }
    /* Teardown as an application would: unmap, release waits, destroy. */
    for (uint32_t i = 0; i < f->nmaps; i++)
        kiln_unmap(f->maps[i].ctx, (kiln_resource){f->maps[i].res}, f->maps[i].sub);
    f->server_wait = true;
    release_waits(f);
    for (uint32_t i = 0; i < MAX_SC; i++)
        kiln_swapchain_destroy(f->sc[i]);
    for (uint32_t i = 0; i < MAX_CTX; i++)
        if (f->ctx[i])
            kiln_context_destroy(f->ctx[i]);
    kiln_device_destroy(f->dev);
    free(f);
    return 0;
}
