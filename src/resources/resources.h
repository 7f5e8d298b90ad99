/*
 * resources: handle table, buffers, textures, views, storage, formats, and
 * the CPU operations on bytes that the executor runs (copy, update, clear).
 *
 * Contract:
 * - Objects (resources and views) are reference counted (atomic). The
 *   handle table holds one reference while the handle is live; a view holds
 *   one on its resource; a queued command holds one on each resource it
 *   touches. kres_unref frees at zero, from whatever thread drops it.
 * - A resource's bytes live in a kres_storage, also reference counted.
 *   `current` changes only by renaming (WRITE_DISCARD), under the device
 *   scheduler mutex (and atomically: see kres_resource); a command captures
 *   the storage at submit time, so renaming never changes what an earlier
 *   command reads.
 * - Layout (subresource offsets and pitches) is immutable after creation.
 * - Nothing here validates API arguments: src/api does, before calling.
 */
#ifndef KILN_RESOURCES_H
#define KILN_RESOURCES_H

#include "../base/base.h"
#include <pthread.h>
#include <string.h>
#include "../queue/lock.h"

/* ---- formats ---- */

typedef struct kres_format_info {
    uint32_t size;      /* bytes per texel */
    uint8_t channels;   /* color channels stored */
    uint8_t is_depth;
    uint8_t has_stencil;
    uint8_t is_unorm8;  /* 8-bit UNORM channels */
    uint8_t block;      /* texels per block side: 4 for BC formats (size is
                           then bytes per block), 0 meaning 1 */
} kres_format_info;

/* Texels per block side (1, or 4 for the BC formats). */
static inline uint32_t kres_block_dim(const kres_format_info *fi)
{
    return fi->block ? fi->block : 1u;
}
/* Blocks along an axis of `texels` (rows of storage for a height). */
static inline uint32_t kres_blocks(const kres_format_info *fi, uint32_t texels)
{
    uint32_t b = fi->block;
    return b ? (texels + b - 1u) / b : texels; /* no division for the common case */
}
/* Bytes of one row of blocks (of texels) across `width` texels, tight. */
static inline size_t kres_row_bytes(const kres_format_info *fi, uint32_t width)
{
    return (size_t)kres_blocks(fi, width) * fi->size;
}

/* The table behind kres_format, indexed by kiln_format; size 0: not a
 * format. Inline: a small command asks for its resources' formats several
 * times, and a call per question was about a tenth of a 16x16 copy's
 * producer instructions. */
extern const kres_format_info kres_formats[KILN_FORMAT_COUNT];
static inline const kres_format_info *kres_format(kiln_format f) /* NULL if invalid */
{
    if ((unsigned)f >= KILN_FORMAT_COUNT || kres_formats[f].size == 0)
        return NULL;
    return &kres_formats[f];
}
/* One D32_FLOAT_S8X24_UINT texel cleared from `texel` under a D24-style
 * mask: the depth (bytes 0..3) when any of bits 0..23 is set, the
 * stencil byte (4) when any of 24..31 is. */
static inline void kres_clear_d32s8(uint8_t *px, const uint8_t *texel, uint32_t mask)
{
    if (mask & 0x00ffffffu)
        memcpy(px, texel, 4);
    if (mask & 0xff000000u)
        px[4] = texel[4];
}

/* Packs an RGBA color into one texel of `f` (D3D10 float->format rules). */
void kres_pack_color(kiln_format f, const float rgba[4], uint8_t out[16]);

/* ---- objects and handles ---- */

typedef enum kres_type {
    KRES_TYPE_NONE = 0,
    KRES_TYPE_BUFFER,
    KRES_TYPE_TEXTURE2D,
    KRES_TYPE_RTV,
    KRES_TYPE_DSV,
    KRES_TYPE_SRV,
    KRES_TYPE_TIMELINE,
    KRES_TYPE_FENCE,
    KRES_TYPE_QUERY,
    KRES_TYPE_VS,
    KRES_TYPE_PS,
    KRES_TYPE_LAYOUT,
    KRES_TYPE_RS,
    KRES_TYPE_DSS,
    KRES_TYPE_BS,
    KRES_TYPE_SAMPLER,
    KRES_TYPE_GS,
    KRES_TYPE_COUNT
} kres_type;

