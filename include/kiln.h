/*
 * kiln.h - a CPU renderer behind a Direct3D-10-style device/context API.
 *
 * This header is the manual. Read "Step by step" first, then the comment on
 * each declaration.
 *
 * ---------------------------------------------------------------------------
 * Step by step
 * ---------------------------------------------------------------------------
 *
 *  1. Create a device from a zero-initialized desc (every field has a default):
 *
 *         kiln_device *dev;
 *         kiln_result r = kiln_device_create(&(kiln_device_desc){0}, &dev);
 *
 *  2. Create resources: buffers and 2D textures, with a D3D10 usage
 *     (DEFAULT, IMMUTABLE, DYNAMIC, STAGING) and bind flags. Create views to
 *     use a texture as a render target, depth-stencil or shader resource.
 *
 *  3. Record work on the device's immediate context. Clear, UpdateSubresource
 *     and Copy return at once: the command is queued and worker threads run
 *     it. Commands that touch no common resource run concurrently; the result
 *     is always what executing every call in order would give.
 *
 *  4. Read results back through a STAGING texture: copy into it, then Map it
 *     with KILN_MAP_READ. Map waits only for the queued commands that write
 *     that staging texture.
 *
 *  5. Destroy what you created, then the device. Destroying the device
 *     completes all queued work first.
 *
 * ---------------------------------------------------------------------------
 * Threads
 * ---------------------------------------------------------------------------
 *
 *  - Device functions (kiln_create_*, kiln_destroy_*, kiln_device_*) may be
 *    called from any thread at any time.
 *  - A context is used by one thread at a time (it is an ordered stream of
 *    commands). Different contexts may be used from different threads.
 *  - The log callback is called on the thread that made the failing call, or
 *    on a worker thread for failures found while executing. It must not call
 *    back into kiln.
 *
 * ---------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------------
 *
 *  Every call that can fail returns a kiln_result. A failing call does
 *  nothing (nothing is queued), zeroes its out-parameters, returns its code
 *  and makes exactly one call to the log callback (to kiln_log_stderr when
 *  the device or context argument itself is NULL, as there is no device to
 *  ask), whose message id (kiln_log_id) is stable across
 *  releases: test against ids, never against message text. The exceptions
 *  are answers rather than errors and are not logged: KILN_E_WAS_STILL_DRAWING,
 *  KILN_E_TIMEOUT, and the KILN_E_COMMAND_FAILED / KILN_E_DEVICE_LOST that a
 *  fence wait returns (the failure itself was logged once, when it happened).
 *
 *  A command that fails while executing (after its call returned) is
 *  reported once through the log callback (KILN_LOG_COMMAND_FAILED, with
 *  the command's sequence number in its context and the API call that
 *  queued it). The context's next completion point (signal, fence or sync
 *  token) enters the error state, and so does every fence that includes it;
 *  later, independent work still runs.
 */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(KILN_SHARED)
#  if defined(KILN_BUILDING)
#    define KILN_API __declspec(dllexport)
#  else
#    define KILN_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define KILN_API __attribute__((visibility("default")))
#else
#  define KILN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0

/* ---------------------------------------------------------------------------
 * Result codes
 * ------------------------------------------------------------------------- */

typedef enum kiln_result {
    KILN_OK = 0,
    KILN_E_INVALID_ARG = -1,        /* an argument breaks a documented rule */
    KILN_E_INVALID_HANDLE = -2,     /* handle is 0, stale, or of another type */
    KILN_E_INVALID_CALL = -3,       /* the call is wrong in the current state
                                       (e.g. Unmap of a resource not mapped) */
    KILN_E_OUT_OF_MEMORY = -4,      /* an allocation failed; nothing changed */
    KILN_E_UNSUPPORTED = -5,        /* valid D3D10, but kiln does not do it */
    KILN_E_WAS_STILL_DRAWING = -6,  /* Map with DO_NOT_WAIT would have waited */
    KILN_E_TIMEOUT = -7,            /* a wait with a timeout ran out */
    KILN_E_DEVICE_LOST = -8,        /* the device failed in a way it cannot
                                       isolate; only destroy is useful now */
    KILN_E_WOULD_DEADLOCK = -9,     /* the call would wait for something only
                                       the calling thread can do (typically an
                                       Unmap of a resource that blocks queued
                                       commands) */
    KILN_E_COMMAND_FAILED = -10     /* a fence covers work that failed while
                                       executing (reported when it failed) */
} kiln_result;

