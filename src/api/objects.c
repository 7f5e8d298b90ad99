/* Creating shaders, input layouts, state objects and samplers: every desc
 * is checked against its enums and ranges before the object exists. */
#include "api.h"
#include "../capture/capture.h"

#include <math.h>
#include <string.h>

#define FAIL(code, id, ...) kb_fail(&dev->env, code, KILN_LOG_##id, api, __VA_ARGS__)

static kiln_result make(kiln_device *dev, const char *api, kres_type type, const void *desc,
                        size_t size, uint32_t *out_id)
{
    kres_pipe *p;
    if (kres_pipe_create(&dev->env, type, desc, size, &p) != KILN_OK)
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "object");
    kiln_result r;
    uint32_t id = kres_handles_add(&dev->handles, &p->base, &r);
    if (!id) {
        kres_unref(&p->base);
        return kb_fail(&dev->env, r, r == KILN_E_OUT_OF_MEMORY ? KILN_LOG_OUT_OF_MEMORY : KILN_LOG_HANDLE_TABLE_FULL,
                       api, "adding a handle");
    }
    *out_id = id;
    return KILN_OK;
}

#define PREAMBLE(out)                                                                              \
    if (out)                                                                                       \
        (out)->id = 0;                                                                             \
    if (!dev)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL"); \
    if (!desc || !(out))                                                                           \
    return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "%s is NULL", !desc ? "desc" : "out")