typedef struct kres_object {
    atomic_uint refs;
    kres_type type;
    const kb_env *env;
    void (*destroy)(struct kres_object *obj);
    struct kres_object *gc_next; /* sync: deferred release list */
    uint32_t handle;      /* its id in the handle table, 0 none (traces) */
} kres_object;

/* Inline: every queued command and every handle lookup takes and drops
 * references, and a call per reference was a tenth of a small command's
 * producer instructions. */
static inline void kres_ref(kres_object *obj)
{
    atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
}

static inline void kres_unref(kres_object *obj)
{
    if (obj && atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel) == 1)
        obj->destroy(obj);
}

typedef struct kres_slot {
    uint32_t generation;
    kres_type type;
    kres_object *obj;
    uint32_t next_free; /* index + 1, 0 = end */
} kres_slot;

/* Handle table: index (20 bits) + generation (12 bits); 0 is invalid.
 * Thread-safe (own spinlock, held for a few dozen instructions). Freed slots are reused oldest first; a slot is
 * retired after its 4096th object, so a stale handle is always caught. The
 * table therefore admits about 2^32 objects over a device's life. */
typedef struct kres_handles {
    atomic_bool busy;
    const kb_env *env;
    kres_slot *slots;
    uint32_t count, capacity;
    uint32_t free_head, free_tail; /* index + 1 */
} kres_handles;

#define KRES_MAX_OBJECTS ((1u << 20) - 1)

kiln_result kres_handles_init(kres_handles *h, const kb_env *env);
void kres_handles_fini(kres_handles *h); /* unrefs what is still live */
/* Stores obj (taking over one reference) and returns its id, or 0 when the
 * table cannot grow (out of memory or full). */
uint32_t kres_handles_add(kres_handles *h, kres_object *obj, kiln_result *out_r);
/* Looks up `id`; accepts types in [type_lo, type_hi]. On success returns the
 * object with a new reference (caller unrefs). On failure returns NULL and
 * sets *out_id to the log id (HANDLE_NULL, HANDLE_STALE, HANDLE_WRONG_TYPE). */
kres_object *kres_handles_get(kres_handles *h, uint32_t id, kres_type type_lo,
                              kres_type type_hi, kiln_log_id *out_id);
/* Two lookups under one acquisition of the table's lock (a copy's
 * destination and source): both succeed, each object with a new reference,
 * or neither holds one and *out_which says which failed first (0: ids[0],
 * 1: ids[1], looked up in that order) with *out_id as for get. */
bool kres_handles_get2(kres_handles *h, const uint32_t ids[2], kres_type type_lo, kres_type type_hi,
                       kres_object *out[2], uint32_t *out_which, kiln_log_id *out_id);
/* Removes the handle and returns the table's reference (caller unrefs), or
 * NULL with *out_id as for get. */
kres_object *kres_handles_remove(kres_handles *h, uint32_t id, kres_type type_lo,
                                 kres_type type_hi, kiln_log_id *out_id);

/* Objects with a live handle now. */
uint32_t kres_handles_live(kres_handles *h);

/* ---- storage ---- */

typedef struct kres_storage {
    atomic_uint refs;
    const kb_env *env;
    size_t size;
    uint8_t *data; /* 64-byte aligned */
    void *alloc_base;
    size_t alloc_size;
    kq_lock lock;  /* owned by the queue scheduler */
    /* For backends that keep their own copy of the bytes (src/gl): `gen`
     * grows after every CPU write (executor commands, written Maps), so a
     * copy knows it is stale; `backend_newer` says the backend's copy is
     * newer than `data` (kq_backend.sync_storage brings it back). `mirror`
     * is the backend's copy, freed through mirror_release with the storage
     * (from whatever thread drops the last reference). */
    atomic_uint gen;
    atomic_bool backend_newer;
    void *mirror;
    void (*mirror_release)(void *mirror);
} kres_storage;

kres_storage *kres_storage_create(const kb_env *env, size_t size); /* zeroed */
void kres_storage_ref(kres_storage *st);
void kres_storage_unref(kres_storage *st);

/* ---- resources ---- */

typedef struct kres_subresource {
    size_t offset;      /* from the start of the storage */
    size_t size;        /* depth_pitch * depth * the resource's samples */
    uint32_t width, height; /* texels */
    uint32_t row_pitch; /* bytes (a row of blocks for BC); buffers: the size */
    uint32_t depth;     /* 1 except for the mips of 3D textures */
    size_t depth_pitch; /* row_pitch * rows (of blocks for BC): bytes between depth slices
                           (and between the sample planes of a 4x texture) */
} kres_subresource;