/* A short constant name for a result code, e.g. "KILN_E_INVALID_ARG". */
KILN_API const char *kiln_result_string(kiln_result r);

/* ---------------------------------------------------------------------------
 * Logging: one table of message ids
 * ------------------------------------------------------------------------- */

/* X(id, default text). Ids are stable; new ones are only appended. */
#define KILN_LOG_IDS(X)                                                       \
    X(NONE, "no message")                                                     \
    X(NULL_POINTER, "a required pointer argument is NULL")                    \
    X(DESC_INVALID_ENUM, "a desc field holds a value outside its enum")       \
    X(DEVICE_ALLOC_FAILED, "out of memory while creating the device")         \
    X(DEVICE_THREAD_FAILED, "could not start a worker thread")                \
    X(DEVICE_BAD_RING_SIZE, "command ring capacity or transfer ring size out of range") \
    X(BACKEND_UNSUPPORTED, "the requested backend is not built in")           \
    X(HANDLE_NULL, "handle is 0 (never created)")                             \
    X(HANDLE_STALE, "handle refers to a destroyed object")                    \
    X(HANDLE_WRONG_TYPE, "handle refers to an object of another type")        \
    X(HANDLE_TABLE_FULL, "too many live objects on this device")              \
    X(OUT_OF_MEMORY, "an allocation failed")                                  \
    X(BUFFER_SIZE_ZERO, "buffer size is zero")                                \
    X(BUFFER_TOO_LARGE, "buffer size exceeds the limit")                      \
    X(CONSTANT_BUFFER_SIZE, "constant buffer size must be a multiple of 16 and at most 65536") \
    X(CONSTANT_BUFFER_BIND, "a constant buffer cannot have other bind flags") \
    X(BIND_FLAGS_INVALID, "unknown bind flags for this resource type")        \
    X(TEXTURE_SIZE_INVALID, "texture width/height must be 1..8192")           \
    X(TEXTURE_MIPS_INVALID, "mip level count exceeds the full chain")         \
    X(TEXTURE_ARRAY_INVALID, "array size must be 1..512")                     \
    X(FORMAT_INVALID, "format is unknown or not allowed here")                \
    X(FORMAT_BIND_MISMATCH, "format cannot be bound this way (e.g. depth format as render target)") \
    X(USAGE_IMMUTABLE_NEEDS_DATA, "IMMUTABLE resources need initial data")    \
    X(USAGE_CPU_ACCESS, "CPU access flags not allowed with this usage")       \
    X(USAGE_BIND, "this usage cannot have these bind flags")                  \
    X(USAGE_DYNAMIC_TEXTURE, "DYNAMIC textures must have one mip level and array size 1") \
    X(INIT_DATA_INVALID, "initial data: NULL pointer or row pitch too small") \
    X(VIEW_RESOURCE_BIND, "the resource lacks the bind flag this view needs") \
    X(VIEW_FORMAT, "view format differs from the resource format")            \
    X(VIEW_SUBRESOURCE, "view mip/array range is outside the resource")       \
    X(VIEW_RESOURCE_DESTROYED, "the view's resource has been destroyed")      \
    X(SUBRESOURCE_OUT_OF_RANGE, "subresource index is out of range")          \
    X(BOX_INVALID, "box is inverted or outside the subresource")       \
    X(ROW_PITCH_INVALID, "row pitch is smaller than one row of the box")      \
    X(UPDATE_USAGE, "UpdateSubresource needs a DEFAULT resource")             \
    X(UPDATE_DEPTH, "UpdateSubresource cannot write a depth-stencil resource") \
    X(UPDATE_CONSTANT_PARTIAL, "a constant buffer is updated whole (box must be NULL)") \
    X(COPY_DST_USAGE, "copy destination must be DEFAULT or STAGING")          \
    X(COPY_SAME_RESOURCE, "CopyResource needs two different resources")       \
    X(COPY_MISMATCH, "copy source and destination differ in type, size, format or layout") \
    X(COPY_DEPTH_REGION, "depth-stencil resources are copied as whole subresources") \
    X(COPY_OVERLAP, "source and destination regions of one subresource overlap") \
    X(CLEAR_DEPTH_FLAGS, "clear flags must name depth and/or stencil")        \
    X(MAP_USAGE, "this usage cannot be mapped")                               \
    X(MAP_TYPE_USAGE, "map type not allowed for this usage or CPU access")    \
    X(MAP_NO_OVERWRITE_TEXTURE, "WRITE_NO_OVERWRITE is for buffers only")     \
    X(MAP_ALREADY_MAPPED, "subresource is already mapped")                    \
    X(MAP_ACCESS_CONFLICT, "another subresource is mapped with incompatible access") \
    X(MAP_FLAGS_INVALID, "unknown map flags")                                 \
    X(UNMAP_NOT_MAPPED, "subresource is not mapped")                          \
    X(WOULD_DEADLOCK, "waiting would deadlock: a resource mapped by this context blocks the queued work; Unmap it first") \
    X(DEVICE_LOST, "the device is lost")                                      \
    X(COMMAND_FAILED, "a queued command failed while executing")             \
    X(TEXTURE_TOO_LARGE, "texture storage (all subresources) exceeds 4 GiB")  \
    X(TIMELINE_NOT_MONOTONIC, "a timeline signal must exceed every value signaled or queued before") \
    X(CONTEXT_IMMEDIATE, "the immediate context belongs to the device and is not destroyed") \
    X(FENCE_EMPTY, "a fence needs at least one sync point")                   \
    X(QUERY_TYPE, "unknown query type, or the call does not apply to it")     \
    X(QUERY_NOT_ENDED, "the query has not been ended yet")                    \
    X(DATA_SIZE, "data size does not match what the query returns")

