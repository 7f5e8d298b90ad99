/* Storage, buffers, 2D textures and views: creation, layout, lifetime. */
#include "resources.h"

#include <string.h>

/* ---- storage ---- */

kres_storage *kres_storage_create(const kb_env *env, size_t size)
{
    kres_storage *st = kb_calloc(env, sizeof *st);
    if (!st)
        return NULL;
    st->alloc_size = size + 63;
    st->alloc_base = kb_calloc(env, st->alloc_size);
    if (!st->alloc_base) {
        kb_free(env, st, sizeof *st);
        return NULL;
    }
    st->data = (uint8_t *)KB_ALIGN_UP((uintptr_t)st->alloc_base, 64);
    st->size = size;
    st->env = env;
    atomic_init(&st->refs, 1);
    return st;
}

void kres_storage_ref(kres_storage *st)
{
    atomic_fetch_add_explicit(&st->refs, 1, memory_order_relaxed);
}

void kres_storage_unref(kres_storage *st)
{
    if (st && atomic_fetch_sub_explicit(&st->refs, 1, memory_order_acq_rel) == 1) {
        const kb_env *env = st->env;
        if (st->mirror_release)
            st->mirror_release(st->mirror);
        kb_free(env, st->alloc_base, st->alloc_size);
        kb_free(env, st, sizeof *st);
    }
}

/* ---- resources ---- */

/* A texture's row pitch: rows 16-byte aligned for SIMD, and rows of 512
 * bytes or more padded to an odd number of 64-byte lines. The
 * rasterizer walks 64x64-pixel tiles; with a pitch of a multiple of 256
 * bytes (1080p RGBA8: 7,680 bytes, 120 lines) a tile's rows fall on a few
 * of L1's 64 sets and evict each other, where an odd number of lines
 * spreads them over every set (cachegrind, 32 KiB 8-way L1, bench (c+):
 * read misses 6.6 M -> 1.5 M). Costs at most one line per row. */
static uint32_t row_pitch(size_t bytes)
{
    size_t pitch = KB_ALIGN_UP(bytes, 16);
    if (pitch >= 512) {
        pitch = KB_ALIGN_UP(pitch, 64);
        if (!(pitch / 64 & 1))
            pitch += 64;
    }
    return (uint32_t)pitch;
}

static void resource_destroy(kres_object *obj)
{
    kres_resource *res = (kres_resource *)obj;
    const kb_env *env = obj->env;
    kres_storage_unref(res->current);
    kb_free(env, res->subs, sizeof(kres_subresource) * res->num_subresources);
    kb_free(env, res->map.mapped, res->num_subresources);
    kb_free(env, res, sizeof *res);
}

kiln_result kres_resource_create(const kb_env *env, const kres_layout_desc *d,
                                 kres_resource **out)
{
    kres_resource *res = kb_calloc(env, sizeof *res);
    if (!res)
        return KILN_E_OUT_OF_MEMORY;
    res->base.type = d->type;
    res->base.env = env;
    res->base.destroy = resource_destroy;
    atomic_init(&res->base.refs, 1);
    atomic_init(&res->destroyed, false);
    res->usage = d->usage;
    res->bind_flags = d->bind_flags;
    res->cpu_access = d->cpu_access;
    res->format = d->format;
    res->width = d->width;
    res->height = d->height;
    res->mip_levels = d->mip_levels;
    res->array_size = d->array_size;
    res->samples = d->samples > 1 ? d->samples : 1;
    res->dim = d->dim;
    res->cube = d->cube;
    res->depth = d->depth ? d->depth : 1;
    res->num_subresources = d->type == KRES_TYPE_BUFFER ? 1 : d->mip_levels * d->array_size;

    res->subs = kb_calloc(env, sizeof(kres_subresource) * res->num_subresources);
    res->map.mapped = kb_calloc(env, res->num_subresources);
    if (!res->subs || !res->map.mapped) {
        kb_free(env, res->subs, sizeof(kres_subresource) * res->num_subresources);
        kb_free(env, res->map.mapped, res->num_subresources);
        kb_free(env, res, sizeof *res);
        return KILN_E_OUT_OF_MEMORY;
    }

    size_t offset = 0;
    if (d->type == KRES_TYPE_BUFFER) {
        res->subs[0] = (kres_subresource){0, d->width, d->width, 1, d->width, 1, d->width};
        offset = d->width;
    } else {
        const kres_format_info *fi = kres_format(d->format);
        for (uint32_t slice = 0; slice < d->array_size; slice++) {
            for (uint32_t mip = 0; mip < d->mip_levels; mip++) {
                kres_subresource *s = &res->subs[mip + slice * d->mip_levels];
                s->width = KB_MAX(1u, d->width >> mip);
                s->height = KB_MAX(1u, d->height >> mip);
                /* Rows as row_pitch() pads them (16-byte aligned, wide
                 * ones to an odd number of cache lines); subresources
                 * 64-byte aligned (a cache line). BC formats: rows of
                 * blocks. */
                s->row_pitch = row_pitch(kres_row_bytes(fi, s->width));
                s->depth = KB_MAX(1u, res->depth >> mip);
                s->depth_pitch = (size_t)s->row_pitch * kres_blocks(fi, s->height);
                s->size = s->depth_pitch * s->depth * res->samples;
                offset = KB_ALIGN_UP(offset, 64);
                s->offset = offset;
                offset += s->size;
            }
        }
    }
    res->storage_size = offset;
    res->current = kres_storage_create(env, offset);
    if (!res->current) {
        resource_destroy(&res->base);
        return KILN_E_OUT_OF_MEMORY;
    }
    *out = res;
    return KILN_OK;
}