/* CPU map state, owned by the queue (guarded by the scheduler mutex). */
typedef struct kres_map_state {
    kq_node node;          /* the CPU's grant while anything is mapped */
    uint32_t mapped_count; /* subresources mapped now */
    uint8_t *mapped;       /* per subresource: 0 or the kiln_map_type */
    struct kq_context *owner;     /* context whose Map holds the grant */
    struct kres_resource *next, *prev; /* owner's list of mapped resources */
    struct kres_resource *dev_next, *dev_prev; /* the device's list of them */
    pthread_t thread;      /* the thread whose Map took the grant */
    uint8_t waiting;       /* a Map is waiting for the grant */
    uint8_t no_overwrite;  /* the grant is a WRITE_NO_OVERWRITE Map's */
} kres_map_state;

typedef struct kres_resource {
    kres_object base;     /* type BUFFER or TEXTURE2D */
    kiln_usage usage;
    uint32_t bind_flags;
    uint32_t cpu_access;  /* resolved: never 0 for DYNAMIC and STAGING */
    kiln_format format;   /* UNKNOWN for buffers */
    uint32_t width, height, mip_levels, array_size; /* buffer: width = size */
    /* Samples per pixel (1 or 4). A 4x subresource holds four sample
     * planes of row_pitch * height bytes one after the other, sample k's
     * first: as an image of 4 * height rows. */
    uint32_t samples;
    uint32_t num_subresources;
    kres_subresource *subs;
    size_t storage_size;
    /* Renamed (DYNAMIC only) under the scheduler mutex; atomic, so that a
     * draw may compare it with a storage it holds without the mutex. */
    _Atomic(kres_storage *) current;
    atomic_bool destroyed;
    kres_map_state map;
    /* STREAM_OUTPUT buffers: the byte where the last stream-output write
     * ended (D3D10's BufferFilledSize), for KILN_SO_APPEND and draw_auto.
     * Written and read only by commands holding the resource (a draw that
     * streams into it writes it), so the lock lists order every access. */
    uint32_t so_filled;
    /* Texture kinds (issue 12): every texture is a KRES_TYPE_TEXTURE2D
     * object; `dim` says which kind. 1D textures have height 1; a
     * TextureCube is a 2D array of 6 faces with `cube` set; a 3D texture
     * has array size 1 and one subresource per mip, `depth` slices deep
     * (kres_subresource.depth). */
    uint8_t dim;          /* KRES_DIM_* */
    uint8_t cube;
    uint32_t depth;       /* 3D: depth of mip 0; else 1 */
} kres_resource;

enum { KRES_DIM_2D = 0, KRES_DIM_1D = 1, KRES_DIM_3D = 3 };

/* A "plane" is what a render target, a clear or a layered draw writes: one
 * 2D image of a mip, picked by `layer`, the array slice, or for a 3D
 * texture the depth slice (a W slice). */
static inline const kres_subresource *kres_plane_sub(const kres_resource *r, uint32_t mip,
                                                     uint32_t layer)
{
    return &r->subs[r->dim == KRES_DIM_3D ? mip : mip + layer * r->mip_levels];
}
static inline size_t kres_plane_offset(const kres_resource *r, uint32_t mip, uint32_t layer)
{
    if (r->dim == KRES_DIM_3D)
        return r->subs[mip].offset + (size_t)layer * r->subs[mip].depth_pitch;
    return r->subs[mip + layer * r->mip_levels].offset;
}

typedef struct kres_layout_desc {
    kres_type type;
    kiln_usage usage;
    uint32_t bind_flags, cpu_access;
    kiln_format format;
    uint32_t width, height, mip_levels, array_size;
    uint32_t samples; /* 0 or 1: one */
    uint32_t depth; /* 3D only (0: 1) */
    uint8_t dim;    /* KRES_DIM_*; 0: 2D */
    uint8_t cube;
} kres_layout_desc;

/* Creates a resource with zeroed storage (arguments already validated). */
kiln_result kres_resource_create(const kb_env *env, const kres_layout_desc *d,
                                 kres_resource **out);
/* Copies initial data in (creation time; nothing can be using it yet). */
void kres_resource_init_data(kres_resource *res, const kiln_subresource_data *init);

static inline kres_resource *kres_as_resource(kres_object *o) { return (kres_resource *)o; }