typedef enum kiln_log_id {
#define KILN_X_(id, text) KILN_LOG_##id,
    KILN_LOG_IDS(KILN_X_)
#undef KILN_X_
    KILN_LOG_ID_COUNT
} kiln_log_id;

typedef enum kiln_log_level {
    KILN_LOG_LEVEL_ERROR = 0,
    KILN_LOG_LEVEL_WARNING = 1,
    KILN_LOG_LEVEL_INFO = 2
} kiln_log_level;

/* The id's constant name without prefix, e.g. "HANDLE_STALE". */
KILN_API const char *kiln_log_id_string(kiln_log_id id);

/* Called once per failure. `message` is valid only during the call; it names
 * the API function and the failed rule. Must not call back into kiln. */
typedef void (*kiln_log_fn)(kiln_log_level level, kiln_log_id id, const char *message,
                            void *user);

/* A ready-made logger that prints "kiln: LEVEL ID: message" to stderr. */
KILN_API void kiln_log_stderr(kiln_log_level level, kiln_log_id id, const char *message,
                              void *user);

/* Allocation hook. Both NULL: malloc/free. `alloc` returns NULL on failure,
 * which kiln reports as KILN_E_OUT_OF_MEMORY (tests use this to inject
 * failures). Called from any kiln thread; must be thread-safe. Memory is
 * returned to `free` with the size it was allocated with. */
typedef struct kiln_allocator {
    void *(*alloc)(size_t size, void *user);
    void (*free)(void *ptr, size_t size, void *user);
    void *user;
} kiln_allocator;

/* ---------------------------------------------------------------------------
 * Device
 * ------------------------------------------------------------------------- */

typedef struct kiln_device kiln_device;
typedef struct kiln_context kiln_context;

typedef enum kiln_backend {
    KILN_BACKEND_DEFAULT = 0, /* soft */
    KILN_BACKEND_SOFT,        /* kiln's tile-parallel rasterizer */
    KILN_BACKEND_OSMESA       /* Mesa's off-screen GL (when built in) */
} kiln_backend;

typedef enum kiln_exec_mode {
    KILN_EXEC_DEFAULT = 0, /* ASYNC */
    KILN_EXEC_ASYNC,       /* commands run on worker threads */
    KILN_EXEC_SERIAL       /* no workers: the calling thread executes each
                              command inside the call that queues it (or, if
                              it waits for an Unmap, inside that Unmap).
                              The reference for tests. */
} kiln_exec_mode;

typedef struct kiln_device_desc {
    kiln_backend backend;
    /* Worker threads. 0: the KILN_NUM_THREADS environment variable if set
     * to 1..256, else the number of CPUs. Ignored in SERIAL mode. */
    uint32_t num_threads;
    /* Commands a context can have queued but not completed. 0: 1024.
     * Range 2..1048576. The producer blocks when it is full. */
    uint32_t command_ring_capacity;
    /* Bytes of the per-context transfer ring that holds upload data until
     * the executor has consumed it. 0: 4 MiB. Range 4096..1 GiB. */
    uint32_t transfer_ring_size;
    kiln_exec_mode exec_mode;
    /* NULL: errors and warnings go to kiln_log_stderr. */
    kiln_log_fn log_fn;
    void *log_user;
    kiln_allocator allocator;
} kiln_device_desc;

