/*
 * capture: recording a device's calls into a file, and reading them back.
 *
 * Its files, with this header as their contract (the replayer's two also
 * share replay.h):
 *
 *   format.c   the record layout: one function per direction over one
 *              table of fields (kcap_encode, kcap_decode), so the encoder
 *              and the decoder cannot disagree. The decoder is pure: it
 *              reads one record from (bytes, len, offset) into a kcap_call,
 *              validates every length, count, enum and limit, and on error
 *              says where. It keeps no state between records and allocates
 *              nothing (blobs point into the input), so replay and a fuzzer
 *              share it.
 *   record.c   the writer: the file, its buffer and lock, the ids it gives
 *              contexts and swapchains, the mapped ranges and DYNAMIC
 *              shadows it needs to record what the CPU wrote; begin/end.
 *   hooks.c    one kcap_<call> per public entry point: called by src/api
 *              and src/present after the call ran, with its arguments and
 *              result, it fills a kcap_call and hands it to the writer.
 *   registry.c the shader names (per device; built-in effects built in).
 *   replay.c   runs a decoded capture on a new device through the public
 *              API only (kcap_replay).
 *
 * docs/capture.md documents the format: header, record framing, every
 * record's fields, versioning. Everything is little-endian; integers are
 * LEB128 varints (zigzag for signed), floats 4 bytes IEEE-754.
 *
 * Threads: the writer has one mutex; hooks may run on any thread. A hook
 * returns at once when the calling thread is suppressed (kcap_suppress):
 * kiln's own code calling the public API (the swapchain) is not recorded.
 */
#ifndef KILN_CAPTURE_H
#define KILN_CAPTURE_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the file ---- */

#define KCAP_MAGIC "KILNCAP"  /* 7 characters + NUL: the first 8 bytes */
#define KCAP_VERSION_MAJOR 1u /* records change: older readers refuse */
#define KCAP_VERSION_MINOR                                                                         \
    5u                       /* records added: older readers refuse                                \
                                captures that use them, by op */
/* Bytes of a row of `texels` and the rows of `texels` of a texture of
 * format f: rows of 4x4 blocks for BC formats (kiln_format_block_dim). */
static inline uint32_t kcap_row_bytes(kiln_format f, uint32_t texels)
{
    uint32_t d = kiln_format_block_dim(f);
    d = d ? d : 1u;
    return (texels + d - 1u) / d * kiln_format_size(f);
}
static inline uint32_t kcap_row_count(kiln_format f, uint32_t texels)
{
    uint32_t d = kiln_format_block_dim(f);
    d = d ? d : 1u;
    return (texels + d - 1u) / d;
}
#define KCAP_HEADER_SIZE 16u /* magic, u16 major, u16 minor, u32 size */
#define KCAP_BLEND_TARGETS_1_0 4u /* CREATE_BLEND_STATE's targets (1.0: kiln had 4) */
#define KCAP_NAME_MAX 63u    /* shader names */

/* Every record, in op order: the op number is the position (1-based). New
 * ops are only appended. X(NAME, api-call or description). */
