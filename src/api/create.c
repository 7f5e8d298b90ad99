/* Creating and destroying buffers, textures and views: D3D10's usage and
 * bind rules, checked before anything is allocated. */
#include "api.h"
#include "../capture/capture.h"
#include "../resources/texel.h"

#include <string.h>

#define MAX_BUFFER_SIZE (1u << 30)
#define MAX_TEXTURE_DIM 8192u
#define MAX_ARRAY_SIZE 512u
#define MAX_TEXTURE_BYTES ((size_t)4 << 30)
#define CPU_ACCESS_ALL (KILN_CPU_ACCESS_READ | KILN_CPU_ACCESS_WRITE)
#define RT_DS (KILN_BIND_RENDER_TARGET | KILN_BIND_DEPTH_STENCIL)
/* What the renderer writes: only DEFAULT resources may be bound so. */
#define GPU_WRITE (RT_DS | KILN_BIND_STREAM_OUTPUT)

#define FAIL(code, id, ...) kb_fail(&dev->env, code, KILN_LOG_##id, api, __VA_ARGS__)

/* The usage rules shared by buffers and textures. Resolves cpu_access. */
static kiln_result check_usage(kiln_device *dev, const char *api, kiln_usage usage,
                               uint32_t bind, uint32_t *cpu_access, bool has_init)
{
    if ((unsigned)usage > KILN_USAGE_STAGING)
        return FAIL(KILN_E_INVALID_ARG, DESC_INVALID_ENUM, "usage %d is not a kiln_usage", (int)usage);
    uint32_t cpu = *cpu_access;
    if (cpu & ~CPU_ACCESS_ALL)
        return FAIL(KILN_E_INVALID_ARG, USAGE_CPU_ACCESS, "unknown cpu_access bits 0x%x", cpu);
    switch (usage) {
    case KILN_USAGE_DEFAULT:
    case KILN_USAGE_IMMUTABLE:
        if (cpu)
            return FAIL(KILN_E_INVALID_ARG, USAGE_CPU_ACCESS,
                        "DEFAULT and IMMUTABLE resources have no CPU access");
        if (usage == KILN_USAGE_IMMUTABLE && (bind & GPU_WRITE))
            return FAIL(KILN_E_INVALID_ARG, USAGE_BIND,
                        "IMMUTABLE resources cannot be render targets, depth-stencils or stream-output buffers");
        if (usage == KILN_USAGE_IMMUTABLE && !has_init)
            return FAIL(KILN_E_INVALID_ARG, USAGE_IMMUTABLE_NEEDS_DATA,
                        "IMMUTABLE resources need initial data");
        break;
    case KILN_USAGE_DYNAMIC:
        if (!cpu)
            cpu = KILN_CPU_ACCESS_WRITE;
        if (cpu != KILN_CPU_ACCESS_WRITE)
            return FAIL(KILN_E_INVALID_ARG, USAGE_CPU_ACCESS,
                        "DYNAMIC resources allow CPU write access only");
        if (bind & GPU_WRITE)
            return FAIL(KILN_E_INVALID_ARG, USAGE_BIND,
                        "DYNAMIC resources cannot be render targets, depth-stencils or stream-output buffers");
        break;
    case KILN_USAGE_STAGING:
        if (!cpu)
            cpu = CPU_ACCESS_ALL;
        if (bind)
            return FAIL(KILN_E_INVALID_ARG, USAGE_BIND, "STAGING resources cannot be bound");
        break;
    }
    *cpu_access = cpu;
    return KILN_OK;
}

static kiln_result add_handle(kiln_device *dev, const char *api, kres_object *obj, uint32_t *out_id)
{
    kiln_result r;
    uint32_t id = kres_handles_add(&dev->handles, obj, &r);
    if (!id) {
        kres_unref(obj);
        if (r == KILN_E_OUT_OF_MEMORY)
            return FAIL(r, OUT_OF_MEMORY, "growing the handle table");
        return FAIL(r, HANDLE_TABLE_FULL, "%u objects are live", KRES_MAX_OBJECTS);
    }
    *out_id = id;
    return KILN_OK;
}