KILN_API kiln_result kiln_device_create(const kiln_device_desc *desc, kiln_device **out_device);

/* Completes every queued command, releases everything the device owns and
 * frees it. Handles of the device become meaningless. NULL is ignored. */
KILN_API void kiln_device_destroy(kiln_device *device);

/* The device's immediate context; owned by the device. */
KILN_API kiln_context *kiln_device_immediate_context(kiln_device *device);

/* Worker threads actually running (0 in SERIAL mode). */
KILN_API uint32_t kiln_device_num_threads(const kiln_device *device);

/* Counters since the device was created. Readable from any thread at any
 * time; each counter is exact, the set is not one atomic snapshot. */
typedef struct kiln_device_stats {
    uint64_t commands_queued;
    uint64_t commands_executed;
    uint64_t waits_ring_full;      /* producer waited for a command slot */
    uint64_t waits_transfer_full;  /* producer waited for transfer ring space */
    uint64_t waits_map_conflict;   /* Map waited for conflicting commands */
    uint64_t waits_finish;         /* kiln_finish waited for queued work */
    uint64_t bytes_uploaded;       /* bytes copied into transfer rings */
    uint64_t upload_chunks;        /* sub-updates after splitting uploads */
    uint64_t renames;              /* WRITE_DISCARD maps that swapped storage */
    uint64_t transfer_ring_peak;   /* most transfer ring bytes ever in use in
                                      one context */
    uint64_t commands_in_flight;   /* queued and not yet completed, now */
} kiln_device_stats;

KILN_API kiln_result kiln_device_get_stats(kiln_device *device, kiln_device_stats *out_stats);

/* ---------------------------------------------------------------------------
 * Handles: index + generation; 0 is never valid. A handle used after its
 * object was destroyed, or passed where another type is expected, gives
 * KILN_E_INVALID_HANDLE.
 * ------------------------------------------------------------------------- */

typedef struct kiln_buffer { uint32_t id; } kiln_buffer;
typedef struct kiln_texture { uint32_t id; } kiln_texture;
/* Either a buffer or a texture, for calls that take both (copy, update, map). */
typedef struct kiln_resource { uint32_t id; } kiln_resource;
typedef struct kiln_rtv { uint32_t id; } kiln_rtv; /* render-target view */
typedef struct kiln_dsv { uint32_t id; } kiln_dsv; /* depth-stencil view */
typedef struct kiln_srv { uint32_t id; } kiln_srv; /* shader-resource view */

static inline kiln_resource kiln_buffer_resource(kiln_buffer b) { kiln_resource r = {b.id}; return r; }
static inline kiln_resource kiln_texture_resource(kiln_texture t) { kiln_resource r = {t.id}; return r; }

/* ---------------------------------------------------------------------------
 * Resources
 * ------------------------------------------------------------------------- */

/* D3D10 usages. */
typedef enum kiln_usage {
    KILN_USAGE_DEFAULT = 0, /* written only by the renderer, UpdateSubresource
                               and Copy; never mapped */
    KILN_USAGE_IMMUTABLE,   /* initial data at creation, never written again */
    KILN_USAGE_DYNAMIC,     /* CPU writes through Map (WRITE_DISCARD,
                               WRITE_NO_OVERWRITE, WRITE), renderer reads;
                               never a render target or copy destination */
    KILN_USAGE_STAGING      /* CPU reads/writes through Map; only a copy
                               source or destination; never bound */
} kiln_usage;

typedef enum kiln_bind_flags {
    KILN_BIND_VERTEX_BUFFER = 1u << 0,
    KILN_BIND_INDEX_BUFFER = 1u << 1,
    KILN_BIND_CONSTANT_BUFFER = 1u << 2, /* alone; size multiple of 16, <= 65536 */
    KILN_BIND_SHADER_RESOURCE = 1u << 3, /* textures (buffer views: UNSUPPORTED) */
    KILN_BIND_RENDER_TARGET = 1u << 5,   /* textures */
    KILN_BIND_DEPTH_STENCIL = 1u << 6    /* textures with a depth format */
} kiln_bind_flags;

typedef enum kiln_cpu_access_flags {
    KILN_CPU_ACCESS_WRITE = 1u << 16,
    KILN_CPU_ACCESS_READ = 1u << 17
} kiln_cpu_access_flags;
/* CPU access 0 means: none for DEFAULT and IMMUTABLE, WRITE for DYNAMIC,
 * READ | WRITE for STAGING. DYNAMIC allows WRITE only. */

