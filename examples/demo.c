/*
 * demo.c - the demo core shared by the kiln_demo runner and the golden-image
 * test: errors, the objects a scene owns, pipeline helpers and demo_render
 * (see scenes.h).
 */
#include "scenes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------- */

int demo_fail_call(const demo *d, const char *call, kiln_result r, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    fprintf(stderr, "kiln_demo: scene %s: %s failed: %s (%s:%d)\n", d->scene, call,
            kiln_result_string(r), base ? base + 1 : file, line);
    return -1;
}

int demo_fail(const demo *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kiln_demo: scene %s: ", d->scene);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

/* ---------------------------------------------------------------------------
 * Owned objects
 * ------------------------------------------------------------------------- */

static int own(demo *d, demo_owned_kind kind, uint32_t id)
{
    if (d->nowned == DEMO_MAX_OWNED)
        return demo_fail(d, "too many objects (raise DEMO_MAX_OWNED)");
    d->owned[d->nowned].kind = kind;
    d->owned[d->nowned].id = id;
    d->nowned++;
    return 0;
}

int demo_new_texture_desc(demo *d, const kiln_texture2d_desc *desc,
                          const kiln_subresource_data *init, kiln_texture *out)
{
    TRY(d, kiln_create_texture2d(d->dev, desc, init, out));
    return own(d, DEMO_OWNED_TEXTURE, out->id);
}

int demo_try_texture_desc(demo *d, const kiln_texture2d_desc *desc,
                          const kiln_subresource_data *init, kiln_texture *out)
{
    kiln_result r = kiln_create_texture2d(d->dev, desc, init, out);
    if (r == KILN_E_UNSUPPORTED)
        return 1; /* the backend has no such textures (osmesa: sRGB, BC, ...) */
    TRY(d, r);
    return own(d, DEMO_OWNED_TEXTURE, out->id);
}

int demo_new_texture_cube(demo *d, const kiln_texture_cube_desc *desc, kiln_texture *out)
{
    TRY(d, kiln_create_texture_cube(d->dev, desc, NULL, out));
    return own(d, DEMO_OWNED_TEXTURE, out->id);
}

int demo_new_texture(demo *d, uint32_t w, uint32_t h, uint32_t array_size, kiln_usage usage,
                     uint32_t bind, uint32_t cpu_access, kiln_texture *out)
{
    kiln_texture2d_desc desc = {
        .width = w,
        .height = h,
        .mip_levels = 1,
        .array_size = array_size,
        .format = DEMO_FORMAT,
        .usage = usage,
        .bind_flags = bind,
        .cpu_access = cpu_access,
    };
    return demo_new_texture_desc(d, &desc, NULL, out);
}

int demo_new_rtv(demo *d, kiln_texture t, uint32_t slice, kiln_rtv *out)
{
    kiln_rtv_desc desc = {
        .format = KILN_FORMAT_UNKNOWN, .first_array_slice = slice, .array_size = 1};
    TRY(d, kiln_create_rtv(d->dev, t, &desc, out));
    return own(d, DEMO_OWNED_RTV, out->id);
}

int demo_new_rtv_desc(demo *d, kiln_texture t, const kiln_rtv_desc *desc, kiln_rtv *out)
{
    TRY(d, kiln_create_rtv(d->dev, t, desc, out));
    return own(d, DEMO_OWNED_RTV, out->id);
}

int demo_new_dsv_desc(demo *d, kiln_texture t, const kiln_dsv_desc *desc, kiln_dsv *out)
{
    TRY(d, kiln_create_dsv(d->dev, t, desc, out));
    return own(d, DEMO_OWNED_DSV, out->id);
}

int demo_new_srv_desc(demo *d, kiln_texture t, const kiln_srv_desc *desc, kiln_srv *out)
{
    TRY(d, kiln_create_srv(d->dev, t, desc, out));
    return own(d, DEMO_OWNED_SRV, out->id);
}

int demo_new_dsv(demo *d, kiln_texture t, kiln_dsv *out)
{
    TRY(d, kiln_create_dsv(d->dev, t, NULL, out));
    return own(d, DEMO_OWNED_DSV, out->id);
}

int demo_new_srv(demo *d, kiln_texture t, kiln_srv *out)
{
    TRY(d, kiln_create_srv(d->dev, t, NULL, out));
    return own(d, DEMO_OWNED_SRV, out->id);
}

int demo_new_depth(demo *d, uint32_t w, uint32_t h, kiln_format format, kiln_dsv *out)
{
    kiln_texture2d_desc desc = {
        .width = w,
        .height = h,
        .mip_levels = 1,
        .format = format,
        .bind_flags = KILN_BIND_DEPTH_STENCIL,
    };
    kiln_texture t;
    return demo_new_texture_desc(d, &desc, NULL, &t) || demo_new_dsv(d, t, out) ? -1 : 0;
}

int demo_new_buffer(demo *d, uint32_t size, kiln_usage usage, uint32_t bind, const void *data,
                    kiln_buffer *out)
{
    kiln_buffer_desc desc = {.size = size, .usage = usage, .bind_flags = bind};
    kiln_subresource_data init = {.data = data};
    TRY(d, kiln_create_buffer(d->dev, &desc, data ? &init : NULL, out));
    return own(d, DEMO_OWNED_BUFFER, out->id);
}

int demo_new_rasterizer(demo *d, const kiln_rasterizer_desc *desc, kiln_rasterizer_state *out)
{
    TRY(d, kiln_create_rasterizer_state(d->dev, desc, out));
    return own(d, DEMO_OWNED_RASTERIZER, out->id);
}

int demo_new_depth_stencil(demo *d, const kiln_depth_stencil_desc *desc,
                           kiln_depth_stencil_state *out)
{
    TRY(d, kiln_create_depth_stencil_state(d->dev, desc, out));
    return own(d, DEMO_OWNED_DEPTH_STENCIL, out->id);
}

int demo_new_blend(demo *d, const kiln_blend_desc *desc, kiln_blend_state *out)
{
    TRY(d, kiln_create_blend_state(d->dev, desc, out));
    return own(d, DEMO_OWNED_BLEND, out->id);
}

int demo_new_sampler(demo *d, const kiln_sampler_desc *desc, kiln_sampler *out)
{
    TRY(d, kiln_create_sampler(d->dev, desc, out));
    return own(d, DEMO_OWNED_SAMPLER, out->id);
}

int demo_new_vertex_shader(demo *d, const kiln_vertex_shader_desc *desc, kiln_vertex_shader *out)
{
    TRY(d, kiln_create_vertex_shader(d->dev, desc, out));
    return own(d, DEMO_OWNED_VS, out->id);
}

int demo_new_pixel_shader(demo *d, const kiln_pixel_shader_desc *desc, kiln_pixel_shader *out)
{
    TRY(d, kiln_create_pixel_shader(d->dev, desc, out));
    return own(d, DEMO_OWNED_PS, out->id);
}

int demo_new_geometry_shader(demo *d, const kiln_geometry_shader_desc *desc,
                             kiln_geometry_shader *out)
{
    kiln_result r = kiln_create_geometry_shader(d->dev, desc, out);
    if (r == KILN_E_UNSUPPORTED)
        return 1; /* the backend has no geometry stage (osmesa) */
    TRY(d, r);
    return own(d, DEMO_OWNED_GS, out->id);
}

int demo_new_layout(demo *d, kiln_vertex_shader vs, const kiln_input_element *elements,
                    uint32_t num_elements, kiln_input_layout *out)
{
    kiln_input_layout_desc layout = {.num_elements = num_elements};

    if (num_elements > KILN_MAX_INPUT_ELEMENTS)
        return demo_fail(d, "an input layout of %u elements", num_elements);
    memcpy(layout.elements, elements, sizeof elements[0] * num_elements);
    TRY(d, kiln_create_input_layout(d->dev, &layout, vs, out));
    return own(d, DEMO_OWNED_LAYOUT, out->id);
}

int demo_new_effect(demo *d, kiln_effect effect, const kiln_input_element *elements,
                    uint32_t num_elements, demo_effect *out)
{
    kiln_vertex_shader_desc vs;
    kiln_pixel_shader_desc ps;

    TRY(d, kiln_effect_get(effect, &vs, &ps));
    if (demo_new_vertex_shader(d, &vs, &out->vs) || demo_new_pixel_shader(d, &ps, &out->ps))
        return -1;
    return demo_new_layout(d, out->vs, elements, num_elements, &out->layout);
}

static kiln_result destroy_owned(kiln_device *dev, demo_owned_kind kind, uint32_t id)
{
    switch (kind) {
    case DEMO_OWNED_TEXTURE:
        return kiln_destroy_texture(dev, (kiln_texture){id});
    case DEMO_OWNED_BUFFER:
        return kiln_destroy_buffer(dev, (kiln_buffer){id});
    case DEMO_OWNED_RTV:
        return kiln_destroy_rtv(dev, (kiln_rtv){id});
    case DEMO_OWNED_DSV:
        return kiln_destroy_dsv(dev, (kiln_dsv){id});
    case DEMO_OWNED_SRV:
        return kiln_destroy_srv(dev, (kiln_srv){id});
    case DEMO_OWNED_VS:
        return kiln_destroy_vertex_shader(dev, (kiln_vertex_shader){id});
    case DEMO_OWNED_PS:
        return kiln_destroy_pixel_shader(dev, (kiln_pixel_shader){id});
    case DEMO_OWNED_GS:
        return kiln_destroy_geometry_shader(dev, (kiln_geometry_shader){id});
    case DEMO_OWNED_LAYOUT:
        return kiln_destroy_input_layout(dev, (kiln_input_layout){id});
    case DEMO_OWNED_RASTERIZER:
        return kiln_destroy_rasterizer_state(dev, (kiln_rasterizer_state){id});
    case DEMO_OWNED_DEPTH_STENCIL:
        return kiln_destroy_depth_stencil_state(dev, (kiln_depth_stencil_state){id});
    case DEMO_OWNED_BLEND:
        return kiln_destroy_blend_state(dev, (kiln_blend_state){id});
    case DEMO_OWNED_SAMPLER:
        return kiln_destroy_sampler(dev, (kiln_sampler){id});
    }
    return KILN_E_INVALID_ARG;
}

static int release_owned(demo *d)
{
    while (d->nowned) {
        d->nowned--;
        kiln_result r = destroy_owned(d->dev, d->owned[d->nowned].kind, d->owned[d->nowned].id);
        if (r != KILN_OK)
            return demo_fail_call(d, "destroying an owned object", r, __FILE__, __LINE__);
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * Pipeline helpers
 * ------------------------------------------------------------------------- */

int demo_bind_effect(demo *d, const demo_effect *e)
{
    TRY(d, kiln_ia_set_input_layout(d->ctx, e->layout));
    TRY(d, kiln_vs_set_shader(d->ctx, e->vs));
    TRY(d, kiln_ps_set_shader(d->ctx, e->ps));
    return 0;
}

int demo_bind_target(demo *d, kiln_rtv rtv, kiln_dsv dsv, uint32_t w, uint32_t h)
{
    kiln_viewport vp = {0, 0, (float)w, (float)h, 0, 1};
    TRY(d, kiln_om_set_render_targets(d->ctx, rtv.id ? 1 : 0, &rtv, dsv));
    TRY(d, kiln_rs_set_viewport(d->ctx, &vp));
    return 0;
}

int demo_reset_pipeline(demo *d)
{
    kiln_buffer nb[KILN_MAX_VERTEX_BUFFERS] = {{0}}, ncb[KILN_MAX_CONSTANT_BUFFERS] = {{0}};
    uint32_t zeros[KILN_MAX_VERTEX_BUFFERS] = {0};
    kiln_srv ns[KILN_MAX_SHADER_RESOURCES] = {{0}};
    kiln_sampler nsamp[KILN_MAX_SAMPLERS] = {{0}};
    kiln_rect no_scissor = {0, 0, 0, 0};

    TRY(d, kiln_om_set_render_targets(d->ctx, 0, NULL, (kiln_dsv){0}));
    TRY(d, kiln_ia_set_input_layout(d->ctx, (kiln_input_layout){0}));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, KILN_MAX_VERTEX_BUFFERS, nb, zeros, zeros));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, (kiln_buffer){0}, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_UNDEFINED));
    TRY(d, kiln_vs_set_shader(d->ctx, (kiln_vertex_shader){0}));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, KILN_MAX_CONSTANT_BUFFERS, ncb));
    TRY(d, kiln_vs_set_shader_resources(d->ctx, 0, KILN_MAX_SHADER_RESOURCES, ns));
    TRY(d, kiln_vs_set_samplers(d->ctx, 0, KILN_MAX_SAMPLERS, nsamp));
    TRY(d, kiln_gs_set_shader_resources(d->ctx, 0, KILN_MAX_SHADER_RESOURCES, ns));
    TRY(d, kiln_gs_set_samplers(d->ctx, 0, KILN_MAX_SAMPLERS, nsamp));
    TRY(d, kiln_ps_set_shader(d->ctx, (kiln_pixel_shader){0}));
    TRY(d, kiln_ps_set_constant_buffers(d->ctx, 0, KILN_MAX_CONSTANT_BUFFERS, ncb));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, KILN_MAX_SHADER_RESOURCES, ns));
    TRY(d, kiln_ps_set_samplers(d->ctx, 0, KILN_MAX_SAMPLERS, nsamp));
    TRY(d, kiln_rs_set_state(d->ctx, (kiln_rasterizer_state){0}));
    TRY(d, kiln_rs_set_scissor_rect(d->ctx, &no_scissor));
    TRY(d, kiln_om_set_blend_state(d->ctx, (kiln_blend_state){0}, NULL));
    TRY(d, kiln_om_set_depth_stencil_state(d->ctx, (kiln_depth_stencil_state){0}, 0));
    return 0;
}