static kiln_result create_vertex_shader(kiln_device *dev, const kiln_vertex_shader_desc *desc,
                                        kiln_vertex_shader *out)
{
    static const char api[] = "kiln_create_vertex_shader";
    PREAMBLE(out);
    if (!desc->fn || desc->num_inputs < 1 || desc->num_inputs > KILN_MAX_INPUT_ELEMENTS ||
        desc->num_varyings > KILN_MAX_VARYINGS)
        return FAIL(KILN_E_INVALID_ARG, SHADER_DESC, "fn %s, %u inputs (1..%d), %u varyings (0..%d)",
                    desc->fn ? "set" : "NULL", desc->num_inputs, KILN_MAX_INPUT_ELEMENTS,
                    desc->num_varyings, KILN_MAX_VARYINGS);
    if (!desc->glsl && (dev->queue.backend->caps & KQ_BACKEND_NEEDS_GLSL))
        return FAIL(KILN_E_UNSUPPORTED, SHADER_NO_GLSL, "vertex shader without GLSL on the %s backend",
                    dev->queue.backend->name);
    return make(dev, api, KRES_TYPE_VS, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_vertex_shader(kiln_device *dev, const kiln_vertex_shader_desc *desc,
                                      kiln_vertex_shader *out)
{
    kiln_result r = create_vertex_shader(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_vertex_shader(dev, desc, out ? *out : (kiln_vertex_shader){0}, r);
    return r;
}

static kiln_result create_pixel_shader(kiln_device *dev, const kiln_pixel_shader_desc *desc,
                                       kiln_pixel_shader *out)
{
    static const char api[] = "kiln_create_pixel_shader";
    PREAMBLE(out);
    if (!desc->fn || desc->num_varyings > KILN_MAX_VARYINGS ||
        desc->num_outputs > KILN_MAX_RENDER_TARGETS ||
        (desc->flags & ~(uint32_t)(KILN_PS_MAY_DISCARD | KILN_PS_NO_Z)))
        return FAIL(KILN_E_INVALID_ARG, SHADER_DESC, "fn %s, %u varyings (0..%d), %u outputs (0..%d), flags 0x%x",
                    desc->fn ? "set" : "NULL", desc->num_varyings, KILN_MAX_VARYINGS, desc->num_outputs,
                    KILN_MAX_RENDER_TARGETS, desc->flags);
    if (desc->read_mask & ~kd_varying_components(desc->num_varyings))
        return FAIL(KILN_E_INVALID_ARG, SHADER_DESC, "read_mask 0x%x names varyings past the %u declared",
                    desc->read_mask, desc->num_varyings);
    if (!desc->glsl && (dev->queue.backend->caps & KQ_BACKEND_NEEDS_GLSL))
        return FAIL(KILN_E_UNSUPPORTED, SHADER_NO_GLSL, "pixel shader without GLSL on the %s backend",
                    dev->queue.backend->name);
    return make(dev, api, KRES_TYPE_PS, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_pixel_shader(kiln_device *dev, const kiln_pixel_shader_desc *desc,
                                     kiln_pixel_shader *out)
{
    kiln_result r = create_pixel_shader(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_pixel_shader(dev, desc, out ? *out : (kiln_pixel_shader){0}, r);
    return r;
}

/* The desc rules of a geometry shader (function, primitives, D3D10's
 * output limit), shared by both creation calls. */
static kiln_result check_gs_desc(kiln_device *dev, const char *api, const kiln_geometry_shader_desc *desc)
{
    if (!desc->fn || desc->input == KILN_GS_INPUT_UNDEFINED || (unsigned)desc->input > KILN_GS_INPUT_TRIANGLE_ADJ ||
        desc->output == KILN_GS_OUTPUT_UNDEFINED || (unsigned)desc->output > KILN_GS_OUTPUT_TRIANGLE_STRIP ||
        desc->max_vertices == 0 || desc->num_varyings > KILN_MAX_VARYINGS ||
        (desc->flags & ~(uint32_t)KILN_GS_WRITES_RT_ARRAY_INDEX))
        return FAIL(KILN_E_INVALID_ARG, SHADER_DESC,
                    "fn %s, input %d, output %d, max_vertices %u (1..), %u varyings (0..%d), flags 0x%x",
                    desc->fn ? "set" : "NULL", (int)desc->input, (int)desc->output, desc->max_vertices,
                    desc->num_varyings, KILN_MAX_VARYINGS, desc->flags);
    uint64_t scalars = (uint64_t)desc->max_vertices * (4 + 4 * desc->num_varyings);
    if (scalars > KILN_GS_MAX_OUTPUT_SCALARS)
        return FAIL(KILN_E_INVALID_ARG, GS_OUTPUT_LIMIT, "%u vertices x %u scalars = %llu (at most %d)",
                    desc->max_vertices, 4 + 4 * desc->num_varyings, (unsigned long long)scalars,
                    KILN_GS_MAX_OUTPUT_SCALARS);
    if (!(dev->queue.backend->caps & KQ_BACKEND_GEOMETRY))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no geometry shader stage",
                    dev->queue.backend->name);
    return KILN_OK;
}

static kiln_result create_geometry_shader(kiln_device *dev, const kiln_geometry_shader_desc *desc,
                                          kiln_geometry_shader *out)
{
    static const char api[] = "kiln_create_geometry_shader";
    PREAMBLE(out);
    kiln_result r = check_gs_desc(dev, api, desc);
    if (r != KILN_OK)
        return r;
    kres_gs g = {.d = *desc};
    return make(dev, api, KRES_TYPE_GS, &g, sizeof g, &out->id);
}

kiln_result kiln_create_geometry_shader(kiln_device *dev, const kiln_geometry_shader_desc *desc,
                                        kiln_geometry_shader *out)
{
    kiln_result r = create_geometry_shader(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_geometry_shader(dev, desc, out ? *out : (kiln_geometry_shader){0}, r);
    return r;
}

/* D3D10's stream-output declaration rules (CreateGeometryShaderWithStreamOutput):
 * 1..64 entries and at most 64 components; each entry 1..4 components
 * starting in 0..3 without passing w; slots 0..3; several slots: one
 * entry each, and no stride (a slot's stride is its entry's size); one
 * slot: the stride, if given, a multiple of 4 covering the entries, at
 * most 2048 bytes (D3D10_SO_BUFFER_MAX_STRIDE_IN_BYTES). `varyings` is
 * what the geometry shader writes, or UINT32_MAX for a pass-through
 * (checked against the vertex shader at each draw). */
static kiln_result check_so_desc(kiln_device *dev, const char *api, const kiln_so_desc *so, uint32_t varyings,
                                 kres_so_decl *out)
{
    memset(out, 0, sizeof *out);
    if (so->num_elements == 0 || so->num_elements > KILN_SO_MAX_ELEMENTS)
        return FAIL(KILN_E_INVALID_ARG, SO_DECL, "%u elements (1..%d)", so->num_elements, KILN_SO_MAX_ELEMENTS);
    if (!so->elements)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "so->elements is NULL");
    uint32_t per_slot[KILN_SO_BUFFER_SLOTS] = {0}, comps = 0, slots = 0;
    for (uint32_t i = 0; i < so->num_elements; i++) {
        const kiln_so_element *e = &so->elements[i];
        if (e->slot >= KILN_SO_BUFFER_SLOTS || e->start_component > 3 || e->component_count == 0 ||
            e->component_count > 4 - e->start_component || e->reg > KILN_MAX_VARYINGS)
            return FAIL(KILN_E_INVALID_ARG, SO_DECL,
                        "element %u: register %u (0..%d), components %u + %u (within 4), slot %u (0..%d)", i, e->reg,
                        KILN_MAX_VARYINGS, e->start_component, e->component_count, e->slot, KILN_SO_BUFFER_SLOTS - 1);
        if (varyings != UINT32_MAX && e->reg > varyings)
            return FAIL(KILN_E_INVALID_ARG, SO_DECL, "element %u reads varying %u, the geometry shader writes %u", i,
                        e->reg - 1, varyings);
        slots += per_slot[e->slot]++ == 0;
        comps += e->component_count;
        out->el[i] = (kres_so_el){(uint8_t)e->reg, (uint8_t)e->start_component, (uint8_t)e->component_count,
                                  (uint8_t)e->slot};
        out->stride[e->slot] += 4 * e->component_count;
    }
    if (comps > KILN_SO_MAX_ELEMENTS)
        return FAIL(KILN_E_INVALID_ARG, SO_DECL, "%u components (at most %d)", comps, KILN_SO_MAX_ELEMENTS);
    if (slots > 1) {
        for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++)
            if (per_slot[k] > 1)
                return FAIL(KILN_E_INVALID_ARG, SO_DECL, "slot %d has %u elements: with several slots each holds one",
                            k, per_slot[k]);
        if (so->stride)
            return FAIL(KILN_E_INVALID_ARG, SO_DECL, "stride %u: with several slots the stride is not given", so->stride);
    } else if (so->stride) {
        uint32_t k = so->elements[0].slot;
        if (so->stride % 4 || so->stride < out->stride[k] || so->stride > 2048)
            return FAIL(KILN_E_INVALID_ARG, SO_DECL, "stride %u: a multiple of 4, %u..2048", so->stride,
                        out->stride[k]);
        out->stride[k] = so->stride;
    }
    out->n = so->num_elements;
    out->desc_stride = so->stride;
    return KILN_OK;
}

static kiln_result create_geometry_shader_with_so(kiln_device *dev, const kiln_geometry_shader_desc *gs,
                                                  const kiln_so_desc *desc, kiln_geometry_shader *out)
{
    static const char api[] = "kiln_create_geometry_shader_with_so";
    PREAMBLE(out);
    kres_gs g = {0};
    kiln_result r;
    if (gs && (r = check_gs_desc(dev, api, gs)) != KILN_OK)
        return r;
    if ((r = check_so_desc(dev, api, desc, gs ? gs->num_varyings : UINT32_MAX, &g.so)) != KILN_OK)
        return r;
    if (!(dev->queue.backend->caps & KQ_BACKEND_STREAM_OUTPUT))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no stream output",
                    dev->queue.backend->name);
    if (gs)
        g.d = *gs;
    return make(dev, api, KRES_TYPE_GS, &g, sizeof g, &out->id);
}

kiln_result kiln_create_geometry_shader_with_so(kiln_device *dev, const kiln_geometry_shader_desc *gs,
                                                const kiln_so_desc *so, kiln_geometry_shader *out)
{
    kiln_result r = create_geometry_shader_with_so(dev, gs, so, out);
    if (dev && dev->capture)
        kcap_create_geometry_shader_so(dev, gs, so, out ? *out : (kiln_geometry_shader){0}, r);
    return r;
}

static bool vertex_format(kiln_format f)
{
    return f == KILN_FORMAT_R32_FLOAT || f == KILN_FORMAT_R32G32_FLOAT || f == KILN_FORMAT_R32G32B32_FLOAT ||
           f == KILN_FORMAT_R32G32B32A32_FLOAT || f == KILN_FORMAT_R8G8B8A8_UNORM ||
           f == KILN_FORMAT_B8G8R8A8_UNORM;
}

static kiln_result create_input_layout(kiln_device *dev, const kiln_input_layout_desc *desc,
                                       kiln_vertex_shader shader, kiln_input_layout *out)
{
    static const char api[] = "kiln_create_input_layout";
    PREAMBLE(out);
    kiln_log_id lid;
    kres_object *vs = kres_handles_get(&dev->handles, shader.id, KRES_TYPE_VS, KRES_TYPE_VS, &lid);
    if (!vs)
        return ka_handle_fail(dev, api, "vertex shader", lid);
    uint32_t inputs = ((kres_pipe *)vs)->u.vs.num_inputs;
    kres_unref(vs);
    if (desc->num_elements < 1 || desc->num_elements > KILN_MAX_INPUT_ELEMENTS)
        return FAIL(KILN_E_INVALID_ARG, LAYOUT_DESC, "%u elements (1..%d)", desc->num_elements,
                    KILN_MAX_INPUT_ELEMENTS);
    for (uint32_t i = 0; i < desc->num_elements; i++) {
        const kiln_input_element *e = &desc->elements[i];
        if (!vertex_format(e->format) || e->slot >= KILN_MAX_VERTEX_BUFFERS || e->per_instance > 1 ||
            e->offset > 2048)
            return FAIL(KILN_E_INVALID_ARG, LAYOUT_DESC, "element %u: format %d, slot %u, offset %u", i,
                        (int)e->format, e->slot, e->offset);
    }
    if (desc->num_elements != inputs)
        return FAIL(KILN_E_INVALID_ARG, LAYOUT_SHADER_MISMATCH, "%u elements, the shader reads %u inputs",
                    desc->num_elements, inputs);
    return make(dev, api, KRES_TYPE_LAYOUT, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_input_layout(kiln_device *dev, const kiln_input_layout_desc *desc,
                                     kiln_vertex_shader shader, kiln_input_layout *out)
{
    kiln_result r = create_input_layout(dev, desc, shader, out);
    if (dev && dev->capture)
        kcap_create_input_layout(dev, desc, shader, out ? *out : (kiln_input_layout){0}, r);
    return r;
}

static kiln_result create_rasterizer_state(kiln_device *dev, const kiln_rasterizer_desc *desc,
                                           kiln_rasterizer_state *out)
{
    static const char api[] = "kiln_create_rasterizer_state";
    PREAMBLE(out);
    if ((unsigned)desc->fill > KILN_FILL_WIREFRAME || (unsigned)desc->cull > KILN_CULL_BACK ||
        !isfinite(desc->depth_bias_clamp) || !isfinite(desc->slope_scaled_depth_bias))
        return FAIL(KILN_E_INVALID_ARG, STATE_DESC, "fill %d, cull %d", (int)desc->fill, (int)desc->cull);
    return make(dev, api, KRES_TYPE_RS, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_rasterizer_state(kiln_device *dev, const kiln_rasterizer_desc *desc, kiln_rasterizer_state *out)
{
    kiln_result r = create_rasterizer_state(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_state(dev, KCAP_OP_CREATE_RASTERIZER_STATE, desc, out ? out->id : 0, r);
    return r;
}

static bool stencil_face_ok(const kiln_stencil_face *f)
{
    return (unsigned)f->fail_op <= KILN_STENCIL_OP_DECR && (unsigned)f->depth_fail_op <= KILN_STENCIL_OP_DECR &&
           (unsigned)f->pass_op <= KILN_STENCIL_OP_DECR && (unsigned)f->func <= KILN_COMPARE_ALWAYS;
}

static kiln_result create_depth_stencil_state(kiln_device *dev, const kiln_depth_stencil_desc *desc,
                                              kiln_depth_stencil_state *out)
{
    static const char api[] = "kiln_create_depth_stencil_state";
    PREAMBLE(out);
    if ((unsigned)desc->depth_func > KILN_COMPARE_ALWAYS || !stencil_face_ok(&desc->front) ||
        !stencil_face_ok(&desc->back) || desc->stencil_read_mask > KILN_MASK_NONE ||
        desc->stencil_write_mask > KILN_MASK_NONE)
        return FAIL(KILN_E_INVALID_ARG, STATE_DESC, "a compare function, stencil op or mask is out of range");
    return make(dev, api, KRES_TYPE_DSS, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_depth_stencil_state(kiln_device *dev, const kiln_depth_stencil_desc *desc, kiln_depth_stencil_state *out)
{
    kiln_result r = create_depth_stencil_state(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_state(dev, KCAP_OP_CREATE_DEPTH_STENCIL_STATE, desc, out ? out->id : 0, r);
    return r;
}

/* The capture record of a blend desc: the 1.0 one (4 targets) unless a
 * target past them is set, so captures that use 4 stay 1.2-readable. */
static kcap_op blend_record(const kiln_blend_desc *desc)
{
    static const kiln_blend_target unset;
    if (desc && desc->alpha_to_coverage)
        return KCAP_OP_CREATE_BLEND_STATE_A2C;
    for (uint32_t i = KCAP_BLEND_TARGETS_1_0; desc && i < KILN_MAX_RENDER_TARGETS; i++)
        if (memcmp(&desc->rt[i], &unset, sizeof unset))
            return KCAP_OP_CREATE_BLEND_STATE_8;
    return KCAP_OP_CREATE_BLEND_STATE;
}

static kiln_result create_blend_state(kiln_device *dev, const kiln_blend_desc *desc, kiln_blend_state *out)
{
    static const char api[] = "kiln_create_blend_state";
    PREAMBLE(out);
    for (int i = 0; i < KILN_MAX_RENDER_TARGETS; i++) {
        const kiln_blend_target *t = &desc->rt[i];
        if ((unsigned)t->src > KILN_BLEND_INV_BLEND_FACTOR || (unsigned)t->dst > KILN_BLEND_INV_BLEND_FACTOR ||
            (unsigned)t->src_alpha > KILN_BLEND_INV_BLEND_FACTOR ||
            (unsigned)t->dst_alpha > KILN_BLEND_INV_BLEND_FACTOR || (unsigned)t->op > KILN_BLEND_OP_MAX ||
            (unsigned)t->op_alpha > KILN_BLEND_OP_MAX || t->write_mask > KILN_COLOR_WRITE_NONE ||
            t->enable > 1)
            return FAIL(KILN_E_INVALID_ARG, STATE_DESC, "render target %d: a factor, op or write mask is out of range", i);
    }
    if (desc->alpha_to_coverage > 1)
        return FAIL(KILN_E_INVALID_ARG, STATE_DESC, "alpha_to_coverage %u (0 or 1)", desc->alpha_to_coverage);
    if (desc->alpha_to_coverage && !(dev->queue.backend->caps & KQ_BACKEND_MULTISAMPLE))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no alpha to coverage",
                    dev->queue.backend->name);
    return make(dev, api, KRES_TYPE_BS, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_blend_state(kiln_device *dev, const kiln_blend_desc *desc, kiln_blend_state *out)
{
    kiln_result r = create_blend_state(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_state(dev, blend_record(desc), desc, out ? out->id : 0, r);
    return r;
}

static kiln_result create_sampler(kiln_device *dev, const kiln_sampler_desc *desc, kiln_sampler *out)
{
    static const char api[] = "kiln_create_sampler";
    PREAMBLE(out);
    /* ANISOTROPIC is D3D10's one mode: in min_filter, with mag and mip
     * LINEAR-like (DEFAULT, LINEAR or ANISOTROPIC) */
    bool aniso = desc->min_filter == KILN_FILTER_ANISOTROPIC;
    kiln_filter top = aniso ? KILN_FILTER_ANISOTROPIC : KILN_FILTER_LINEAR;
    if ((unsigned)desc->min_filter > KILN_FILTER_ANISOTROPIC || (unsigned)desc->mag_filter > top ||
        (unsigned)desc->mip_filter > top || (aniso && (desc->mag_filter == KILN_FILTER_POINT ||
                                                        desc->mip_filter == KILN_FILTER_POINT)) ||
        (unsigned)desc->address_u > KILN_ADDRESS_MIRROR_ONCE ||
        (unsigned)desc->address_v > KILN_ADDRESS_MIRROR_ONCE || !isfinite(desc->mip_lod_bias) ||
        (desc->lod_clamp_enable && !(desc->min_lod <= desc->max_lod)) ||
        (unsigned)desc->comparison_func > KILN_COMPARE_ALWAYS || desc->max_anisotropy > 16 ||
        (unsigned)desc->address_w > KILN_ADDRESS_MIRROR_ONCE)
        return FAIL(KILN_E_INVALID_ARG, STATE_DESC,
                    "a filter, address mode, LOD range, comparison function or max_anisotropy is invalid");
    if ((aniso || desc->address_u == KILN_ADDRESS_MIRROR_ONCE || desc->address_v == KILN_ADDRESS_MIRROR_ONCE ||
         desc->address_w == KILN_ADDRESS_MIRROR_ONCE) &&
        !(dev->queue.backend->caps & KQ_BACKEND_SAMPLER_EXT))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no %s", dev->queue.backend->name,
                    aniso ? "anisotropic filtering" : "MIRROR_ONCE addressing");
    return make(dev, api, KRES_TYPE_SAMPLER, desc, sizeof *desc, &out->id);
}

kiln_result kiln_create_sampler(kiln_device *dev, const kiln_sampler_desc *desc, kiln_sampler *out)
{
    kiln_result r = create_sampler(dev, desc, out);
    if (dev && dev->capture)
        kcap_create_state(dev,
                          desc && desc->address_w         ? KCAP_OP_CREATE_SAMPLER_W
                          : desc && desc->max_anisotropy  ? KCAP_OP_CREATE_SAMPLER_EXT
                          : desc && desc->comparison_func ? KCAP_OP_CREATE_SAMPLER_CMP
                                                          : KCAP_OP_CREATE_SAMPLER,
                          desc, out ? out->id : 0, r);
    return r;
}

static kiln_result destroy(kiln_device *dev, const char *api, uint32_t id, kres_type type, const char *what)
{
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    kiln_log_id lid;
    kres_object *o = kres_handles_remove(&dev->handles, id, type, type, &lid);
    if (!o)
        return ka_handle_fail(dev, api, what, lid);
    atomic_store(&((kres_pipe *)o)->destroyed, true);
    ka_destroyed(dev);
    kres_unref(o);
    return KILN_OK;
}

kiln_result kiln_destroy_vertex_shader(kiln_device *dev, kiln_vertex_shader s)
{
    kiln_result r = destroy(dev, "kiln_destroy_vertex_shader", s.id, KRES_TYPE_VS, "vertex shader");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_VERTEX_SHADER, s.id, r);
    return r;
}
kiln_result kiln_destroy_pixel_shader(kiln_device *dev, kiln_pixel_shader s)
{
    kiln_result r = destroy(dev, "kiln_destroy_pixel_shader", s.id, KRES_TYPE_PS, "pixel shader");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_PIXEL_SHADER, s.id, r);
    return r;
}
kiln_result kiln_destroy_geometry_shader(kiln_device *dev, kiln_geometry_shader s)
{
    kiln_result r = destroy(dev, "kiln_destroy_geometry_shader", s.id, KRES_TYPE_GS, "geometry shader");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_GEOMETRY_SHADER, s.id, r);
    return r;
}
kiln_result kiln_destroy_input_layout(kiln_device *dev, kiln_input_layout l)
{
    kiln_result r = destroy(dev, "kiln_destroy_input_layout", l.id, KRES_TYPE_LAYOUT, "input layout");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_INPUT_LAYOUT, l.id, r);
    return r;
}
kiln_result kiln_destroy_rasterizer_state(kiln_device *dev, kiln_rasterizer_state s)
{
    kiln_result r = destroy(dev, "kiln_destroy_rasterizer_state", s.id, KRES_TYPE_RS, "rasterizer state");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_RASTERIZER_STATE, s.id, r);
    return r;
}
kiln_result kiln_destroy_depth_stencil_state(kiln_device *dev, kiln_depth_stencil_state s)
{
    kiln_result r = destroy(dev, "kiln_destroy_depth_stencil_state", s.id, KRES_TYPE_DSS, "depth-stencil state");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_DEPTH_STENCIL_STATE, s.id, r);
    return r;
}
kiln_result kiln_destroy_blend_state(kiln_device *dev, kiln_blend_state s)
{
    kiln_result r = destroy(dev, "kiln_destroy_blend_state", s.id, KRES_TYPE_BS, "blend state");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_BLEND_STATE, s.id, r);
    return r;
}
kiln_result kiln_destroy_sampler(kiln_device *dev, kiln_sampler s)
{
    kiln_result r = destroy(dev, "kiln_destroy_sampler", s.id, KRES_TYPE_SAMPLER, "sampler");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_SAMPLER, s.id, r);
    return r;
}