#define KCAP_OPS(X)                                                                                \
    X(DEVICE, "device")                                                                            \
    X(CONTEXT_STATE, "context state")                                                              \
    X(END, "end of capture")                                                                       \
    X(FAILED, "failed call")                                                                       \
    X(FRAME, "kiln_capture_frame")                                                                 \
    X(DEVICE_GET_STATS, "kiln_device_get_stats")                                                   \
    X(CREATE_BUFFER, "kiln_create_buffer")                                                         \
    X(CREATE_TEXTURE2D, "kiln_create_texture2d")                                                   \
    X(DESTROY_BUFFER, "kiln_destroy_buffer")                                                       \
    X(DESTROY_TEXTURE, "kiln_destroy_texture")                                                     \
    X(BUFFER_GET_DESC, "kiln_buffer_get_desc")                                                     \
    X(TEXTURE_GET_DESC, "kiln_texture_get_desc")                                                   \
    X(CREATE_RTV, "kiln_create_rtv")                                                               \
    X(CREATE_DSV, "kiln_create_dsv")                                                               \
    X(CREATE_SRV, "kiln_create_srv")                                                               \
    X(DESTROY_RTV, "kiln_destroy_rtv")                                                             \
    X(DESTROY_DSV, "kiln_destroy_dsv")                                                             \
    X(DESTROY_SRV, "kiln_destroy_srv")                                                             \
    X(CLEAR_RTV, "kiln_clear_rtv")                                                                 \
    X(CLEAR_DSV, "kiln_clear_dsv")                                                                 \
    X(UPDATE_SUBRESOURCE, "kiln_update_subresource")                                               \
    X(COPY_RESOURCE, "kiln_copy_resource")                                                         \
    X(COPY_SUBRESOURCE_REGION, "kiln_copy_subresource_region")                                     \
    X(MAP, "kiln_map")                                                                             \
    X(UNMAP, "kiln_unmap")                                                                         \
    X(FLUSH, "kiln_flush")                                                                         \
    X(FINISH, "kiln_finish")                                                                       \
    X(CONTEXT_CREATE, "kiln_context_create")                                                       \
    X(CONTEXT_DESTROY, "kiln_context_destroy")                                                     \
    X(CREATE_TIMELINE, "kiln_create_timeline")                                                     \
    X(DESTROY_TIMELINE, "kiln_destroy_timeline")                                                   \
    X(TIMELINE_GET_VALUE, "kiln_timeline_get_value")                                               \
    X(TIMELINE_SIGNAL, "kiln_timeline_signal")                                                     \
    X(CREATE_FENCE, "kiln_create_fence")                                                           \
    X(FENCE_MERGE, "kiln_fence_merge")                                                             \
    X(DESTROY_FENCE, "kiln_destroy_fence")                                                         \
    X(FENCE_POLL, "kiln_fence_poll")                                                               \
    X(FENCE_WAIT, "kiln_fence_wait")                                                               \
    X(FENCE_WAIT_ASYNC, "kiln_fence_wait_async")                                                   \
    X(CONTEXT_SIGNAL, "kiln_context_signal")                                                       \
    X(CONTEXT_WAIT, "kiln_context_wait")                                                           \
    X(CONTEXT_INSERT_FENCE, "kiln_context_insert_fence")                                           \
    X(CONTEXT_SYNC_TOKEN, "kiln_context_sync_token")                                               \
    X(CONTEXT_WAIT_SYNC_TOKEN, "kiln_context_wait_sync_token")                                     \
    X(WAIT_SYNC_TOKEN, "kiln_wait_sync_token")                                                     \
    X(CREATE_QUERY, "kiln_create_query")                                                           \
    X(DESTROY_QUERY, "kiln_destroy_query")                                                         \
    X(QUERY_BEGIN, "kiln_query_begin")                                                             \
    X(QUERY_END, "kiln_query_end")                                                                 \
    X(QUERY_GET_DATA, "kiln_query_get_data")                                                       \
    X(CREATE_VERTEX_SHADER, "kiln_create_vertex_shader")                                           \
    X(CREATE_PIXEL_SHADER, "kiln_create_pixel_shader")                                             \
    X(DESTROY_VERTEX_SHADER, "kiln_destroy_vertex_shader")                                         \
    X(DESTROY_PIXEL_SHADER, "kiln_destroy_pixel_shader")                                           \
    X(CREATE_INPUT_LAYOUT, "kiln_create_input_layout")                                             \
    X(DESTROY_INPUT_LAYOUT, "kiln_destroy_input_layout")                                           \
    X(CREATE_RASTERIZER_STATE, "kiln_create_rasterizer_state")                                     \
    X(CREATE_DEPTH_STENCIL_STATE, "kiln_create_depth_stencil_state")                               \
    X(CREATE_BLEND_STATE, "kiln_create_blend_state")                                               \
    X(CREATE_SAMPLER, "kiln_create_sampler")                                                       \
    X(DESTROY_RASTERIZER_STATE, "kiln_destroy_rasterizer_state")                                   \
    X(DESTROY_DEPTH_STENCIL_STATE, "kiln_destroy_depth_stencil_state")                             \
    X(DESTROY_BLEND_STATE, "kiln_destroy_blend_state")                                             \
    X(DESTROY_SAMPLER, "kiln_destroy_sampler")                                                     \
    X(IA_SET_INPUT_LAYOUT, "kiln_ia_set_input_layout")                                             \
    X(IA_SET_VERTEX_BUFFERS, "kiln_ia_set_vertex_buffers")                                         \
    X(IA_SET_INDEX_BUFFER, "kiln_ia_set_index_buffer")                                             \
    X(IA_SET_TOPOLOGY, "kiln_ia_set_topology")                                                     \
    X(VS_SET_SHADER, "kiln_vs_set_shader")                                                         \
    X(VS_SET_CONSTANT_BUFFERS, "kiln_vs_set_constant_buffers")                                     \
    X(PS_SET_SHADER, "kiln_ps_set_shader")                                                         \
    X(PS_SET_CONSTANT_BUFFERS, "kiln_ps_set_constant_buffers")                                     \
    X(PS_SET_SHADER_RESOURCES, "kiln_ps_set_shader_resources")                                     \
    X(PS_SET_SAMPLERS, "kiln_ps_set_samplers")                                                     \
    X(RS_SET_STATE, "kiln_rs_set_state")                                                           \
    X(RS_SET_VIEWPORT, "kiln_rs_set_viewport")                                                     \
    X(RS_SET_SCISSOR_RECT, "kiln_rs_set_scissor_rect")                                             \
    X(OM_SET_RENDER_TARGETS, "kiln_om_set_render_targets")                                         \
    X(OM_SET_BLEND_STATE, "kiln_om_set_blend_state")                                               \
    X(OM_SET_DEPTH_STENCIL_STATE, "kiln_om_set_depth_stencil_state")                               \
    X(DRAW, "kiln_draw")                                                                           \
    X(DRAW_INDEXED, "kiln_draw_indexed")                                                           \
    X(DRAW_INSTANCED, "kiln_draw_instanced")                                                       \
    X(DRAW_INDEXED_INSTANCED, "kiln_draw_indexed_instanced")                                       \
    X(GENERATE_MIPS, "kiln_generate_mips")                                                         \
    X(SWAPCHAIN_CREATE, "kiln_swapchain_create")                                                   \
    X(SWAPCHAIN_DESTROY, "kiln_swapchain_destroy")                                                 \
    X(SWAPCHAIN_GET_BACK_BUFFER, "kiln_swapchain_get_back_buffer")                                 \
    X(SWAPCHAIN_PRESENT, "kiln_swapchain_present")                                                 \
    X(SWAPCHAIN_RESIZE, "kiln_swapchain_resize")                                                   \
    X(SWAPCHAIN_GET_STATS, "kiln_swapchain_get_stats")                                             \
    X(SWAPCHAIN_WAIT_IDLE, "kiln_swapchain_wait_idle")                                             \
    X(SET_PREDICATION, "kiln_set_predication") /* 1.1 */                                      \
    X(CREATE_GEOMETRY_SHADER, "kiln_create_geometry_shader") /* 1.2 */                         \
    X(DESTROY_GEOMETRY_SHADER, "kiln_destroy_geometry_shader") /* 1.2 */                       \
    X(GS_SET_SHADER, "kiln_gs_set_shader") /* 1.2 */                                           \
    X(CREATE_GEOMETRY_SHADER_SO, "kiln_create_geometry_shader_with_so") /* 1.3 */              \
    X(SO_SET_TARGETS, "kiln_so_set_targets") /* 1.3 */                                         \
    X(DRAW_AUTO, "kiln_draw_auto") /* 1.3 */                                                   \
    X(CREATE_SAMPLER_CMP, "kiln_create_sampler") /* 1.3: a comparison sampler */          \
    X(CREATE_BLEND_STATE_8, "kiln_create_blend_state") /* 1.3: targets 4..7 set */ \
    X(CREATE_TEXTURE1D, "kiln_create_texture1d") /* 1.4: 102 */ \
    X(CREATE_TEXTURE3D, "kiln_create_texture3d") /* 1.4 */ \
    X(CREATE_TEXTURE_CUBE, "kiln_create_texture_cube") /* 1.4 */ \
    X(CREATE_SRV_DIM, "kiln_create_srv") /* 1.4: a view dimension */ \
    X(CREATE_SAMPLER_W, "kiln_create_sampler") /* 1.4: address_w set */ \
    X(TEXTURE3D_GET_DESC, "kiln_texture3d_get_desc") /* 1.4 */ \
    X(UPDATE_SUBRESOURCE_3D, "kiln_update_subresource") /* 1.4: a box of several depth slices */ \
    X(CREATE_TEXTURE2D_MS, "kiln_create_texture2d") /* 1.4: sample_count > 1 */ \
    X(RESOLVE_SUBRESOURCE, "kiln_resolve_subresource") /* 1.4 */ \
    X(CREATE_BLEND_STATE_A2C, "kiln_create_blend_state") /* 1.4: alpha_to_coverage set */ \
    X(CREATE_SAMPLER_EXT, "kiln_create_sampler") /* 1.4: max_anisotropy set */ \
    X(VS_SET_SHADER_RESOURCES, "kiln_vs_set_shader_resources") /* 1.4 */ \
    X(VS_SET_SAMPLERS, "kiln_vs_set_samplers") /* 1.4 */ \
    X(GS_SET_SHADER_RESOURCES, "kiln_gs_set_shader_resources") /* 1.4 */ \
    X(GS_SET_SAMPLERS, "kiln_gs_set_samplers") /* 1.4 */ \
    X(CREATE_BUFFER_SRV, "kiln_create_buffer_srv") /* 1.4: 117 */