static kiln_result create_buffer(kiln_device *dev, const kiln_buffer_desc *desc,
                                 const kiln_subresource_data *init, kiln_buffer *out)
{
    static const char api[] = "kiln_create_buffer";
    if (out)
        out->id = 0;
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    if (!desc || !out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "%s is NULL", !desc ? "desc" : "out_buffer");
    out->id = 0;
    uint32_t bind = desc->bind_flags, cpu = desc->cpu_access;
    if (desc->size == 0)
        return FAIL(KILN_E_INVALID_ARG, BUFFER_SIZE_ZERO, "size is 0");
    if (desc->size > MAX_BUFFER_SIZE)
        return FAIL(KILN_E_INVALID_ARG, BUFFER_TOO_LARGE, "size %u exceeds 1 GiB", desc->size);
    if (bind & ~(uint32_t)(KILN_BIND_VERTEX_BUFFER | KILN_BIND_INDEX_BUFFER | KILN_BIND_CONSTANT_BUFFER |
                           KILN_BIND_STREAM_OUTPUT | KILN_BIND_SHADER_RESOURCE))
        return FAIL(KILN_E_INVALID_ARG, BIND_FLAGS_INVALID, "bind flags 0x%x are not valid for a buffer", bind);
    if ((bind & KILN_BIND_CONSTANT_BUFFER) && bind != KILN_BIND_CONSTANT_BUFFER)
        return FAIL(KILN_E_INVALID_ARG, CONSTANT_BUFFER_BIND, "constant buffers take no other bind flag");
    if ((bind & KILN_BIND_CONSTANT_BUFFER) && (desc->size % 16 || desc->size > 65536))
        return FAIL(KILN_E_INVALID_ARG, CONSTANT_BUFFER_SIZE, "size %u", desc->size);
    kiln_result r = check_usage(dev, api, desc->usage, bind, &cpu, init != NULL);
    if (r != KILN_OK)
        return r;
    if (init && !init->data)
        return FAIL(KILN_E_INVALID_ARG, INIT_DATA_INVALID, "init->data is NULL");

    kres_layout_desc ld = {.type = KRES_TYPE_BUFFER, .usage = desc->usage, .bind_flags = bind,
                           .cpu_access = cpu, .format = KILN_FORMAT_UNKNOWN, .width = desc->size,
                           .height = 1, .mip_levels = 1, .array_size = 1};
    kres_resource *res;
    r = kres_resource_create(&dev->env, &ld, &res);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "%u bytes", desc->size);
    if (init)
        kres_resource_init_data(res, init);
    return add_handle(dev, api, &res->base, &out->id);
}

kiln_result kiln_create_buffer(kiln_device *dev, const kiln_buffer_desc *desc,
                               const kiln_subresource_data *init, kiln_buffer *out)
{
    kiln_result r = create_buffer(dev, desc, init, out);
    if (dev && dev->capture)
        kcap_create_buffer(dev, desc, init, out ? *out : (kiln_buffer){0}, r);
    return r;
}

static uint32_t full_chain(uint32_t w, uint32_t h)
{
    uint32_t n = 1, m = KB_MAX(w, h);
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

#define MAX_TEXTURE3D_DIM 2048u

/* A texture of any kind, as the create calls resolve their descs. */
typedef struct tex_args {
    uint8_t dim;  /* KRES_DIM_* */
    uint32_t w, h, d, mips, layers;
    kiln_format format;
    kiln_usage usage;
    uint32_t bind, cpu;
    bool cube;
    uint32_t samples; /* 2D: the desc's sample_count (0: 1) */
} tex_args;

/* The kind-specific rules (sizes, array size, what 3D textures cannot
 * be, which backend has them); mips resolved. */
static kiln_result check_kind(kiln_device *dev, const char *api, tex_args *a)
{
    uint32_t w = a->w, h = a->h, d = a->d;
    if (a->dim == KRES_DIM_3D) {
        if (w < 1 || h < 1 || d < 1 || w > MAX_TEXTURE3D_DIM || h > MAX_TEXTURE3D_DIM || d > MAX_TEXTURE3D_DIM)
            return FAIL(KILN_E_INVALID_ARG, TEXTURE3D_SIZE_INVALID, "%ux%ux%u", w, h, d);
    } else if (w < 1 || h < 1 || w > MAX_TEXTURE_DIM || h > MAX_TEXTURE_DIM) {
        return a->dim == KRES_DIM_1D ? FAIL(KILN_E_INVALID_ARG, TEXTURE_SIZE_INVALID, "width %u", w)
                                     : FAIL(KILN_E_INVALID_ARG, TEXTURE_SIZE_INVALID, "%ux%u", w, h);
    }
    uint32_t chain = full_chain(KB_MAX(w, d), h);
    if (!a->mips)
        a->mips = chain;
    if (a->mips > chain)
        return FAIL(KILN_E_INVALID_ARG, TEXTURE_MIPS_INVALID, "%u mip levels for %ux%ux%u (at most %u)", a->mips,
                    w, h, d, chain);
    if (a->layers > MAX_ARRAY_SIZE)
        return FAIL(KILN_E_INVALID_ARG, TEXTURE_ARRAY_INVALID, "array size %u", a->layers);
    const kres_format_info *fi = kres_format(a->format);
    if (a->dim == KRES_DIM_3D && fi && (fi->is_depth || (a->bind & KILN_BIND_DEPTH_STENCIL)))
        return FAIL(KILN_E_INVALID_ARG, TEXTURE_KIND_BIND, "a 3D texture cannot be a depth-stencil or of a depth format");
    if (a->dim != KRES_DIM_2D && fi && fi->block > 1)
        return FAIL(KILN_E_INVALID_ARG, TEXTURE_KIND_BIND, "block-compressed formats are for 2D and cube textures");
    if ((a->dim != KRES_DIM_2D || a->cube) && !(dev->queue.backend->caps & KQ_BACKEND_TEXTURE_KINDS))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has only 2D textures (no 1D, 3D or cube)",
                    dev->queue.backend->name);
    return KILN_OK;
}