void kres_resource_init_data(kres_resource *res, const kiln_subresource_data *init)
{
    if (res->base.type == KRES_TYPE_BUFFER) {
        memcpy(res->current->data, init[0].data, res->width);
        return;
    }
    const kres_format_info *fi = kres_format(res->format);
    for (uint32_t i = 0; i < res->num_subresources; i++) {
        const kres_subresource *s = &res->subs[i];
        size_t row = kres_row_bytes(fi, s->width);
        size_t pitch = init[i].row_pitch ? init[i].row_pitch : row;
        size_t slice = pitch * s->height; /* 3D: slices follow each other */
        const uint8_t *src = init[i].data;
        for (uint32_t z = 0; z < s->depth; z++)
            for (uint32_t y = 0; y < kres_blocks(fi, s->height); y++)
                memcpy(res->current->data + s->offset + z * s->depth_pitch + (size_t)y * s->row_pitch,
                       src + z * slice + (size_t)y * pitch, row);
    }
}

/* ---- views ---- */

static void view_destroy(kres_object *obj)
{
    kres_view *v = (kres_view *)obj;
    const kb_env *env = obj->env;
    kres_unref(&v->res->base);
    kb_free(env, v, sizeof *v);
}

kiln_result kres_view_create(const kb_env *env, kres_type type, kres_resource *res,
                             kiln_format format, uint32_t first_mip, uint32_t num_mips,
                             uint32_t first_slice, uint32_t num_slices, kres_view **out)
{
    kres_view *v = kb_calloc(env, sizeof *v);
    if (!v)
        return KILN_E_OUT_OF_MEMORY;
    v->base.type = type;
    v->base.env = env;
    v->base.destroy = view_destroy;
    atomic_init(&v->base.refs, 1);
    atomic_init(&v->destroyed, false);
    kres_ref(&res->base);
    v->res = res;
    v->format = format;
    v->first_mip = first_mip;
    v->num_mips = num_mips;
    v->first_slice = first_slice;
    v->num_slices = num_slices;
    *out = v;
    return KILN_OK;
}

/* ---- pipeline objects ---- */

static void pipe_destroy(kres_object *obj)
{
    kb_free(obj->env, obj, sizeof(kres_pipe));
}

kiln_result kres_pipe_create(const kb_env *env, kres_type type, const void *desc, size_t size,
                             kres_pipe **out)
{
    kres_pipe *p = kb_calloc(env, sizeof *p);
    if (!p)
        return KILN_E_OUT_OF_MEMORY;
    p->base.type = type;
    p->base.env = env;
    p->base.destroy = pipe_destroy;
    atomic_init(&p->base.refs, 1);
    atomic_init(&p->destroyed, false);
    memcpy(&p->u, desc, size);
    *out = p;
    return KILN_OK;
}