/* ---- views ---- */

typedef struct kres_view {
    kres_object base;     /* type RTV, DSV or SRV */
    atomic_bool destroyed;/* its handle was destroyed (bindings still hold it) */
    kres_resource *res;   /* reference held */
    kiln_format format;
    uint32_t first_mip, num_mips;
    uint32_t first_slice, num_slices; /* 3D render targets: W slices */
    uint8_t dim;          /* SRV: a kiln_srv_dimension, DEFAULT for 2D
                             views as kiln always made them (sampled at
                             their first slice); BUFFER for typed buffer
                             views, whose resource is a buffer */
    uint32_t first_element, num_elements; /* BUFFER views: elements of `format` */
} kres_view;

kiln_result kres_view_create(const kb_env *env, kres_type type, kres_resource *res,
                             kiln_format format, uint32_t first_mip, uint32_t num_mips,
                             uint32_t first_slice, uint32_t num_slices, kres_view **out);

/* ---- pipeline objects: shaders, input layouts, state objects ---- */

/* Immutable once created; `destroyed` is set when the handle is destroyed
 * (a context that still has it bound then refuses to draw). */
/* A stream-output declaration, compacted (objects.c validated it). */
typedef struct kres_so_el {
    uint8_t reg, start, count, slot;
} kres_so_el;
typedef struct kres_so_decl {
    uint32_t n;                            /* elements; 0: no stream output */
    kres_so_el el[KILN_SO_MAX_ELEMENTS];
    uint32_t stride[KILN_SO_BUFFER_SLOTS]; /* bytes per vertex; 0: slot unused */
    uint32_t desc_stride;                  /* kiln_so_desc.stride as given */
} kres_so_decl;

/* A geometry shader object: the desc (fn NULL only with a declaration: a
 * pass-through of the vertex shader's output) and its declaration. */
typedef struct kres_gs {
    kiln_geometry_shader_desc d;
    kres_so_decl so;
} kres_gs;

typedef struct kres_pipe {
    kres_object base; /* VS .. SAMPLER, GS */
    atomic_bool destroyed;
    union {
        kiln_vertex_shader_desc vs;
        kiln_pixel_shader_desc ps;
        kiln_input_layout_desc layout;
        kiln_rasterizer_desc rs;
        kiln_depth_stencil_desc dss;
        kiln_blend_desc bs;
        kiln_sampler_desc sampler;
        kres_gs gs;
    } u;
} kres_pipe;

kiln_result kres_pipe_create(const kb_env *env, kres_type type, const void *desc, size_t size,
                             kres_pipe **out);

/* ---- operations on bytes (run by the executor) ---- */

/* Region copy between subresources; box in texels (bytes for buffers;
 * blocks for BC formats: src/api converts). */
void kres_copy_region(kres_resource *dst, kres_storage *dst_st, uint32_t dst_sub,
                      uint32_t dst_x, uint32_t dst_y, uint32_t dst_z, kres_resource *src,
                      kres_storage *src_st, uint32_t src_sub, const kiln_box *box);
/* Whole-resource copy (identical layouts). */
void kres_copy_all(kres_resource *dst, kres_storage *dst_st, kres_resource *src,
                   kres_storage *src_st);
/* ResolveSubresource: each pixel of the destination subresource is the
 * average of the source's samples (a color format, not integer). */
void kres_resolve(kres_resource *dst, kres_storage *dst_st, uint32_t dst_sub, kres_resource *src,
                  kres_storage *src_st, uint32_t src_sub);
/* Writes rows of packed bytes (src_pitch apart; a 3D box's depth slices
 * follow each other, (bottom - top) rows each) into a box of a subresource
 * (box in blocks for BC formats, as for kres_copy_region). */
void kres_write_box(kres_resource *dst, kres_storage *st, uint32_t sub, const kiln_box *box,
                    const uint8_t *src, size_t src_pitch);
/* Fills mips [first_mip, first_mip+num_mips) x planes (kres_plane_sub) with one texel value.
 * For depth formats `mask` selects the bits kept from `texel` (D24S8
 * partial clears); pass all ones otherwise. */
void kres_fill(kres_resource *dst, kres_storage *st, uint32_t first_mip, uint32_t num_mips,
               uint32_t first_slice, uint32_t num_slices, const uint8_t *texel,
               uint32_t texel_mask32);

#endif