typedef enum kcap_op {
    KCAP_OP_NONE = 0, /* never in a file */
#define KCAP_X_(name, text) KCAP_OP_##name,
    KCAP_OPS(KCAP_X_)
#undef KCAP_X_
        KCAP_OP_COUNT
} kcap_op;

/* Whether `op` is a record this kiln knows. */
static inline bool kcap_op_known(uint64_t op)
{
    return op != 0 && op < KCAP_OP_COUNT;
}

/* "kiln_map", ...; "unknown" out of range. */
const char *kcap_op_name(uint32_t op);

/* ---- a decoded (or to-be-encoded) call ---- */

/* Bytes inside the record (decoded) or the caller's (encoded). */
typedef struct kcap_bytes {
    const uint8_t *data;
    uint64_t size;
} kcap_bytes;

/* `rows` rows of `row_bytes`, `pitch` apart in `data` (decoded: tight,
 * pitch == row_bytes). The file holds them tight. */
typedef struct kcap_rows {
    uint32_t row_bytes, rows;
    const uint8_t *data;
    size_t pitch;
} kcap_rows;

/* What an Unmap records of the bytes the CPU may have written. */
typedef enum kcap_unmap_kind {
    KCAP_UNMAP_NONE = 0,  /* a READ map: nothing */
    KCAP_UNMAP_FULL = 1,  /* every row of the subresource (STAGING) */
    KCAP_UNMAP_RANGES = 2 /* the byte ranges that differ from what the
                             subresource held before (DYNAMIC: zeros after
                             WRITE_DISCARD, else the previous contents) */
} kcap_unmap_kind;