typedef enum kiln_format {
    KILN_FORMAT_UNKNOWN = 0,      /* in a view desc: the resource's format */
    KILN_FORMAT_R8G8B8A8_UNORM,
    KILN_FORMAT_B8G8R8A8_UNORM,
    KILN_FORMAT_R8_UNORM,
    KILN_FORMAT_R32_FLOAT,
    KILN_FORMAT_R32G32_FLOAT,
    KILN_FORMAT_R32G32B32A32_FLOAT,
    KILN_FORMAT_D32_FLOAT,        /* depth; may also be a shader resource */
    KILN_FORMAT_D24_UNORM_S8_UINT,/* 32-bit words: depth in bits 0..23,
                                     stencil in bits 24..31 */
    KILN_FORMAT_COUNT
} kiln_format;

/* Bytes per texel (0 for UNKNOWN or out of range). */
KILN_API uint32_t kiln_format_size(kiln_format format);

typedef struct kiln_buffer_desc {
    uint32_t size;        /* bytes, 1..1 GiB */
    kiln_usage usage;
    uint32_t bind_flags;  /* kiln_bind_flags; STAGING: must be 0 */
    uint32_t cpu_access;  /* kiln_cpu_access_flags, see above */
} kiln_buffer_desc;

typedef struct kiln_texture2d_desc {
    uint32_t width, height; /* 1..8192 */
    uint32_t mip_levels;    /* 0: the full chain down to 1x1 */
    uint32_t array_size;    /* 0: 1 */
    kiln_format format;
    kiln_usage usage;
    uint32_t bind_flags;
    uint32_t cpu_access;
} kiln_texture2d_desc;

/* Initial data for one subresource. row_pitch is ignored for buffers; 0 for
 * a texture means tightly packed rows. */
typedef struct kiln_subresource_data {
    const void *data;
    uint32_t row_pitch;
} kiln_subresource_data;

/* Creates a buffer. `init` may be NULL except for IMMUTABLE. The initial
 * bytes are copied before the call returns. Without `init` the buffer is
 * zero-filled. */
KILN_API kiln_result kiln_create_buffer(kiln_device *device, const kiln_buffer_desc *desc,
                                        const kiln_subresource_data *init, kiln_buffer *out_buffer);

/* Creates a 2D texture. `init`, if not NULL, is an array with one entry per
 * subresource, in D3D10 order (subresource = mip + array_slice * mip_levels).
 * Without `init` the texture is zero-filled. */
KILN_API kiln_result kiln_create_texture2d(kiln_device *device, const kiln_texture2d_desc *desc,
                                           const kiln_subresource_data *init,
                                           kiln_texture *out_texture);

/* Destroying invalidates the handle at once; the storage lives until the
 * last queued command that uses it has completed. A mapped resource is
 * unmapped. Views on it become invalid (KILN_LOG_VIEW_RESOURCE_DESTROYED). */
KILN_API kiln_result kiln_destroy_buffer(kiln_device *device, kiln_buffer buffer);
KILN_API kiln_result kiln_destroy_texture(kiln_device *device, kiln_texture texture);

KILN_API kiln_result kiln_buffer_get_desc(kiln_device *device, kiln_buffer buffer,
                                          kiln_buffer_desc *out_desc);
/* The desc as resolved at creation (mip_levels and array_size filled in). */
KILN_API kiln_result kiln_texture_get_desc(kiln_device *device, kiln_texture texture,
                                           kiln_texture2d_desc *out_desc);

/* ---------------------------------------------------------------------------
 * Views
 * ------------------------------------------------------------------------- */

typedef struct kiln_rtv_desc {
    kiln_format format;      /* UNKNOWN or the texture's format */
    uint32_t mip_slice;
    uint32_t first_array_slice;
    uint32_t array_size;     /* 0: 1 */
} kiln_rtv_desc;

typedef struct kiln_dsv_desc {
    kiln_format format;
    uint32_t mip_slice;
    uint32_t first_array_slice;
    uint32_t array_size;     /* 0: 1 */
} kiln_dsv_desc;

typedef struct kiln_srv_desc {
    kiln_format format;
    uint32_t most_detailed_mip;
    uint32_t mip_levels;      /* 0: all from most_detailed_mip on */
    uint32_t first_array_slice;
    uint32_t array_size;      /* 0: all from first_array_slice on */
} kiln_srv_desc;