static kiln_result create_texture(kiln_device *dev, const char *api, tex_args *a,
                                   const kiln_subresource_data *init, kiln_texture *out)
{
    kiln_result r = check_kind(dev, api, a);
    if (r != KILN_OK)
        return r;
    uint32_t w = a->w, h = a->h, d = a->d, mips = a->mips, layers = a->layers, bind = a->bind, cpu = a->cpu;
    const kres_format_info *fi = kres_format(a->format);
    if (!fi || a->format == KILN_FORMAT_R32G32B32_FLOAT)
        return FAIL(KILN_E_INVALID_ARG, FORMAT_INVALID, "format %d", (int)a->format);
    if (bind & ~(uint32_t)(KILN_BIND_SHADER_RESOURCE | RT_DS))
        return FAIL(KILN_E_INVALID_ARG, BIND_FLAGS_INVALID, "bind flags 0x%x are not valid for a texture", bind);
    if (fi->is_depth && (bind & KILN_BIND_RENDER_TARGET))
        return FAIL(KILN_E_INVALID_ARG, FORMAT_BIND_MISMATCH, "a depth format cannot be a render target");
    if (!fi->is_depth && (bind & KILN_BIND_DEPTH_STENCIL))
        return FAIL(KILN_E_INVALID_ARG, FORMAT_BIND_MISMATCH, "a color format cannot be a depth-stencil");
    if (fi->block > 1 && (bind & ~(uint32_t)KILN_BIND_SHADER_RESOURCE))
        return FAIL(KILN_E_INVALID_ARG, FORMAT_BIND_MISMATCH,
                    "a block-compressed format is a shader resource only (bind flags 0x%x)", bind);
    if ((kres_texel_generic(a->format) || fi->block > 1) &&
        !(dev->queue.backend->caps & KQ_BACKEND_TEXEL_FORMATS))
        return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no format %d textures",
                    dev->queue.backend->name, (int)a->format);
    if (fi->has_stencil && (bind & KILN_BIND_SHADER_RESOURCE))
        return FAIL(KILN_E_UNSUPPORTED, FORMAT_BIND_MISMATCH,
                    "a depth-stencil format with stencil cannot be a shader resource (kiln has no typeless formats)");
    r = check_usage(dev, api, a->usage, bind, &cpu, init != NULL);
    if (r != KILN_OK)
        return r;
    if (a->usage == KILN_USAGE_DYNAMIC && (mips != 1 || layers != 1))
        return FAIL(KILN_E_INVALID_ARG, USAGE_DYNAMIC_TEXTURE, "%u mips, array size %u", mips, layers);
    uint32_t samples = a->samples ? a->samples : 1;
    if (samples != 1) {
        if (samples != 4)
            return FAIL(KILN_E_INVALID_ARG, TEXTURE_SAMPLES_INVALID, "%u samples (1 or 4)", samples);
        if (mips != 1 || a->usage != KILN_USAGE_DEFAULT || !(bind & RT_DS) ||
            (bind & KILN_BIND_SHADER_RESOURCE) || init)
            return FAIL(KILN_E_INVALID_ARG, TEXTURE_SAMPLES_INVALID,
                        "4 samples with %u mips, usage %d, bind flags 0x%x%s", mips, (int)a->usage, bind,
                        init ? ", initial data" : "");
        if (!(dev->queue.backend->caps & KQ_BACKEND_MULTISAMPLE))
            return FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no multisampled textures",
                        dev->queue.backend->name);
    }

    /* Size check before allocating anything. */
    size_t total = 0;
    for (uint32_t m = 0; m < mips; m++)
        total += KB_ALIGN_UP(kres_row_bytes(fi, KB_MAX(1u, w >> m)), 16) *
                     kres_blocks(fi, KB_MAX(1u, h >> m)) * KB_MAX(1u, d >> m) * samples + 64;
    total *= layers;
    if (total > MAX_TEXTURE_BYTES)
        return FAIL(KILN_E_INVALID_ARG, TEXTURE_TOO_LARGE, "%zu bytes", total);
    if (init) {
        for (uint32_t s = 0; s < mips * layers; s++) {
            uint32_t row = (uint32_t)kres_row_bytes(fi, KB_MAX(1u, w >> (s % mips)));
            if (!init[s].data)
                return FAIL(KILN_E_INVALID_ARG, INIT_DATA_INVALID, "init[%u].data is NULL", s);
            if (init[s].row_pitch && init[s].row_pitch < row)
                return FAIL(KILN_E_INVALID_ARG, INIT_DATA_INVALID,
                            "init[%u].row_pitch %u is less than a row (%u bytes)", s, init[s].row_pitch, row);
        }
    }

    kres_layout_desc ld = {.type = KRES_TYPE_TEXTURE2D, .usage = a->usage, .bind_flags = bind, .cpu_access = cpu,
                           .format = a->format, .width = w, .height = h, .mip_levels = mips, .array_size = layers,
                           .samples = samples};
    ld.depth = d;
    ld.dim = a->dim;
    ld.cube = a->cube;
    kres_resource *res;
    r = kres_resource_create(&dev->env, &ld, &res);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "%zu bytes", total);
    if (init)
        kres_resource_init_data(res, init);
    return add_handle(dev, api, &res->base, &out->id);
}