/* Changed ranges of a subresource's tight bytes (rows of row_bytes, one
 * after the other). Encoding: `count` pairs (offset, length) in `list`,
 * bytes at base + offset. Decoded: `count` and `encoded`, walked with
 * kcap_range_next (the decoder has checked every range); a decoded call
 * (list NULL) encodes `encoded` as it is. */
typedef struct kcap_ranges {
    uint32_t count;
    uint64_t tight_size;  /* row_bytes * rows of the subresource */
    const uint64_t *list; /* encoding */
    const uint8_t *base;  /* encoding */
    kcap_bytes encoded;   /* decoded */
} kcap_ranges;

typedef struct kcap_range_iter {
    const uint8_t *p, *end;
    uint64_t next_offset;
} kcap_range_iter;

/* Next range of a decoded kcap_ranges: offset, length and bytes. */
void kcap_range_begin(const kcap_ranges *r, kcap_range_iter *it);
bool kcap_range_next(kcap_range_iter *it, uint64_t *offset, uint64_t *size, const uint8_t **bytes);

/*
 * One call. `ctx` is the context id (1 is the immediate context; context
 * calls), `swapchain` the swapchain id (swapchain calls), `out` what the
 * call returned (handle ids as the live device gave them, or context and
 * swapchain ids). Handle arguments are the live device's ids.
 */
typedef struct kcap_call {
    kcap_op op;
    uint32_t ctx, swapchain;
    uint32_t out[2];
    union {
        struct {
            uint32_t backend, exec_mode, num_threads, ring_capacity, transfer_size;
        } device;
        struct { /* CONTEXT_STATE: a context's object-free state at begin */
            uint32_t topology, viewport_set;
            kiln_viewport viewport;
            kiln_rect scissor;
            float blend_factor[4];
            uint32_t stencil_ref, index_format, index_offset;
            uint32_t vb_stride[KILN_MAX_VERTEX_BUFFERS], vb_offset[KILN_MAX_VERTEX_BUFFERS];
        } state;
        struct {
            uint32_t op;
            int32_t result;
        } failed;
        struct {
            kiln_buffer_desc desc;
            uint32_t has_init;
            kcap_bytes init; /* desc.size bytes */
        } buffer;
        struct {
            kiln_texture2d_desc desc;
            uint32_t has_init;
            const kiln_subresource_data *src; /* encoding: the caller's, or
                                                 NULL to encode `init` */
            kcap_bytes init;                  /* decoded: every subresource, tight, in order */
            uint32_t dim;   /* KRES_DIM_*: 0 2D (CREATE_TEXTURE2D, _CUBE), 1 1D, 3 3D */
            uint32_t depth; /* 3D: the depth (desc.array_size is then 1); else 1 */
        } texture;
        struct {
            uint32_t id; /* one handle: destroys, getters, binds, polls */
        } obj;
        struct {
            uint32_t texture, has_desc;
            kiln_rtv_desc rtv; /* RTV and DSV (same fields) */
            kiln_srv_desc srv;
            kiln_buffer_srv_desc buf; /* CREATE_BUFFER_SRV (`texture` is the buffer) */
        } view;
        struct {
            uint32_t view;
            float color[4];
        } clear_rtv;
        struct {
            uint32_t view, flags;
            float depth;
            uint32_t stencil;
        } clear_dsv;
        struct {
            uint32_t dst, sub, has_box;
            kiln_box box;
            kcap_rows data; /* UPDATE_SUBRESOURCE_3D: every depth slice's rows, in order */
        } update;
        struct {
            uint32_t dst, src;
        } copy;
        struct {
            uint32_t dst, dst_sub, src, src_sub;
            kiln_format format;
        } resolve;
        struct {
            uint32_t dst, dst_sub, x, y, z, src, src_sub, has_box;
            kiln_box box;
        } region;
        struct {
            uint32_t res, sub, type, flags;
        } map;
        struct {
            uint32_t res, sub, kind; /* kcap_unmap_kind */
            kcap_rows full;
            kcap_ranges ranges;
        } unmap;
        struct {
            uint32_t timeline;
            uint64_t value; /* create: initial; signal; fence: the point */
        } tl;
        struct {
            uint32_t a, b;
        } merge;
        struct {
            uint32_t fence;
            uint64_t timeout;
        } wait;
        struct { /* sync tokens: returned (CONTEXT_SYNC_TOKEN) or waited on */
            uint32_t timeline;
            uint64_t value, timeout;
        } token;
        struct {
            uint32_t type;
        } query;
        struct {
            uint32_t query, has_data, flags;
        } get_data;
        struct {
            uint32_t query, value; /* value 0 or 1 */
        } pred;
        struct {
            char name[KCAP_NAME_MAX + 1]; /* "" when the desc had none */
            uint32_t num_inputs, num_varyings, num_outputs, flags, has_glsl;
            uint32_t gs_input, gs_output, max_vertices; /* geometry shaders */
            /* CREATE_GEOMETRY_SHADER_SO: has_gs 0 is a pass-through (no
             * name, no geometry shader fields); the declaration. */
            uint32_t has_gs, so_count, so_stride;
            kiln_so_element so[KILN_SO_MAX_ELEMENTS];
        } shader;
        struct {
            uint32_t vs;
            kiln_input_layout_desc desc;
        } layout;
        kiln_rasterizer_desc rasterizer;
        kiln_depth_stencil_desc depth_stencil;
        kiln_blend_desc blend;
        kiln_sampler_desc sampler;
        struct { /* vertex buffers, constant buffers, views, samplers */
            uint32_t start, count;
            uint32_t ids[KILN_MAX_SHADER_RESOURCES]; /* the largest stage range */
            uint32_t strides[KILN_MAX_VERTEX_BUFFERS], offsets[KILN_MAX_VERTEX_BUFFERS];
            uint32_t has_offsets; /* SO_SET_TARGETS: offsets given */
        } slots;
        struct {
            uint32_t buffer, format, offset;
        } ib;
        struct {
            uint32_t topology;
        } topology;
        kiln_viewport viewport;
        kiln_rect scissor;
        struct {
            uint32_t count, rtv[KILN_MAX_RENDER_TARGETS], dsv;
        } rts;
        struct {
            uint32_t state, has_factor;
            float factor[4];
        } blend_set;
        struct {
            uint32_t state, ref;
        } dss_set;
        struct {
            uint32_t count, instances, start, start_instance;
            int32_t base_vertex;
        } draw;
        struct {
            uint32_t width, height, format, buffer_count, mode, winsys;
        } swapchain;
    } u;
} kcap_call;