int demo_write_discard(demo *d, kiln_buffer b, const void *data, size_t size)
{
    kiln_mapped_subresource m;
    TRY(d, kiln_map(d->ctx, demo_buf(b), 0, KILN_MAP_WRITE_DISCARD, 0, &m));
    memcpy(m.data, data, size);
    TRY(d, kiln_unmap(d->ctx, demo_buf(b), 0));
    return 0;
}

/* ---------------------------------------------------------------------------
 * Running a scene
 * ------------------------------------------------------------------------- */

kiln_result demo_register_shaders(kiln_device *dev)
{
    for (size_t i = 0; i < demo_num_scenes; i++) {
        kiln_result r =
            demo_scenes[i]->register_shaders ? demo_scenes[i]->register_shaders(dev) : KILN_OK;
        if (r != KILN_OK)
            return r;
    }
    return KILN_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Copies canvas into a STAGING texture, maps it for reading and copies the
 * rows out (row_pitch may exceed w * 4). */
static int read_back(demo *d, kiln_texture canvas, kiln_texture staging, uint8_t *pixels)
{
    kiln_mapped_subresource m;
    TRY(d, kiln_copy_resource(d->ctx, demo_res(staging), demo_res(canvas)));
    TRY(d, kiln_map(d->ctx, demo_res(staging), 0, KILN_MAP_READ, 0, &m));
    if (m.row_pitch < d->w * 4 || !m.data) {
        kiln_unmap(d->ctx, demo_res(staging), 0);
        return demo_fail(d, "kiln_map returned row_pitch %u for a row of %u bytes", m.row_pitch,
                         d->w * 4);
    }
    for (uint32_t y = 0; y < d->h; y++)
        memcpy(pixels + (size_t)y * d->w * 4, (const uint8_t *)m.data + (size_t)y * m.row_pitch,
               (size_t)d->w * 4);
    TRY(d, kiln_unmap(d->ctx, demo_res(staging), 0));
    return 0;
}

int demo_render(demo *d, const scene *sc, uint32_t frames, uint8_t *pixels,
                demo_progress_fn progress, void *progress_user, double *record_ms)
{
    int rc = -1;
    void *state = calloc(1, sc->state_size ? sc->state_size : 1);
    kiln_texture canvas, staging;
    kiln_rtv canvas_rtv;

    d->scene = sc->name;
    d->nowned = 0;
    if (!state) {
        demo_fail(d, "out of memory");
        goto done;
    }
    if (demo_new_texture(d, d->w, d->h, 1, KILN_USAGE_DEFAULT,
                         KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0, &canvas) ||
        demo_new_rtv(d, canvas, 0, &canvas_rtv) ||
        demo_new_texture(d, d->w, d->h, 1, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ, &staging) ||
        demo_reset_pipeline(d))
        goto done;
    if (sc->register_shaders) {
        kiln_result r = sc->register_shaders(d->dev);
        if (r != KILN_OK) {
            demo_fail_call(d, "sc->register_shaders(d->dev)", r, __FILE__, __LINE__);
            goto done;
        }
    }
    if (sc->setup(d, state))
        goto done;

    double t0 = now_ms();
    for (uint32_t f = 0; f < frames; f++) {
        if (demo_reset_pipeline(d) || sc->frame(d, state, canvas, canvas_rtv, f))
            goto done;
        kiln_capture_frame(d->dev); /* a frame's end, for a capture (if one runs) */
        if (progress)
            progress(sc->name, f + 1, frames, progress_user);
    }
    if (demo_reset_pipeline(d) || read_back(d, canvas, staging, pixels))
        goto done;
    if (record_ms)
        *record_ms = now_ms() - t0;
    rc = release_owned(d);
done:
    if (sc->teardown && state)
        sc->teardown(state);
    free(state);
    return rc;
}