#define CREATE_PREAMBLE()                                                                          \
    if (out)                                                                                       \
        out->id = 0;                                                                               \
    if (!dev)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL"); \
    if (!desc || !out)                                                                             \
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "%s is NULL", !desc ? "desc" : "out_texture")

static kiln_result create_texture2d(kiln_device *dev, const kiln_texture2d_desc *desc,
                                    const kiln_subresource_data *init, kiln_texture *out)
{
    static const char api[] = "kiln_create_texture2d";
    CREATE_PREAMBLE();
    tex_args a = {KRES_DIM_2D, desc->width, desc->height, 1, desc->mip_levels,
                  desc->array_size ? desc->array_size : 1, desc->format, desc->usage,
                  desc->bind_flags, desc->cpu_access, false, desc->sample_count};
    return create_texture(dev, api, &a, init, out);
}

kiln_result kiln_create_texture2d(kiln_device *dev, const kiln_texture2d_desc *desc,
                                  const kiln_subresource_data *init, kiln_texture *out)
{
    kiln_result r = create_texture2d(dev, desc, init, out);
    if (dev && dev->capture)
        kcap_create_texture2d(dev, desc, init, out ? *out : (kiln_texture){0}, r);
    return r;
}

static kiln_result create_texture1d(kiln_device *dev, const kiln_texture1d_desc *desc,
                                    const kiln_subresource_data *init, kiln_texture *out)
{
    static const char api[] = "kiln_create_texture1d";
    CREATE_PREAMBLE();
    tex_args a = {KRES_DIM_1D, desc->width, 1, 1, desc->mip_levels, desc->array_size ? desc->array_size : 1,
                  desc->format, desc->usage, desc->bind_flags, desc->cpu_access, false, 1};
    return create_texture(dev, api, &a, init, out);
}

kiln_result kiln_create_texture1d(kiln_device *dev, const kiln_texture1d_desc *desc,
                                  const kiln_subresource_data *init, kiln_texture *out)
{
    kiln_result r = create_texture1d(dev, desc, init, out);
    if (dev && dev->capture)
        kcap_create_texture1d(dev, desc, init, out ? *out : (kiln_texture){0}, r);
    return r;
}

static kiln_result create_texture_cube(kiln_device *dev, const kiln_texture_cube_desc *desc,
                                       const kiln_subresource_data *init, kiln_texture *out)
{
    static const char api[] = "kiln_create_texture_cube";
    CREATE_PREAMBLE();
    tex_args a = {KRES_DIM_2D, desc->size, desc->size, 1, desc->mip_levels, 6, desc->format, desc->usage,
                  desc->bind_flags, desc->cpu_access, true, 1};
    return create_texture(dev, api, &a, init, out);
}

kiln_result kiln_create_texture_cube(kiln_device *dev, const kiln_texture_cube_desc *desc,
                                     const kiln_subresource_data *init, kiln_texture *out)
{
    kiln_result r = create_texture_cube(dev, desc, init, out);
    if (dev && dev->capture)
        kcap_create_texture_cube(dev, desc, init, out ? *out : (kiln_texture){0}, r);
    return r;
}