/* ---- encoding and decoding (format.c) ---- */

/* Where a decode failed: the offset of the record it could not read (of the
 * file, for the header), and why. */
typedef struct kcap_error {
    uint64_t offset;
    char message[200];
} kcap_error;

typedef struct kcap_header {
    uint32_t major, minor, size;
} kcap_header;

/* Decoder flags. TOLERANT (for fuzzing): values beyond an enum or a limit
 * are reduced into range and unknown ops mapped onto known ones, instead of
 * refusing the record. Lengths are never guessed: a record that does not
 * fit its bytes is refused in every mode. */
#define KCAP_DECODE_TOLERANT 1u

/* Checks the file header; *out gets its fields. Returns false (with err)
 * for a wrong magic, another major version, a newer minor, or a short file.
 * Records start at out->size. */
bool kcap_decode_header(const uint8_t *bytes, size_t len, kcap_header *out, kcap_error *err);

/* Decodes the record at `offset` (< len) into *out and sets *next to the
 * offset after it. Returns false with err (err->offset = `offset`) when the
 * record is damaged: an unknown op, a length past the end, a field that
 * does not fit, a value out of range, bytes left over. */
bool kcap_decode(const uint8_t *bytes, size_t len, size_t offset, unsigned flags, kcap_call *out,
                 size_t *next, kcap_error *err);

/* The header for a new file (KCAP_HEADER_SIZE bytes). */
void kcap_encode_header(uint8_t out[KCAP_HEADER_SIZE]);

/* Where an encoder writes: put(user, bytes, n) in order. */
typedef void (*kcap_put_fn)(void *user, const void *bytes, size_t n);

/* Bytes the record of `c` takes (framing included). */
uint64_t kcap_encoded_size(const kcap_call *c);
/* Writes the record of `c` through put. `c` holds valid values (what a
 * successful call was given); nothing is checked here. */
void kcap_encode(const kcap_call *c, kcap_put_fn put, void *user);

/* ---- the writer (record.c, hooks.c) ---- */

struct kcap_writer;
struct kcap_registry;

/* A thread whose count is above 0 records nothing (kiln's own calls). */
extern _Thread_local int kcap_suppressed;
static inline void kcap_suppress(int delta) { kcap_suppressed += delta; }

/* Device lifetime: KILN_CAPTURE at creation; end and free at destroy. */
void kcap_device_created(kiln_device *dev);
void kcap_device_destroyed(kiln_device *dev);

/* The shader registry (registry.c). A name for a desc's (fn, user), or
 * NULL; and a desc for a name (built-in effects included), false if none. */
const char *kcap_registry_vs_name(kiln_device *dev, const kiln_vertex_shader_desc *d);
const char *kcap_registry_ps_name(kiln_device *dev, const kiln_pixel_shader_desc *d);
bool kcap_registry_vs(kiln_device *dev, const char *name, kiln_vertex_shader_desc *out);
bool kcap_registry_ps(kiln_device *dev, const char *name, kiln_pixel_shader_desc *out);
const char *kcap_registry_gs_name(kiln_device *dev, const kiln_geometry_shader_desc *d);
bool kcap_registry_gs(kiln_device *dev, const char *name, kiln_geometry_shader_desc *out);
void kcap_registry_free(kiln_device *dev);

/* Writer entry points for hooks.c. kcap_lock returns the running writer
 * with its mutex held, or NULL (no capture, or this thread is suppressed);
 * kcap_emit writes a record (or notes a write failure); kcap_unlock. */
struct kcap_writer *kcap_lock(kiln_device *dev);
void kcap_emit(struct kcap_writer *w, const kcap_call *c);
void kcap_unlock(struct kcap_writer *w);
/* Client waits may return after their device was destroyed: they pin the
 * running writer (NULL if none) before waiting, so it outlives the device,
 * and record through kcap_lock_pinned (NULL: the capture ended meanwhile),
 * then kcap_unpin. */