/* `desc` may be NULL: the whole first mip / all mips, format of the texture. */
KILN_API kiln_result kiln_create_rtv(kiln_device *device, kiln_texture texture,
                                     const kiln_rtv_desc *desc, kiln_rtv *out_view);
KILN_API kiln_result kiln_create_dsv(kiln_device *device, kiln_texture texture,
                                     const kiln_dsv_desc *desc, kiln_dsv *out_view);
KILN_API kiln_result kiln_create_srv(kiln_device *device, kiln_texture texture,
                                     const kiln_srv_desc *desc, kiln_srv *out_view);
KILN_API kiln_result kiln_destroy_rtv(kiln_device *device, kiln_rtv view);
KILN_API kiln_result kiln_destroy_dsv(kiln_device *device, kiln_dsv view);
KILN_API kiln_result kiln_destroy_srv(kiln_device *device, kiln_srv view);

/* ---------------------------------------------------------------------------
 * Context operations
 * ------------------------------------------------------------------------- */

/* A region: texels for textures (front/back: 0/1), bytes for buffers
 * (top/front 0, bottom/back 1). Half-open: [left, right). An empty box
 * (left == right, top == bottom or front == back) makes the call a no-op
 * that returns KILN_OK, as in D3D10; an inverted one is BOX_INVALID. */
typedef struct kiln_box {
    uint32_t left, top, front;
    uint32_t right, bottom, back;
} kiln_box;

/* Fills every texel of the view with `color` (RGBA order whatever the
 * format), converted as D3D10 converts: UNORM clamps to [0,1] and rounds to
 * nearest. Returns at once. */
KILN_API kiln_result kiln_clear_rtv(kiln_context *ctx, kiln_rtv view, const float color[4]);

typedef enum kiln_clear_flags {
    KILN_CLEAR_DEPTH = 1u << 0,
    KILN_CLEAR_STENCIL = 1u << 1
} kiln_clear_flags;

/* depth is clamped to [0, 1]; stencil is ignored for D32_FLOAT. */
KILN_API kiln_result kiln_clear_dsv(kiln_context *ctx, kiln_dsv view, uint32_t clear_flags,
                                    float depth, uint8_t stencil);

/* Copies `data` into a region of a DEFAULT resource (not depth-stencil).
 * box NULL: the whole subresource. row_pitch: bytes between rows of `data`
 * (textures; 0 means tightly packed); depth_pitch is ignored (2D only).
 * The bytes are copied into the transfer ring before the call returns; an
 * upload larger than half the ring is split into several commands. */
KILN_API kiln_result kiln_update_subresource(kiln_context *ctx, kiln_resource dst,
                                             uint32_t dst_subresource, const kiln_box *box,
                                             const void *data, uint32_t row_pitch,
                                             uint32_t depth_pitch);

/* Copies every subresource. Same type, size, format, mips and array size;
 * different resources; dst DEFAULT or STAGING. */
KILN_API kiln_result kiln_copy_resource(kiln_context *ctx, kiln_resource dst, kiln_resource src);

/* Copies src_box (NULL: whole subresource) of a source subresource to
 * (dst_x, dst_y, dst_z) of a destination subresource. Same format; buffers
 * copy to buffers (x in bytes). dst_z must be 0. Depth-stencil resources copy
 * whole subresources only. Within one subresource the regions must not
 * overlap. */
KILN_API kiln_result kiln_copy_subresource_region(kiln_context *ctx, kiln_resource dst,
                                                  uint32_t dst_subresource, uint32_t dst_x,
                                                  uint32_t dst_y, uint32_t dst_z,
                                                  kiln_resource src, uint32_t src_subresource,
                                                  const kiln_box *src_box);

typedef enum kiln_map_type {
    KILN_MAP_READ = 1,               /* STAGING with CPU read */
    KILN_MAP_WRITE = 2,              /* STAGING with CPU write, or DYNAMIC:
                                        waits for queued readers */
    KILN_MAP_READ_WRITE = 3,         /* STAGING with CPU read and write */
    KILN_MAP_WRITE_DISCARD = 4,      /* DYNAMIC: never waits; new zeroed
                                        storage replaces the old, which lives
                                        until its readers complete */
    KILN_MAP_WRITE_NO_OVERWRITE = 5  /* DYNAMIC buffer: never waits; you
                                        promise not to touch bytes that queued
                                        commands use */
} kiln_map_type;