static kiln_result create_texture3d(kiln_device *dev, const kiln_texture3d_desc *desc,
                                    const kiln_subresource_data *init, kiln_texture *out)
{
    static const char api[] = "kiln_create_texture3d";
    CREATE_PREAMBLE();
    tex_args a = {KRES_DIM_3D, desc->width, desc->height, desc->depth, desc->mip_levels, 1,
                  desc->format, desc->usage, desc->bind_flags, desc->cpu_access, false, 1};
    return create_texture(dev, api, &a, init, out);
}

kiln_result kiln_create_texture3d(kiln_device *dev, const kiln_texture3d_desc *desc,
                                  const kiln_subresource_data *init, kiln_texture *out)
{
    kiln_result r = create_texture3d(dev, desc, init, out);
    if (dev && dev->capture)
        kcap_create_texture3d(dev, desc, init, out ? *out : (kiln_texture){0}, r);
    return r;
}

static kiln_result destroy_resource(kiln_device *dev, const char *api, uint32_t id, kres_type type)
{
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_remove(&dev->handles, id, type, type, &lid);
    if (!o)
        return ka_handle_fail(dev, api, type == KRES_TYPE_BUFFER ? "buffer" : "texture", lid);
    kres_resource *res = kres_as_resource(o);
    atomic_store(&res->destroyed, true);
    ka_destroyed(dev);
    kq_resource_destroyed(&dev->queue, res);
    kres_unref(o);
    return KILN_OK;
}

kiln_result kiln_destroy_buffer(kiln_device *dev, kiln_buffer b)
{
    if (dev && dev->capture)
        kcap_destroy_resource_pre(dev, KCAP_OP_DESTROY_BUFFER, b.id);
    kiln_result r = destroy_resource(dev, "kiln_destroy_buffer", b.id, KRES_TYPE_BUFFER);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_BUFFER, b.id, r);
    return r;
}

kiln_result kiln_destroy_texture(kiln_device *dev, kiln_texture t)
{
    if (dev && dev->capture)
        kcap_destroy_resource_pre(dev, KCAP_OP_DESTROY_TEXTURE, t.id);
    kiln_result r = destroy_resource(dev, "kiln_destroy_texture", t.id, KRES_TYPE_TEXTURE2D);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_TEXTURE, t.id, r);
    return r;
}

static kiln_result buffer_get_desc(kiln_device *dev, kiln_buffer b, kiln_buffer_desc *out)
{
    static const char api[] = "kiln_buffer_get_desc";
    if (out)
        memset(out, 0, sizeof *out);
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_desc is NULL");
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, b.id, KRES_TYPE_BUFFER, KRES_TYPE_BUFFER, api, "buffer", &r);
    if (!res) {
        memset(out, 0, sizeof *out);
        return r;
    }
    *out = (kiln_buffer_desc){res->width, res->usage, res->bind_flags, res->cpu_access};
    kres_unref(&res->base);
    return KILN_OK;
}

kiln_result kiln_buffer_get_desc(kiln_device *dev, kiln_buffer b, kiln_buffer_desc *out)
{
    kiln_result r = buffer_get_desc(dev, b, out);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_BUFFER_GET_DESC, b.id, r);
    return r;
}

static kiln_result texture_get_desc(kiln_device *dev, kiln_texture t, kiln_texture2d_desc *out)
{
    static const char api[] = "kiln_texture_get_desc";
    if (out)
        memset(out, 0, sizeof *out);
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_desc is NULL");
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, t.id, KRES_TYPE_TEXTURE2D, KRES_TYPE_TEXTURE2D, api, "texture", &r);
    if (!res) {
        memset(out, 0, sizeof *out);
        return r;
    }
    *out = (kiln_texture2d_desc){.width = res->width,
                                 .height = res->height,
                                 .mip_levels = res->mip_levels,
                                 .array_size = res->array_size,
                                 .format = res->format,
                                 .usage = res->usage,
                                 .bind_flags = res->bind_flags,
                                 .cpu_access = res->cpu_access,
                                 .sample_count = res->samples};
    kres_unref(&res->base);
    return KILN_OK;
}

kiln_result kiln_texture_get_desc(kiln_device *dev, kiln_texture t, kiln_texture2d_desc *out)
{
    kiln_result r = texture_get_desc(dev, t, out);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_TEXTURE_GET_DESC, t.id, r);
    return r;
}

static kiln_result texture3d_get_desc(kiln_device *dev, kiln_texture t, kiln_texture3d_desc *out)
{
    static const char api[] = "kiln_texture3d_get_desc";
    if (out)
        memset(out, 0, sizeof *out);
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_desc is NULL");
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, t.id, KRES_TYPE_TEXTURE2D, KRES_TYPE_TEXTURE2D, api, "texture", &r);
    if (!res)
        return r;
    *out = (kiln_texture3d_desc){res->width, res->height, res->depth, res->mip_levels, res->format,
                                 res->usage, res->bind_flags, res->cpu_access};
    kres_unref(&res->base);
    return KILN_OK;
}