struct kcap_writer *kcap_pin(kiln_device *dev);
struct kcap_writer *kcap_lock_pinned(struct kcap_writer *w);
void kcap_unpin(struct kcap_writer *w);
/* Ids the writer gives contexts (1: immediate) and swapchains; 0 if the
 * object is unknown (created while no capture ran, which begin forbids). */
uint32_t kcap_context_id(struct kcap_writer *w, kiln_context *ctx);
uint32_t kcap_context_add(struct kcap_writer *w, kiln_context *ctx);
void kcap_context_remove(struct kcap_writer *w, kiln_context *ctx);
uint32_t kcap_swapchain_id(struct kcap_writer *w, kiln_swapchain *sc);
uint32_t kcap_swapchain_add(struct kcap_writer *w, kiln_swapchain *sc);
void kcap_swapchain_remove(struct kcap_writer *w, kiln_swapchain *sc);
/* Open maps: kcap_map_add remembers a successful Map (row_bytes x rows:
 * the subresource's tight size); kcap_map_emit_unmap writes the Unmap
 * record of it (with what the CPU wrote), by context `ctx`, and forgets it
 * (false: no such map); kcap_map_emit_all writes the Unmap records of
 * every map of resource `res` (destroyed), or, with res 0, of every
 * resource whose grant context `ctx` holds (destroyed): what kiln unmaps
 * then. */
void kcap_map_add(struct kcap_writer *w, uint32_t ctx, uint32_t res, uint32_t sub,
                  kiln_map_type type, const kiln_mapped_subresource *m, uint32_t row_bytes,
                  uint32_t rows, bool dynamic);
bool kcap_map_emit_unmap(struct kcap_writer *w, uint32_t ctx, uint32_t res, uint32_t sub);
void kcap_map_emit_all(struct kcap_writer *w, uint32_t res, uint32_t ctx);
/* DYNAMIC resources' contents, for the ranges of later maps: rows with
 * data NULL mean zeros. */
void kcap_shadow_add(struct kcap_writer *w, uint32_t res, const kcap_rows *init);
void kcap_shadow_remove(struct kcap_writer *w, uint32_t res);
/* Logs through the device (the writer's warnings). */
void kcap_warn(struct kcap_writer *w, kiln_log_id id, const char *api, const char *detail);

/* ---- the hooks (hooks.c): one per public call, after it ran ----
 *
 * Each takes the call's arguments, what it returned (out handles) and its
 * result, and records nothing when no capture runs. Calls that signal
 * (timeline_signal, context_signal, context_insert_fence,
 * context_sync_token, query_end) and kiln_unmap run with the writer locked:
 * the caller takes w = kcap_lock(dev) before the call and passes it to the
 * hook, which unlocks it. So a signal's record precedes any wait it
 * releases, and an Unmap's bytes are read before they are unmapped.
 */

/* kcap_lock for a context call that signals: first queues the context's
 * gathered draws (a wait for ring space then happens outside the lock). */
struct kcap_writer *kcap_lock_context(kiln_context *ctx, const char *api);

void kcap_frame(kiln_device *dev);
void kcap_device_get_stats(kiln_device *dev, kiln_result r);
void kcap_create_buffer(kiln_device *dev, const kiln_buffer_desc *d,
                        const kiln_subresource_data *init, kiln_buffer out, kiln_result r);
void kcap_create_texture2d(kiln_device *dev, const kiln_texture2d_desc *d,
                           const kiln_subresource_data *init, kiln_texture out, kiln_result r);
void kcap_create_texture1d(kiln_device *dev, const kiln_texture1d_desc *d,
                           const kiln_subresource_data *init, kiln_texture out, kiln_result r);
void kcap_create_texture_cube(kiln_device *dev, const kiln_texture_cube_desc *d,
                              const kiln_subresource_data *init, kiln_texture out, kiln_result r);
void kcap_create_texture3d(kiln_device *dev, const kiln_texture3d_desc *d,
                           const kiln_subresource_data *init, kiln_texture out, kiln_result r);
/* Calls of one handle (op says which): destroys, getters, polls. */
void kcap_object(kiln_device *dev, kcap_op op, uint32_t id, kiln_result r);
/* Before destroying a buffer or texture (op DESTROY_BUFFER or
 * DESTROY_TEXTURE): the Unmap records of its maps (the destroy unmaps). */
void kcap_destroy_resource_pre(kiln_device *dev, kcap_op op, uint32_t id);
/* CREATE_RTV / DSV / SRV; desc is the op's kiln_*_desc or NULL. */
void kcap_create_view(kiln_device *dev, kcap_op op, kiln_texture t, const void *desc, uint32_t out,
                      kiln_result r);
void kcap_clear_rtv(kiln_context *ctx, kiln_rtv v, const float color[4], kiln_result r);
void kcap_clear_dsv(kiln_context *ctx, kiln_dsv v, uint32_t flags, float depth, uint8_t stencil,
                    kiln_result r);
void kcap_update_subresource(kiln_context *ctx, kiln_resource dst, uint32_t sub,
                             const kiln_box *box, const void *data, uint32_t row_pitch,
                             uint32_t depth_pitch, kiln_result r);