typedef enum kiln_map_flags {
    /* Return KILN_E_WAS_STILL_DRAWING instead of waiting. */
    KILN_MAP_FLAG_DO_NOT_WAIT = 1u << 20
} kiln_map_flags;

typedef struct kiln_mapped_subresource {
    void *data;
    uint32_t row_pitch;   /* bytes between rows (textures) */
    uint32_t depth_pitch; /* bytes of the whole subresource */
} kiln_mapped_subresource;

/* Maps a subresource for the CPU. Waits only for queued commands that
 * conflict with this access to this resource (READ: earlier writers; WRITE:
 * earlier readers and writers). Until Unmap, commands queued later that
 * conflict with the map wait (after a READ map, later writers; after a
 * WRITE map, every later use). Several subresources of one texture may be
 * mapped at once if all maps are reads or the first map was a write, and
 * no command queued in between conflicts with them (else
 * KILN_E_WOULD_DEADLOCK: locks are per resource). */
KILN_API kiln_result kiln_map(kiln_context *ctx, kiln_resource resource, uint32_t subresource,
                              kiln_map_type type, uint32_t map_flags,
                              kiln_mapped_subresource *out_mapped);
KILN_API kiln_result kiln_unmap(kiln_context *ctx, kiln_resource resource, uint32_t subresource);

/* Ends any batch being gathered so queued work can start. Never waits. */
KILN_API kiln_result kiln_flush(kiln_context *ctx);

/* Blocks until every command this context queued has completed. Returns
 * KILN_E_WOULD_DEADLOCK if a resource this context keeps mapped blocks some
 * of them. */
KILN_API kiln_result kiln_finish(kiln_context *ctx);

/* ---------------------------------------------------------------------------
 * Contexts
 *
 * Besides the immediate context, a device can have any number of contexts.
 * Each is an ordered stream of commands, fed by one thread at a time (a
 * context may move between threads, never be used by two at once). Within
 * a context, commands take effect in call order with no synchronization.
 * Across contexts there is no order except what fences and sync tokens
 * give; resources are shared, and no two commands ever read and write the
 * same resource at once.
 * ------------------------------------------------------------------------- */

KILN_API kiln_result kiln_context_create(kiln_device *device, kiln_context **out_context);
/* Unmaps what the context keeps mapped, completes its queued work and frees
 * it. The immediate context cannot be destroyed (CONTEXT_IMMEDIATE). */
KILN_API kiln_result kiln_context_destroy(kiln_context *ctx);

/* ---------------------------------------------------------------------------
 * Timelines, sync points and fences
 *
 * A timeline is a monotonic 64-bit counter. A sync point is a value on a
 * timeline: active until the timeline reaches it, then signaled (or error,
 * if the work that advanced the timeline failed). A fence is an immutable
 * set of sync points; it is signaled when all are, in error when any is.
 * Fences belong to their device; every call below may be made from any
 * thread.
 * ------------------------------------------------------------------------- */

typedef struct kiln_timeline { uint32_t id; } kiln_timeline;
typedef struct kiln_fence { uint32_t id; } kiln_fence;

typedef enum kiln_fence_status {
    KILN_FENCE_ACTIVE = 0,
    KILN_FENCE_SIGNALED = 1,
    KILN_FENCE_ERROR = 2
} kiln_fence_status;

KILN_API kiln_result kiln_create_timeline(kiln_device *device, uint64_t initial_value,
                                          kiln_timeline *out_timeline);
/* Points still waiting on a destroyed timeline can never be reached: they
 * enter the error state once the timeline's last queued signal has run. */
KILN_API kiln_result kiln_destroy_timeline(kiln_device *device, kiln_timeline timeline);
KILN_API kiln_result kiln_timeline_get_value(kiln_device *device, kiln_timeline timeline,
                                             uint64_t *out_value);
/* Signals from the CPU, now. `value` must exceed every value signaled or
 * queued for this timeline so far (TIMELINE_NOT_MONOTONIC). */
KILN_API kiln_result kiln_timeline_signal(kiln_device *device, kiln_timeline timeline,
                                          uint64_t value);

/* A fence of one sync point: `timeline` reaching `value`. */
KILN_API kiln_result kiln_create_fence(kiln_device *device, kiln_timeline timeline, uint64_t value,
                                       kiln_fence *out_fence);
/* A third fence that signals when both have. */
KILN_API kiln_result kiln_fence_merge(kiln_device *device, kiln_fence a, kiln_fence b,
                                      kiln_fence *out_fence);