kiln_result kiln_texture3d_get_desc(kiln_device *dev, kiln_texture t, kiln_texture3d_desc *out)
{
    kiln_result r = texture3d_get_desc(dev, t, out);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_TEXTURE3D_GET_DESC, t.id, r);
    return r;
}

/* ---- views ---- */

static kiln_result create_view(kiln_device *dev, const char *api, kres_type type, kiln_texture tex,
                               kiln_format format, uint32_t first_mip, uint32_t num_mips,
                               uint32_t first_slice, uint32_t num_slices, uint8_t dim, uint32_t *out_id)
{
    static const uint32_t need_bind[] = {[KRES_TYPE_RTV] = KILN_BIND_RENDER_TARGET,
                                         [KRES_TYPE_DSV] = KILN_BIND_DEPTH_STENCIL,
                                         [KRES_TYPE_SRV] = KILN_BIND_SHADER_RESOURCE};
    kiln_result r;
    kres_resource *res =
        ka_get_resource(dev, tex.id, KRES_TYPE_TEXTURE2D, KRES_TYPE_TEXTURE2D, api, "texture", &r);
    if (!res)
        return r;
    /* Render targets of a 3D texture range over the W slices of their mip
     * (an SRV of one views it whole: slice 0 of 1). */
    uint32_t planes = res->array_size;
    if (res->dim == KRES_DIM_3D && type == KRES_TYPE_RTV)
        planes = first_mip < res->mip_levels ? res->subs[first_mip].depth : 1;
    if (!(res->bind_flags & need_bind[type]))
        r = FAIL(KILN_E_INVALID_ARG, VIEW_RESOURCE_BIND, "the texture lacks bind flag 0x%x", need_bind[type]);
    else if (format != KILN_FORMAT_UNKNOWN && format != res->format)
        r = FAIL(KILN_E_INVALID_ARG, VIEW_FORMAT, "view format %d, texture format %d", (int)format,
                 (int)res->format);
    else if (first_mip >= res->mip_levels || num_mips > res->mip_levels - first_mip || num_mips == 0 ||
             first_slice >= planes || num_slices > planes - first_slice || num_slices == 0)
        r = FAIL(KILN_E_INVALID_ARG, VIEW_SUBRESOURCE,
                 "mips [%u, +%u) slices [%u, +%u) of a texture with %u mips and %u slices", first_mip,
                 num_mips, first_slice, num_slices, res->mip_levels, planes);
    if (r == KILN_OK) {
        kres_view *v;
        r = kres_view_create(&dev->env, type, res, res->format, first_mip, num_mips, first_slice,
                             num_slices, &v);
        if (r != KILN_OK) {
            r = FAIL(r, OUT_OF_MEMORY, "view");
        } else {
            v->dim = dim;
            r = add_handle(dev, api, &v->base, out_id);
        }
    }
    kres_unref(&res->base);
    return r;
}

#define VIEW_PREAMBLE(outp)                                                                        \
    if (outp)                                                                                      \
        outp->id = 0;                                                                              \
    if (!dev)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL"); \
    if (!outp)                                                                                     \
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_view is NULL");                         \
    outp->id = 0

static kiln_result create_rtv(kiln_device *dev, kiln_texture tex, const kiln_rtv_desc *d, kiln_rtv *out)
{
    static const char api[] = "kiln_create_rtv";
    VIEW_PREAMBLE(out);
    kiln_rtv_desc z = {0};
    if (!d)
        d = &z;
    return create_view(dev, api, KRES_TYPE_RTV, tex, d->format, d->mip_slice, 1, d->first_array_slice,
                       d->array_size ? d->array_size : 1, 0, &out->id);
}

kiln_result kiln_create_rtv(kiln_device *dev, kiln_texture tex, const kiln_rtv_desc *d, kiln_rtv *out)
{
    kiln_result r = create_rtv(dev, tex, d, out);
    if (dev && dev->capture)
        kcap_create_view(dev, KCAP_OP_CREATE_RTV, tex, d, out ? out->id : 0, r);
    return r;
}

static kiln_result create_dsv(kiln_device *dev, kiln_texture tex, const kiln_dsv_desc *d, kiln_dsv *out)
{
    static const char api[] = "kiln_create_dsv";
    VIEW_PREAMBLE(out);
    kiln_dsv_desc z = {0};
    if (!d)
        d = &z;
    return create_view(dev, api, KRES_TYPE_DSV, tex, d->format, d->mip_slice, 1, d->first_array_slice,
                       d->array_size ? d->array_size : 1, 0, &out->id);
}