void kcap_copy_resource(kiln_context *ctx, kiln_resource dst, kiln_resource src, kiln_result r);
void kcap_resolve_subresource(kiln_context *ctx, kiln_resource dst, uint32_t dst_sub, kiln_resource src,
                              uint32_t src_sub, kiln_format format, kiln_result r);
void kcap_copy_subresource_region(kiln_context *ctx, kiln_resource dst, uint32_t dst_sub,
                                  uint32_t x, uint32_t y, uint32_t z, kiln_resource src,
                                  uint32_t src_sub, const kiln_box *box, kiln_result r);
void kcap_map(kiln_context *ctx, kiln_resource res, uint32_t sub, kiln_map_type type,
              uint32_t flags, const kiln_mapped_subresource *m, kiln_result r);
/* Unmap: pre (before the call) writes the record of the map, with what
 * the CPU wrote, and returns true; false when the capture saw no such map
 * (the call will fail); post writes the record in that case and unlocks. */
bool kcap_unmap_pre(struct kcap_writer *w, kiln_context *ctx, kiln_resource res, uint32_t sub);
void kcap_unmap_post(struct kcap_writer *w, kiln_context *ctx, kiln_resource res, uint32_t sub,
                     bool recorded, kiln_result r);
/* Context calls of no argument (FLUSH, FINISH) or one handle (binds,
 * CONTEXT_WAIT, QUERY_BEGIN, GENERATE_MIPS). */
void kcap_context_call(kiln_context *ctx, kcap_op op, kiln_result r);
void kcap_context_object(kiln_context *ctx, kcap_op op, uint32_t id, kiln_result r);
void kcap_context_create(kiln_device *dev, kiln_context *created, kiln_result r);
/* Context destroy: pre returns its id (and writes the Unmap records of
 * what it keeps mapped); the hook gets the id and the freed pointer. */
uint32_t kcap_context_destroy_pre(kiln_context *ctx);
void kcap_context_destroy(kiln_device *dev, const void *ctx, uint32_t id, kiln_result r);
void kcap_create_timeline(kiln_device *dev, uint64_t initial, kiln_timeline out, kiln_result r);
void kcap_timeline_signal(struct kcap_writer *w, kiln_timeline t, uint64_t value, kiln_result r);
void kcap_create_fence(kiln_device *dev, kiln_timeline t, uint64_t value, kiln_fence out,
                       kiln_result r);
void kcap_fence_merge(kiln_device *dev, kiln_fence a, kiln_fence b, kiln_fence out, kiln_result r);
/* Client waits: w from kcap_pin (unpinned here). */
void kcap_fence_wait(struct kcap_writer *w, kiln_fence f, uint64_t timeout, kiln_result r);
void kcap_wait_sync_token(struct kcap_writer *w, kiln_sync_token token, uint64_t timeout,
                          kiln_result r);
void kcap_context_signal(struct kcap_writer *w, kiln_context *ctx, kiln_timeline t, uint64_t value,
                         kiln_result r);
void kcap_context_insert_fence(struct kcap_writer *w, kiln_context *ctx, kiln_fence out,
                               kiln_result r);
void kcap_context_sync_token(struct kcap_writer *w, kiln_context *ctx, const kiln_sync_token *out,
                             kiln_result r);
void kcap_query_end(struct kcap_writer *w, kiln_context *ctx, kiln_query q, kiln_result r);
void kcap_set_predication(kiln_context *ctx, kiln_query q, int value, kiln_result r);
void kcap_context_wait_sync_token(kiln_context *ctx, kiln_sync_token token, kiln_result r);
void kcap_create_query(kiln_device *dev, kiln_query_type type, kiln_query out, kiln_result r);
void kcap_query_get_data(kiln_context *ctx, kiln_query q, const void *data, uint32_t flags,
                         kiln_result r);
void kcap_create_vertex_shader(kiln_device *dev, const kiln_vertex_shader_desc *d,
                               kiln_vertex_shader out, kiln_result r);
void kcap_create_pixel_shader(kiln_device *dev, const kiln_pixel_shader_desc *d,
                              kiln_pixel_shader out, kiln_result r);
void kcap_create_geometry_shader(kiln_device *dev, const kiln_geometry_shader_desc *d,
                                 kiln_geometry_shader out, kiln_result r);
void kcap_create_geometry_shader_so(kiln_device *dev, const kiln_geometry_shader_desc *gs,
                                    const kiln_so_desc *so, kiln_geometry_shader out,
                                    kiln_result r);
void kcap_so_set_targets(kiln_context *ctx, uint32_t count, const kiln_buffer *buffers,
                         const uint32_t *offsets, kiln_result r);
void kcap_create_input_layout(kiln_device *dev, const kiln_input_layout_desc *d,
                              kiln_vertex_shader vs, kiln_input_layout out, kiln_result r);
/* State objects and samplers: desc is the op's kiln_*_desc. */
void kcap_create_state(kiln_device *dev, kcap_op op, const void *desc, uint32_t out, kiln_result r);
/* Slot ranges: handles is an array of `count` handles (structs of one
 * uint32_t); strides and offsets for vertex buffers, else NULL. */