KILN_API kiln_result kiln_destroy_fence(kiln_device *device, kiln_fence fence);
KILN_API kiln_result kiln_fence_poll(kiln_device *device, kiln_fence fence,
                                     kiln_fence_status *out_status);
/* Client wait: blocks the caller until the fence settles or `timeout_ns`
 * passes (UINT64_MAX: no limit; 0: poll). Returns KILN_OK (signaled),
 * KILN_E_TIMEOUT, KILN_E_COMMAND_FAILED (error state) or KILN_E_DEVICE_LOST
 * (the device was destroyed while waiting; the call then touches nothing). */
KILN_API kiln_result kiln_fence_wait(kiln_device *device, kiln_fence fence, uint64_t timeout_ns);

/* Called exactly once per kiln_fence_wait_async, with KILN_OK,
 * KILN_E_COMMAND_FAILED or KILN_E_DEVICE_LOST. It runs on the thread that
 * settles the fence (a kiln worker, or the thread inside kiln_timeline_signal,
 * kiln_device_destroy, ...), or inside kiln_fence_wait_async itself if the
 * fence is already settled, and never while kiln holds a lock. It must not
 * call back into kiln and should return quickly. */
typedef void (*kiln_fence_callback)(kiln_fence fence, kiln_result status, void *user);
KILN_API kiln_result kiln_fence_wait_async(kiln_device *device, kiln_fence fence,
                                           kiln_fence_callback callback, void *user);

/* After every command this context queued so far has completed, signal
 * `timeline` to `value` (which must exceed every value signaled or queued
 * for it). Returns at once. */
KILN_API kiln_result kiln_context_signal(kiln_context *ctx, kiln_timeline timeline, uint64_t value);
/* Server wait: commands this context queues after this call run only once
 * `fence` has settled; the calling thread goes on at once. If the fence
 * ends in error (or the device is lost), the commands still run and the
 * context's next completion point reports the error. */
KILN_API kiln_result kiln_context_wait(kiln_context *ctx, kiln_fence fence);
/* A new fence that signals when every command this context queued so far
 * has completed. */
KILN_API kiln_result kiln_context_insert_fence(kiln_context *ctx, kiln_fence *out_fence);

/* A cheap value naming the current point of one context's stream (like
 * Chrome's sync tokens): no object to destroy. Waitable from any context. */
typedef struct kiln_sync_token {
    uint32_t timeline; /* the context's own timeline */
    uint32_t reserved;
    uint64_t value;
} kiln_sync_token;

KILN_API kiln_result kiln_context_sync_token(kiln_context *ctx, kiln_sync_token *out_token);
/* Server wait on a token from any context of the same device. */
KILN_API kiln_result kiln_context_wait_sync_token(kiln_context *ctx, kiln_sync_token token);
/* Client wait on a token (see kiln_fence_wait for the results). */
KILN_API kiln_result kiln_wait_sync_token(kiln_device *device, kiln_sync_token token,
                                          uint64_t timeout_ns);

/* ---------------------------------------------------------------------------
 * Queries (D3D10 style). KILN_QUERY_EVENT is built on insert_fence: End
 * marks the point, GetData says whether everything before it completed.
 * ------------------------------------------------------------------------- */

typedef struct kiln_query { uint32_t id; } kiln_query;

typedef enum kiln_query_type { KILN_QUERY_EVENT = 0 } kiln_query_type;

typedef enum kiln_get_data_flags {
    KILN_GET_DATA_DO_NOT_FLUSH = 1u << 0
} kiln_get_data_flags;

KILN_API kiln_result kiln_create_query(kiln_device *device, kiln_query_type type,
                                       kiln_query *out_query);
KILN_API kiln_result kiln_destroy_query(kiln_device *device, kiln_query query);
/* EVENT queries have no Begin (QUERY_TYPE), as in D3D10. */
KILN_API kiln_result kiln_query_begin(kiln_context *ctx, kiln_query query);
KILN_API kiln_result kiln_query_end(kiln_context *ctx, kiln_query query);
/* KILN_OK and, if `data` is not NULL, a uint32_t 1 when the work before End
 * has completed; KILN_E_WAS_STILL_DRAWING when not yet (flushing the
 * context first unless DO_NOT_FLUSH); KILN_E_COMMAND_FAILED if it failed.
 * `size` is 0 (data NULL) or sizeof(uint32_t). */
KILN_API kiln_result kiln_query_get_data(kiln_context *ctx, kiln_query query, void *data,
                                         uint32_t size, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* KILN_H */