kiln_result kiln_create_dsv(kiln_device *dev, kiln_texture tex, const kiln_dsv_desc *d, kiln_dsv *out)
{
    kiln_result r = create_dsv(dev, tex, d, out);
    if (dev && dev->capture)
        kcap_create_view(dev, KCAP_OP_CREATE_DSV, tex, d, out ? out->id : 0, r);
    return r;
}

static kiln_result create_srv(kiln_device *dev, kiln_texture tex, const kiln_srv_desc *d, kiln_srv *out)
{
    static const char api[] = "kiln_create_srv";
    VIEW_PREAMBLE(out);
    kiln_srv_desc z = {0};
    if (!d)
        d = &z;
    /* 0 counts mean "the rest"; resolved against the texture in create_view
     * through UINT32_MAX sentinels clipped here. */
    kiln_result r;
    kres_resource *res =
        ka_get_resource(dev, tex.id, KRES_TYPE_TEXTURE2D, KRES_TYPE_TEXTURE2D, api, "texture", &r);
    if (!res)
        return r;
    uint32_t mips = d->mip_levels, first = d->first_array_slice, slices = d->array_size;
    if (!mips)
        mips = d->most_detailed_mip < res->mip_levels ? res->mip_levels - d->most_detailed_mip : 1;
    if (!slices)
        slices = first < res->array_size ? res->array_size - first : 1;
    /* The dimension: the texture's own by default (2D textures keep
     * kiln's original 2D view), else one that fits its kind. */
    uint32_t dim = (uint32_t)d->dimension;
    if (dim == KILN_SRV_DIMENSION_DEFAULT)
        dim = res->dim == KRES_DIM_1D   ? (res->array_size > 1 ? KILN_SRV_DIMENSION_TEXTURE1DARRAY
                                                                : KILN_SRV_DIMENSION_TEXTURE1D)
              : res->dim == KRES_DIM_3D ? KILN_SRV_DIMENSION_TEXTURE3D
              : res->cube               ? KILN_SRV_DIMENSION_TEXTURECUBE
                                        : KILN_SRV_DIMENSION_DEFAULT;
    bool fits = true;
    switch (dim) {
    case KILN_SRV_DIMENSION_DEFAULT: break;
    case KILN_SRV_DIMENSION_TEXTURE1D:
    case KILN_SRV_DIMENSION_TEXTURE1DARRAY: fits = res->dim == KRES_DIM_1D; break;
    case KILN_SRV_DIMENSION_TEXTURE2D:
    case KILN_SRV_DIMENSION_TEXTURE2DARRAY: fits = res->dim == KRES_DIM_2D; break;
    case KILN_SRV_DIMENSION_TEXTURE3D: fits = res->dim == KRES_DIM_3D; break;
    case KILN_SRV_DIMENSION_TEXTURECUBE: fits = res->dim == KRES_DIM_2D && res->cube; break;
    case KILN_SRV_DIMENSION_BUFFER: fits = false; break; /* kiln_create_buffer_srv */
    default:
        kres_unref(&res->base);
        return FAIL(KILN_E_INVALID_ARG, DESC_INVALID_ENUM, "dimension %u is not a kiln_srv_dimension", dim);
    }
    int kind = res->dim;
    bool cube = res->cube;
    kres_unref(&res->base);
    if (!fits)
        return FAIL(KILN_E_INVALID_ARG, VIEW_DIMENSION, "dimension %u on a %s texture", dim,
                    kind == KRES_DIM_1D ? "1D" : kind == KRES_DIM_3D ? "3D" : cube ? "cube" : "2D");
    if (dim == KILN_SRV_DIMENSION_TEXTURE3D || dim == KILN_SRV_DIMENSION_TEXTURECUBE) {
        if (d->first_array_slice || d->array_size)
            return FAIL(KILN_E_INVALID_ARG, VIEW_SUBRESOURCE,
                        "a %s view has no array range (first_array_slice and array_size must be 0)",
                        dim == KILN_SRV_DIMENSION_TEXTURE3D ? "3D" : "cube");
        first = 0;
        slices = dim == KILN_SRV_DIMENSION_TEXTURECUBE ? 6 : 1;
    } else if (dim == KILN_SRV_DIMENSION_TEXTURE1D || dim == KILN_SRV_DIMENSION_TEXTURE2D) {
        if (d->array_size > 1)
            return FAIL(KILN_E_INVALID_ARG, VIEW_SUBRESOURCE, "a non-array view has one slice, not %u",
                        d->array_size);
        slices = 1;
    }
    return create_view(dev, api, KRES_TYPE_SRV, tex, d->format, d->most_detailed_mip, mips, first, slices,
                       (uint8_t)dim, &out->id);
}

/* The formats a typed buffer view reads: color formats that are not
 * block-compressed or sRGB (D3D10's buffer format support). */