void kcap_set_slots(kiln_context *ctx, kcap_op op, uint32_t start, uint32_t count,
                    const void *handles, const uint32_t *strides, const uint32_t *offsets,
                    kiln_result r);
void kcap_ia_set_index_buffer(kiln_context *ctx, kiln_buffer b, kiln_index_format format,
                              uint32_t offset, kiln_result r);
void kcap_ia_set_topology(kiln_context *ctx, kiln_topology t, kiln_result r);
void kcap_rs_set_viewport(kiln_context *ctx, const kiln_viewport *vp, kiln_result r);
void kcap_rs_set_scissor_rect(kiln_context *ctx, const kiln_rect *rect, kiln_result r);
void kcap_om_set_render_targets(kiln_context *ctx, uint32_t count, const kiln_rtv *views,
                                kiln_dsv ds, kiln_result r);
void kcap_om_set_blend_state(kiln_context *ctx, kiln_blend_state s, const float factor[4],
                             kiln_result r);
void kcap_om_set_depth_stencil_state(kiln_context *ctx, kiln_depth_stencil_state s, uint32_t ref,
                                     kiln_result r);
void kcap_draw(kiln_context *ctx, kcap_op op, uint32_t count, uint32_t instances, uint32_t start,
               int32_t base_vertex, uint32_t start_instance, kiln_result r);
void kcap_swapchain_create(kiln_context *ctx, const kiln_swapchain_desc *d, kiln_swapchain *out,
                           kiln_result r);
/* DESTROY, PRESENT, GET_STATS, WAIT_IDLE, RESIZE (width, height). */
void kcap_swapchain_call(kiln_device *dev, kiln_swapchain *sc, kcap_op op, uint32_t width,
                         uint32_t height, kiln_result r);
void kcap_swapchain_get_back_buffer(kiln_device *dev, kiln_swapchain *sc, kiln_texture t,
                                    kiln_rtv v, kiln_result r);

/* ---- replay (replay.c) ---- */

typedef enum kcap_image_kind {
    KCAP_IMAGE_PRESENT = 0, /* a presented frame (`frame`) */
    KCAP_IMAGE_TARGET = 1   /* the final contents of a render target: mip 0
                               of array slice `slice` of the `target`-th
                               texture created with the render-target bind */
} kcap_image_kind;

typedef struct kcap_image {
    kcap_image_kind kind;
    uint64_t frame;         /* PRESENT: frame number, 0-based */
    uint32_t target, slice; /* TARGET */
    uint32_t width, height, row_pitch;
    kiln_format format;
    const void *pixels; /* valid during the callback only */
} kcap_image;

typedef struct kcap_frame_stats {
    uint64_t frame; /* 0-based */
    uint64_t calls, draws, failed_live, bytes_uploaded;
    double wall_ms; /* from the end of the previous frame */
    bool presented; /* ended by a present (else a frame mark, or
                       the end of the capture) */
} kcap_frame_stats;

typedef struct kcap_replay_desc {
    kiln_backend backend;
    kiln_exec_mode exec_mode;
    uint32_t num_threads;
    /* frame_range: only frames first..last (0-based) are reported and
     * their images given; the replay stops after last_frame. */
    bool frame_range;
    uint64_t first_frame, last_frame;
    /* Images (presented frames, else render targets). Called on the
     * replaying thread or a swapchain's display thread, one at a time. */
    void (*image_fn)(const kcap_image *img, void *user);
    void (*frame_fn)(const kcap_frame_stats *s, void *user);
    /* Called once with the new replay device, before any record runs: the
     * place to register shader names beyond the built-in effects. */
    void (*setup_fn)(kiln_device *dev, void *user);
    void *user;
    kiln_log_fn log_fn; /* the replay device's logger (NULL: stderr) */
    void *log_user;
    uint64_t max_bytes;       /* refuse captures whose live resources would
                                 exceed this (0: 8 GiB) */
    uint64_t wait_timeout_ns; /* bound on each wait a replay makes (0: 60 s) */
    unsigned decode_flags;    /* KCAP_DECODE_* */
    /* Finish every context at each frame's end, so a frame's wall time
     * includes its rendering (else: the time to issue its calls; draws
     * are gathered and rendered when work is handed over). */
    bool finish_frames;
} kcap_replay_desc;

typedef struct kcap_replay_report {
    kiln_result result; /* KILN_OK, or why the replay stopped */
    kcap_error error;   /* offset and text when result != OK */
    uint64_t records, calls, frames, draws, bytes_uploaded, failed_live;
    uint64_t mismatches; /* calls whose result differs from the live one */
    char first_mismatch[240];
    double wall_ms; /* the whole replay, device teardown included */
} kcap_replay_report;

/* Validates the whole capture (every record decodes, every handle was
 * created earlier with the right type, limits), then runs it. Returns
 * report->result. Never crashes on a damaged capture: it refuses it with
 * the offset of the first bad record. */
kiln_result kcap_replay(const uint8_t *bytes, size_t len, const kcap_replay_desc *desc,
                        kcap_replay_report *report);

/* Reads a whole file into memory (free with free()); NULL with err. */
uint8_t *kcap_read_file(const char *path, size_t *len, kcap_error *err);

#endif