static bool buffer_view_format(kiln_format f)
{
    const kres_format_info *fi = kres_format(f);
    return fi && !fi->is_depth && fi->block <= 1 && !kres_format_srgb(f);
}

static kiln_result create_buffer_srv(kiln_device *dev, kiln_buffer buf, const kiln_buffer_srv_desc *d,
                                     kiln_srv *out)
{
    static const char api[] = "kiln_create_buffer_srv";
    VIEW_PREAMBLE(out);
    if (!d)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "desc is NULL (a buffer view needs a format)");
    kiln_result r;
    kres_resource *res = ka_get_resource(dev, buf.id, KRES_TYPE_BUFFER, KRES_TYPE_BUFFER, api, "buffer", &r);
    if (!res)
        return r;
    uint64_t esize = buffer_view_format(d->format) ? kres_format(d->format)->size : 0;
    if (!(res->bind_flags & KILN_BIND_SHADER_RESOURCE))
        r = FAIL(KILN_E_INVALID_ARG, VIEW_RESOURCE_BIND, "the buffer lacks bind flag 0x%x",
                 (unsigned)KILN_BIND_SHADER_RESOURCE);
    else if (!esize)
        r = FAIL(KILN_E_INVALID_ARG, BUFFER_VIEW_FORMAT, "format %d cannot be read through a buffer view",
                 (int)d->format);
    else if (d->num_elements == 0 || ((uint64_t)d->first_element + d->num_elements) * esize > res->width)
        r = FAIL(KILN_E_INVALID_ARG, BUFFER_VIEW_RANGE,
                 "elements [%u, +%u) of %llu bytes each in a buffer of %u bytes", d->first_element,
                 d->num_elements, (unsigned long long)esize, res->width);
    else if (!(dev->queue.backend->caps & KQ_BACKEND_BUFFER_VIEWS))
        r = FAIL(KILN_E_UNSUPPORTED, BACKEND_FEATURE, "the %s backend has no buffer views",
                 dev->queue.backend->name);
    if (r == KILN_OK) {
        kres_view *v;
        r = kres_view_create(&dev->env, KRES_TYPE_SRV, res, d->format, 0, 1, 0, 1, &v);
        if (r != KILN_OK) {
            r = FAIL(r, OUT_OF_MEMORY, "view");
        } else {
            v->dim = KILN_SRV_DIMENSION_BUFFER;
            v->first_element = d->first_element;
            v->num_elements = d->num_elements;
            r = add_handle(dev, api, &v->base, &out->id);
        }
    }
    kres_unref(&res->base);
    return r;
}

kiln_result kiln_create_buffer_srv(kiln_device *dev, kiln_buffer buf, const kiln_buffer_srv_desc *d, kiln_srv *out)
{
    kiln_result r = create_buffer_srv(dev, buf, d, out);
    if (dev && dev->capture)
        kcap_create_view(dev, KCAP_OP_CREATE_BUFFER_SRV, (kiln_texture){buf.id}, d, out ? out->id : 0, r);
    return r;
}

kiln_result kiln_create_srv(kiln_device *dev, kiln_texture tex, const kiln_srv_desc *d, kiln_srv *out)
{
    kiln_result r = create_srv(dev, tex, d, out);
    if (dev && dev->capture)
        kcap_create_view(dev, d && d->dimension ? KCAP_OP_CREATE_SRV_DIM : KCAP_OP_CREATE_SRV, tex, d,
                         out ? out->id : 0, r);
    return r;
}

static kiln_result destroy_view(kiln_device *dev, const char *api, uint32_t id, kres_type type)
{
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_remove(&dev->handles, id, type, type, &lid);
    if (!o)
        return ka_handle_fail(dev, api, "view", lid);
    atomic_store(&((kres_view *)o)->destroyed, true);
    ka_destroyed(dev);
    kres_unref(o);
    return KILN_OK;
}

kiln_result kiln_destroy_rtv(kiln_device *dev, kiln_rtv v)
{
    kiln_result r = destroy_view(dev, "kiln_destroy_rtv", v.id, KRES_TYPE_RTV);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_RTV, v.id, r);
    return r;
}

kiln_result kiln_destroy_dsv(kiln_device *dev, kiln_dsv v)
{
    kiln_result r = destroy_view(dev, "kiln_destroy_dsv", v.id, KRES_TYPE_DSV);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_DSV, v.id, r);
    return r;
}

kiln_result kiln_destroy_srv(kiln_device *dev, kiln_srv v)
{
    kiln_result r = destroy_view(dev, "kiln_destroy_srv", v.id, KRES_TYPE_SRV);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_SRV, v.id, r);
    return r;
}
