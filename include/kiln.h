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
 *  2. Create resources: buffers and textures (2D, 1D, cube and 3D, and
 *     arrays of 1D and 2D; the soft backend only for all but 2D), with a
 *     D3D10 usage (DEFAULT, IMMUTABLE, DYNAMIC, STAGING) and bind flags.
 *     Create views to use a texture as a render target, depth-stencil or
 *     shader resource.
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
    KILN_E_COMMAND_FAILED = -10,    /* a fence covers work that failed while
                                       executing (reported when it failed) */
    KILN_E_IO = -11                 /* a file could not be opened or written
                                       (captures) */
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
    X(WOULD_DEADLOCK, "waiting would deadlock: a resource this thread keeps mapped blocks the queued work; Unmap it first") \
    X(DEVICE_LOST, "the device is lost")                                      \
    X(COMMAND_FAILED, "a queued command failed while executing")             \
    X(TEXTURE_TOO_LARGE, "texture storage (all subresources) exceeds 4 GiB")  \
    X(TIMELINE_NOT_MONOTONIC, "a timeline signal must exceed every value signaled or queued before") \
    X(CONTEXT_IMMEDIATE, "the immediate context belongs to the device and is not destroyed") \
    X(FENCE_EMPTY, "a fence needs at least one sync point")                   \
    X(QUERY_TYPE, "unknown query type, or the call does not apply to it")     \
    X(QUERY_NOT_ENDED, "the query has not been ended yet")                    \
    X(DATA_SIZE, "data size does not match what the query returns")        \
    X(SHADER_DESC, "shader desc: NULL function or counts out of range")      \
    X(LAYOUT_DESC, "input layout: element format, slot or count invalid")    \
    X(LAYOUT_SHADER_MISMATCH, "input layout does not match the vertex shader's inputs") \
    X(STATE_DESC, "state object desc holds an invalid value")                \
    X(BIND_RANGE, "binding slot range exceeds the limit")                    \
    X(BIND_USAGE, "resource lacks the bind flag for this slot")              \
    X(RT_MISMATCH, "render targets and depth-stencil differ in size")        \
    X(DRAW_NO_SHADER, "draw without a vertex or pixel shader bound")         \
    X(DRAW_NO_LAYOUT, "draw without an input layout, or a slot it reads has no buffer") \
    X(DRAW_NO_TOPOLOGY, "draw without a primitive topology")                 \
    X(DRAW_NO_INDEX_BUFFER, "indexed draw without an index buffer")         \
    X(DRAW_BUFFER_TOO_SMALL, "a buffer is too small for the draw")           \
    X(DRAW_VARYINGS_MISMATCH, "pixel shader reads more varyings than the vertex shader writes") \
    X(DRAW_BOUND_DESTROYED, "an object bound to the pipeline has been destroyed") \
    X(DRAW_HAZARD, "a resource is bound both as shader input and as target") \
    X(DRAW_TOO_LARGE, "one draw may make at most 2^28 vertices and 2^20 instances; split it") \
    X(MIPS_NO_RT, "generate_mips needs a texture with render-target and shader-resource binds") \
    X(SWAPCHAIN_DESC, "swapchain desc: size, format, buffer count, mode or target invalid") \
    X(WINSYS_UNAVAILABLE, "the window system target cannot be used here")         \
    X(WINSYS_FAILED, "the window system target failed to display a frame")         \
    X(PRESENT_NO_BUFFER, "present without a back buffer taken since the last present") \
    X(SHADER_NO_GLSL, "the osmesa backend runs shaders only from their GLSL, and this desc has none") \
    X(GL_SHADER_FAILED, "the osmesa backend could not compile or link a shader's GLSL (the GL info log follows)") \
    X(BACKEND_FEATURE, "the device's backend cannot do this (valid D3D10; see the backend's documented limits)") \
    X(TRACE_OPEN_FAILED, "the trace file cannot be written; the device runs without tracing") \
    X(TRACE_DROPPED, "trace events were dropped: the writer fell a whole ring behind") \
    X(CAPTURE_ACTIVE, "a capture is already running on this device")           \
    X(CAPTURE_NOT_ACTIVE, "no capture is running on this device")               \
    X(CAPTURE_OPEN_FAILED, "the capture file cannot be opened for writing")     \
    X(CAPTURE_WRITE_FAILED, "writing the capture file failed; the capture stopped") \
    X(CAPTURE_LIVE_OBJECTS, "the device already has objects: a capture begins before the first is created (KILN_CAPTURE captures from creation)") \
    X(CAPTURE_SHADER_NAME, "shader name invalid, reserved, or registered with another desc") \
    X(CAPTURE_SHADER_UNNAMED, "a shader was created from a desc registered under no name: the capture records it, a replay cannot recreate it") \
    X(CONTEXT_IN_USE, "a swapchain still renders through this context: destroy it first") \
    X(SYNC_TOKEN_INVALID, "a sync token or fence names a point of a context's own timeline that the context has not handed out") \
    X(QUERY_NO_STREAM_OUTPUT, "SO_STATISTICS and SO_OVERFLOW_PREDICATE queries need stream output, which this backend does not have") \
    X(QUERY_ACTIVE, "begin on a query that is already active (between its begin and end)") \
    X(QUERY_NOT_ACTIVE, "end without a begin on this context, for a query type that needs one") \
    X(QUERY_IS_PREDICATE, "begin or end on a query that a context uses as its predicate") \
    X(QUERY_TOO_MANY_ACTIVE, "too many queries active on one context (KILN_MAX_ACTIVE_QUERIES)") \
    X(PREDICATE_TYPE, "only an OCCLUSION_PREDICATE or SO_OVERFLOW_PREDICATE query can predicate") \
    X(PREDICATE_NOT_ISSUED, "a predicate must have been ended, and not begun again since") \
    X(GS_OUTPUT_LIMIT, "geometry shader: max_vertices x output scalars per vertex exceeds 1024 (D3D10's limit)") \
    X(DRAW_ADJACENCY_NO_GS, "an adjacency topology needs a geometry shader bound") \
    X(DRAW_GS_INPUT_MISMATCH, "the geometry shader's input primitive does not match the topology") \
    X(SO_DECL, "stream-output declaration: elements, registers, components, slots or stride invalid (D3D10's rules)") \
    X(SO_OFFSET, "stream-output offset is not a multiple of 4 (nor -1, append)") \
    X(DRAW_SO_MISMATCH, "the stream-output declaration does not fit the bound shaders or buffers") \
    X(DRAW_AUTO_NO_SO, "draw_auto needs a stream-output buffer with a non-zero stride in vertex-buffer slot 0") \
    X(DRAW_NO_RASTER, "a draw without a pixel shader needs stream output or a depth-stencil test to write") \
    X(SO_TARGET_DUPLICATE, "one buffer is bound to two stream-output slots") \
    X(MIPS_FORMAT, "generate_mips cannot filter this format (integer formats)") \
    X(BOX_BLOCK_ALIGN, "a box or copy position on a block-compressed texture is not on 4x4 block boundaries") \
    X(TEXTURE_SAMPLES_INVALID, "sample count is 1 or 4; a 4x texture has one mip level, DEFAULT usage, a render-target or depth-stencil bind, no shader-resource bind and no initial data") \
    X(MSAA_OPERATION, "a multisampled resource is copied whole (kiln_copy_resource) or resolved; UpdateSubresource and region copies do not take it") \
    X(RT_SAMPLES_MISMATCH, "render targets and depth-stencil differ in sample count") \
    X(RESOLVE_INVALID, "resolve: a multisampled source, a single-sample destination of its size, and one format that is neither integer nor depth") \
    X(TEXTURE3D_SIZE_INVALID, "3D texture width/height/depth must be 1..2048") \
    X(TEXTURE_KIND_BIND, "this texture kind cannot have this bind flag or format (3D: no depth-stencil)") \
    X(VIEW_DIMENSION, "view dimension does not fit the texture kind (e.g. CUBE on a texture that is no cube)") \
    X(DEPTH_PITCH_INVALID, "depth pitch is smaller than one depth slice of the box") \
    X(COPY_KIND_MISMATCH, "copy source and destination are different texture kinds") \
    X(BUFFER_VIEW_FORMAT, "a buffer view's format must be a color format: not UNKNOWN, depth, block-compressed or sRGB") \
    X(BUFFER_VIEW_RANGE, "a buffer view's elements [first_element, +num_elements) must be at least one and lie inside the buffer") \
    X(DEVICE_BAD_SCENE_BUDGET, "scene_budget out of range (64 KiB..1 GiB, or 0 for the default)")

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
    KILN_BACKEND_OSMESA       /* Mesa's llvmpipe through OSMesa or surfaceless
                                 EGL (KILN_GL_PROVIDER=osmesa|egl picks), on
                                 one GL thread per device; shaders run from
                                 their `glsl`. KILN_E_UNSUPPORTED (log id
                                 BACKEND_UNSUPPORTED) when not built in.
                                 The first osmesa device of a process fixes
                                 llvmpipe's thread count (LP_NUM_THREADS =
                                 its num_threads, by default the CPU
                                 count). docs/backends.md */
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
     * to 1..256, else one fewer than the CPUs (at least one). A thread
     * that waits inside kiln (finish, Map, a fence, a full ring) executes
     * queued work meanwhile, so by default the application's thread keeps
     * a core while it issues commands and all cores render while it waits.
     * Ignored in SERIAL mode. docs/queue.md "Worker placement" */
    uint32_t num_threads;
    /* Commands a context can have queued but not completed. 0: 1024.
     * Range 2..1048576. The producer blocks when it is full. Recorded
     * draws are bounded besides by scene_budget. */
    uint32_t command_ring_capacity;
    /* Bytes of the per-context transfer ring that holds upload data until
     * the executor has consumed it. 0: 4 MiB. Range 4096..1 GiB. The ring
     * is allocated when the context is created and its first 4 MiB (the
     * default ring whole) written then, so those pages are resident from
     * the start (uploads into them take no page faults); a larger ring's
     * other pages are committed on first use. */
    uint32_t transfer_ring_size;
    kiln_exec_mode exec_mode;
    /* NULL: errors and warnings go to kiln_log_stderr. */
    kiln_log_fn log_fn;
    void *log_user;
    kiln_allocator allocator;
    /* Writes a scheduler timeline of the device's life to this file as
     * Chrome trace-event JSON (open it in https://ui.perfetto.dev): every
     * command from its API call through its locks to its execution, scene
     * phases and tiles on the workers, every wait inside kiln with its
     * cause and resource, fence signals as arrows to the waits they end.
     * Written while the device runs (bounded memory) and completed by
     * kiln_device_destroy. NULL: the KILN_TRACE environment variable, if
     * set and not empty; else no tracing, at the cost of one branch per
     * recording site. A file that cannot be written is logged
     * (KILN_LOG_TRACE_OPEN_FAILED) and the device runs untraced.
     * docs/trace.md */
    const char *trace_path;
    /* Bytes of recorded scenes (draws and clears with their bound state,
     * constants and vertices gathered since the last flush point) a
     * context may have submitted and not completed: past it the producer
     * waits at its next scene, helping to execute meanwhile
     * (kiln_device_stats.waits_scene_budget). 0: 32 MiB. Range
     * 64 KiB..1 GiB (KILN_LOG_DEVICE_BAD_SCENE_BUDGET). A scene counts
     * its own memory, not the resources it keeps alive. Not captured: it
     * changes only when the producer waits, never a result.
     * docs/queue.md "Scene budget" */
    uint32_t scene_budget;
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
    uint64_t waits_scene_budget;   /* producer waited because its recorded
                                      scenes in flight passed the scene
                                      budget (kiln_device_desc.scene_budget; docs/queue.md
                                      "Scene budget") */
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
    KILN_BIND_SHADER_RESOURCE = 1u << 3, /* textures, and buffers read through
                                            typed views (kiln_create_buffer_srv):
                                            any usage but STAGING, not with
                                            CONSTANT_BUFFER */
    KILN_BIND_STREAM_OUTPUT = 1u << 4,   /* buffers, DEFAULT usage only (the
                                            renderer writes them); may be
                                            combined with VERTEX_BUFFER and
                                            INDEX_BUFFER, not CONSTANT_BUFFER */
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
    KILN_FORMAT_R32G32B32_FLOAT,  /* vertex elements and typed buffer
                                     views only (no textures) */
    /* Textures (render target and shader resource, blendable), by D3D10's
     * data conversion rules: UNORM and SNORM round to nearest; FLOAT
     * rounds toward zero (a finite value beyond the range becomes the
     * largest finite one; INF, NaN and denormals are kept where the
     * format has them; R11G11B10 has no sign: negative values become 0).
     * _SRGB formats store color on the sRGB curve (alpha linear): sampling
     * and filtering, blending and mip generation work on linear values,
     * and writes encode. Not vertex elements; not on the osmesa backend. */
    KILN_FORMAT_R8G8_UNORM,
    KILN_FORMAT_R8G8B8A8_SNORM,
    KILN_FORMAT_R8G8B8A8_UNORM_SRGB,
    KILN_FORMAT_B8G8R8A8_UNORM_SRGB,
    KILN_FORMAT_R10G10B10A2_UNORM, /* 32-bit words: R bits 0..9, A 30..31 */
    KILN_FORMAT_R11G11B10_FLOAT,   /* 32-bit words: R 0..10, G 11..21, B 22..31 */
    KILN_FORMAT_R16_UNORM,
    KILN_FORMAT_R16_FLOAT,
    KILN_FORMAT_R16G16_FLOAT,
    KILN_FORMAT_R16G16B16A16_FLOAT,
    KILN_FORMAT_R16G16B16A16_UNORM,
    KILN_FORMAT_D16_UNORM,         /* depth, no stencil; may also be a shader
                                      resource (read as R16_UNORM) */
    /* Integer textures (render target and shader resource; D3D10 neither
     * filters nor blends them). kiln's pixel shaders write floats: into an
     * integer target (and for a clear's color) each channel converts as
     * D3D10's ftoi / ftou do, NaN to 0, then toward zero, then clamped to
     * the channel's range, so integers up to 2^24 in magnitude are exact;
     * blending is ignored for these targets. kiln_ps_load reads them as
     * floats (the integer's value, rounded beyond 2^24); kiln_ps_sample
     * and its variants read zeros (D3D10 cannot sample them);
     * generate_mips refuses them (MIPS_FORMAT). Not vertex elements; not
     * on the osmesa backend. */
    KILN_FORMAT_R8G8B8A8_UINT,
    KILN_FORMAT_R8G8B8A8_SINT,
    KILN_FORMAT_R16_UINT,
    KILN_FORMAT_R32_UINT,
    KILN_FORMAT_R32_SINT,
    KILN_FORMAT_R32G32B32A32_UINT,
    /* Depth and stencil, 64-bit texels: float depth in bytes 0..3, the
     * stencil in byte 4, bytes 5..7 unused (kept as they are). A
     * depth-stencil only (no typeless formats: not a shader resource, as
     * D24_UNORM_S8_UINT); not on the osmesa backend. */
    KILN_FORMAT_D32_FLOAT_S8X24_UINT,
    /* Block-compressed (D3D10's BC formats): 4x4 texel blocks of 8 bytes
     * (BC1, BC4) or 16 bytes (BC2, BC3, BC5), blocks left to right, rows
     * of blocks top to bottom, each block's bytes as D3D10 lays them out.
     * Shader resources only (no render target, depth-stencil or vertex
     * use; generate_mips refuses them with MIPS_FORMAT); any usage.
     * Width and height need not be multiples of 4, but storage, pitches,
     * boxes and copies go by whole blocks: a row pitch is the bytes of
     * one row of blocks (kiln_format_size x ceil(width / 4)), initial
     * data and Map hold ceil(height / 4) such rows, a mip smaller than
     * 4x4 still holds one whole block, and UpdateSubresource and
     * CopySubresourceRegion boxes and destinations start on multiples of
     * 4 and end on multiples of 4 or at the subresource's edge
     * (BOX_BLOCK_ALIGN otherwise); a box may reach the block-aligned
     * size (0..4 on a 2x2 mip). Sampling decodes as D3D10 specifies:
     * BC1's colors c0, c1 from 5:6:5, with c2 = (2 c0 + c1) / 3 and
     * c3 = (c0 + 2 c1) / 3 when c0 > c1 (as 16-bit numbers), else
     * c2 = (c0 + c1) / 2 and c3 transparent black; BC2 and BC3 always
     * take the 4-color mode, BC2 with 4-bit explicit alpha, BC3 alpha
     * and BC4 / BC5 channels from two 8-bit endpoints and 3-bit codes
     * (eight values when e0 > e1, else six plus 0 and 1). Interpolation
     * runs in float on the endpoints' UNORM values; _SRGB decodes the
     * interpolated color to linear (alpha stays linear) before
     * filtering. Not on the osmesa backend (BACKEND_FEATURE). */
    KILN_FORMAT_BC1_UNORM,
    KILN_FORMAT_BC1_UNORM_SRGB,
    KILN_FORMAT_BC2_UNORM,
    KILN_FORMAT_BC2_UNORM_SRGB,
    KILN_FORMAT_BC3_UNORM,
    KILN_FORMAT_BC3_UNORM_SRGB,
    KILN_FORMAT_BC4_UNORM,  /* red; green and blue read 0, alpha 1 */
    KILN_FORMAT_BC5_UNORM,  /* red and green; blue 0, alpha 1 */
    KILN_FORMAT_COUNT
} kiln_format;

/* Bytes per texel, or per 4x4 block for the BC formats (0 for UNKNOWN or
 * out of range). */
KILN_API uint32_t kiln_format_size(kiln_format format);
/* Texels per side of a block: 4 for the BC formats, 1 for the others (0
 * for UNKNOWN or out of range). A row of a subresource w texels wide
 * holds ceil(w / dim) * kiln_format_size bytes. */
KILN_API uint32_t kiln_format_block_dim(kiln_format format);

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
    /* Samples per pixel: 0 or 1, or 4 for 4x multisampling with D3D10's
     * standard pattern (KILN_SAMPLE_PATTERN4: sample k at
     * its offset / 16 from the pixel center). A 4x texture has one mip level, DEFAULT
     * usage, a RENDER_TARGET or DEPTH_STENCIL bind, no SHADER_RESOURCE bind
     * (kiln has no Texture2DMS loads) and no initial data
     * (TEXTURE_SAMPLES_INVALID). It is rendered to, cleared, copied whole
     * with kiln_copy_resource and resolved with kiln_resolve_subresource;
     * UpdateSubresource and region copies refuse it (MSAA_OPERATION).
     * Rendering into it: triangles cover each sample by the usual fill
     * rules at the sample's position, depth and stencil are tested and
     * written per sample (depth interpolated at the sample), the pixel
     * shader runs once per pixel with any sample covered (varyings at the
     * pixel center) and its output goes to the covered samples that
     * passed; occlusion queries count samples. Lines and points cover
     * all four samples of the pixels they cover at one sample (their
     * single-sample rules). The osmesa backend refuses 4x textures
     * (BACKEND_FEATURE). */
    uint32_t sample_count;
} kiln_texture2d_desc;

/* D3D10's standard 4x pattern: sample k's (x, y) offset from the pixel
 * center in 1/16 pixel, as an initializer of int[4][2]. */
#define KILN_SAMPLE_PATTERN4 {{-2, -6}, {6, -2}, {-6, 2}, {2, 6}}

/* TextureCube (D3D10.0): a 2D texture of 6 square faces (D3D10's Texture2D
 * with RESOURCE_MISC_TEXTURECUBE and array size 6), viewed as a cube
 * (KILN_SRV_DIMENSION_TEXTURECUBE) or as a 2D array of its faces (render
 * targets, copies, Map, UpdateSubresource). Faces in D3D10 order: +X,
 * -X, +Y, -Y, +Z, -Z (array slices 0..5; subresource = mip + face *
 * mip_levels). Cube arrays (D3D10.1) are not provided. */
typedef struct kiln_texture_cube_desc {
    uint32_t size;          /* width and height of a face, 1..8192 */
    uint32_t mip_levels;    /* 0: the full chain down to 1x1 */
    kiln_format format;
    kiln_usage usage;       /* not DYNAMIC (6 faces: USAGE_DYNAMIC_TEXTURE) */
    uint32_t bind_flags;    /* as 2D textures */
    uint32_t cpu_access;
} kiln_texture_cube_desc;

/* Texture1D (D3D10): a row of texels, mips halve the width, 1..512
 * array slices. Stored as a texture of height 1: every call that takes a
 * box, a region or a Map sees rows of one texel (top 0, bottom 1). */
typedef struct kiln_texture1d_desc {
    uint32_t width;         /* 1..8192 */
    uint32_t mip_levels;    /* 0: the full chain down to 1 */
    uint32_t array_size;    /* 0: 1; 1..512 */
    kiln_format format;
    kiln_usage usage;
    uint32_t bind_flags;    /* as 2D textures */
    uint32_t cpu_access;
} kiln_texture1d_desc;

/* Texture3D (D3D10): width x height x depth texels, each mip halving all
 * three (down to 1), one subresource per mip (subresource = mip). Boxes
 * use front/back for depth slices; Map returns depth_pitch, the bytes
 * between slices. Not a depth-stencil and not of a depth format
 * (TEXTURE_KIND_BIND); DYNAMIC ones have one mip. */
typedef struct kiln_texture3d_desc {
    uint32_t width, height, depth; /* 1..2048 each */
    uint32_t mip_levels;    /* 0: the full chain down to 1x1x1 */
    kiln_format format;
    kiln_usage usage;
    uint32_t bind_flags;    /* SHADER_RESOURCE, RENDER_TARGET */
    uint32_t cpu_access;
} kiln_texture3d_desc;

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

/* Creates a 1D, cube or 3D texture; `init` as for 2D (3D: one entry per
 * mip, its depth slices following each other, row_pitch x height bytes
 * apart). Sizes, mips and array sizes follow D3D10's limits
 * (TEXTURE_SIZE_INVALID for a 1D width or a cube's size,
 * TEXTURE3D_SIZE_INVALID, TEXTURE_MIPS_INVALID, TEXTURE_ARRAY_INVALID),
 * and so do usages and binds (as for 2D; 3D: TEXTURE_KIND_BIND). The
 * osmesa backend refuses all three kinds (KILN_E_UNSUPPORTED,
 * BACKEND_FEATURE). */
KILN_API kiln_result kiln_create_texture1d(kiln_device *device, const kiln_texture1d_desc *desc,
                                           const kiln_subresource_data *init,
                                           kiln_texture *out_texture);
KILN_API kiln_result kiln_create_texture_cube(kiln_device *device, const kiln_texture_cube_desc *desc,
                                              const kiln_subresource_data *init,
                                              kiln_texture *out_texture);
KILN_API kiln_result kiln_create_texture3d(kiln_device *device, const kiln_texture3d_desc *desc,
                                           const kiln_subresource_data *init,
                                           kiln_texture *out_texture);

/* Destroying invalidates the handle at once; the storage lives until the
 * last queued command that uses it has completed. A mapped resource is
 * unmapped. Views on it become invalid (KILN_LOG_VIEW_RESOURCE_DESTROYED). */
KILN_API kiln_result kiln_destroy_buffer(kiln_device *device, kiln_buffer buffer);
KILN_API kiln_result kiln_destroy_texture(kiln_device *device, kiln_texture texture);

KILN_API kiln_result kiln_buffer_get_desc(kiln_device *device, kiln_buffer buffer,
                                          kiln_buffer_desc *out_desc);
/* The desc as resolved at creation (mip_levels and array_size filled in).
 * Of a 1D texture: height 1; of a cube: array size 6; of a 3D texture:
 * width, height and mips (kiln_texture3d_get_desc has the depth). */
KILN_API kiln_result kiln_texture_get_desc(kiln_device *device, kiln_texture texture,
                                           kiln_texture2d_desc *out_desc);
/* The 3D desc of a 3D texture; of another kind, depth 1 and its width,
 * height and mips (KILN_OK either way). */
KILN_API kiln_result kiln_texture3d_get_desc(kiln_device *device, kiln_texture texture,
                                             kiln_texture3d_desc *out_desc);

/* ---------------------------------------------------------------------------
 * Views
 * ------------------------------------------------------------------------- */

/* Render-target and depth-stencil views name one mip and a range of
 * planes: array slices (1D and 2D arrays, a cube's faces as a 2D array)
 * or, of a 3D texture's mip, W (depth) slices: first_array_slice is
 * D3D10's FirstWSlice and array_size its WSize, within that mip's depth.
 * A 1D view is a render target 1 texel high. Depth-stencil views exist
 * for 1D and 2D kinds (cubes as 2D arrays), as in D3D10, not for 3D. */
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

/* D3D10_SRV_DIMENSION: how the pixel shader reads the view (what its
 * coordinates mean, kiln_ps_sample_uvw). */
typedef enum kiln_srv_dimension {
    /* The texture's own: TEXTURE1D or TEXTURE1DARRAY (array size > 1)
     * for 1D textures, TEXTURE3D, TEXTURECUBE for cubes; for 2D textures
     * kiln's 2D view of old: the first slice of its range is sampled. */
    KILN_SRV_DIMENSION_DEFAULT = 0,
    KILN_SRV_DIMENSION_TEXTURE1D,      /* one slice (first_array_slice) */
    KILN_SRV_DIMENSION_TEXTURE1DARRAY, /* slices [first_array_slice, +array_size) */
    KILN_SRV_DIMENSION_TEXTURE2D,      /* one slice (first_array_slice) */
    KILN_SRV_DIMENSION_TEXTURE2DARRAY, /* also a cube's faces */
    KILN_SRV_DIMENSION_TEXTURE3D,      /* array fields must be 0 */
    KILN_SRV_DIMENSION_TEXTURECUBE,    /* all 6 faces; array fields must be 0 */
    /* A typed buffer (kiln_create_buffer_srv makes these; kiln_create_srv
     * refuses it with VIEW_DIMENSION). */
    KILN_SRV_DIMENSION_BUFFER
} kiln_srv_dimension;

typedef struct kiln_srv_desc {
    kiln_format format;
    uint32_t most_detailed_mip;
    uint32_t mip_levels;      /* 0: all from most_detailed_mip on */
    uint32_t first_array_slice;
    uint32_t array_size;      /* 0: all from first_array_slice on */
    /* Must fit the texture's kind (VIEW_DIMENSION): 1D kinds for 1D
     * textures, 2D kinds for 2D ones and cubes, TEXTURECUBE for cubes
     * only, TEXTURE3D for 3D ones. */
    kiln_srv_dimension dimension;
} kiln_srv_desc;

/* `desc` may be NULL: the whole first mip / all mips, format of the texture. */
KILN_API kiln_result kiln_create_rtv(kiln_device *device, kiln_texture texture,
                                     const kiln_rtv_desc *desc, kiln_rtv *out_view);
KILN_API kiln_result kiln_create_dsv(kiln_device *device, kiln_texture texture,
                                     const kiln_dsv_desc *desc, kiln_dsv *out_view);
KILN_API kiln_result kiln_create_srv(kiln_device *device, kiln_texture texture,
                                     const kiln_srv_desc *desc, kiln_srv *out_view);

/* Typed buffer views (D3D10's D3D10_SRV_DIMENSION_BUFFER): a shader reads
 * a buffer created with KILN_BIND_SHADER_RESOURCE as an array of
 * num_elements elements of `format`, element 0 at byte
 * first_element * kiln_format_size(format) of the buffer.
 *
 * - Formats: every color format kiln has, R32G32B32_FLOAT included (as
 *   in D3D10); not UNKNOWN (a buffer has no format of its own), depth,
 *   block-compressed or sRGB formats (D3D10 has no buffer support for
 *   them): BUFFER_VIEW_FORMAT.
 * - The elements must lie inside the buffer and be at least one:
 *   BUFFER_VIEW_RANGE. A buffer without the SHADER_RESOURCE bind:
 *   VIEW_RESOURCE_BIND. All KILN_E_INVALID_ARG; desc is required.
 * - The view is a kiln_srv like any other: bind it with
 *   kiln_ps_set_shader_resources / kiln_vs_set_shader_resources /
 *   kiln_gs_set_shader_resources, destroy it with kiln_destroy_srv.
 *   In a shader, kiln_ps_load (kiln_vs_load, kiln_gs_load) reads element
 *   x (y and mip ignored; HLSL's Buffer.Load(int)), decoded as a texel of
 *   that format in a texture would be (R32G32B32_FLOAT: alpha 1); an
 *   element outside [0, num_elements) reads zeros. kiln_ps_get_dimensions
 *   gives width num_elements, height 1, levels 1 (any mip). Sample and
 *   every variant of it read zeros (D3D10 cannot sample buffers), and so
 *   do the kiln_ps_load_uvw calls' y and z: they are ignored as well.
 * - A draw reads the buffer: a later UpdateSubresource, copy or Map of it
 *   waits for that draw only, WRITE_DISCARD of a DYNAMIC one renames it
 *   (the draw keeps reading the old bytes). A buffer bound as a view and
 *   as a stream-output target of one draw fails it (DRAW_HAZARD).
 * - Soft backend only: the osmesa backend refuses the view
 *   (KILN_E_UNSUPPORTED, BACKEND_FEATURE).
 *
 *     kiln_buffer_desc bd = {64 * 16, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE};
 *     kiln_buffer lights;
 *     kiln_create_buffer(dev, &bd, NULL, &lights);
 *     kiln_srv view;  // elements 0..63 as float4
 *     kiln_create_buffer_srv(dev, lights,
 *         &(kiln_buffer_srv_desc){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 64}, &view);
 *     kiln_ps_set_shader_resources(ctx, 0, 1, &view);
 *     // in the pixel shader: light k of each pixel
 *     int32_t x[16], zero[16] = {0};   // x[i] = k
 *     float rgba[64];
 *     kiln_ps_load(args, 0, x, zero, zero, rgba);
 */
typedef struct kiln_buffer_srv_desc {
    kiln_format format;
    uint32_t first_element;  /* in elements of `format` */
    uint32_t num_elements;   /* at least 1 */
} kiln_buffer_srv_desc;

KILN_API kiln_result kiln_create_buffer_srv(kiln_device *device, kiln_buffer buffer,
                                            const kiln_buffer_srv_desc *desc, kiln_srv *out_view);
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
 * (textures; 0 means tightly packed); depth_pitch: bytes between the
 * depth slices of a 3D box (0: tight, row_pitch x rows; smaller is
 * DEPTH_PITCH_INVALID), ignored for boxes one slice deep.
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
 * (dst_x, dst_y, dst_z) of a destination subresource. Same format and
 * texture kind (COPY_KIND_MISMATCH: 1D to 1D, 2D and cubes to 2D and
 * cubes, 3D to 3D); buffers copy to buffers (x in bytes). dst_z and the
 * box's front/back are depth slices of 3D textures, else dst_z is 0 and
 * the box one slice deep. Depth-stencil resources copy
 * whole subresources only. Within one subresource the regions must not
 * overlap. */
KILN_API kiln_result kiln_copy_subresource_region(kiln_context *ctx, kiln_resource dst,
                                                  uint32_t dst_subresource, uint32_t dst_x,
                                                  uint32_t dst_y, uint32_t dst_z,
                                                  kiln_resource src, uint32_t src_subresource,
                                                  const kiln_box *src_box);

/* Resolves a 4x multisampled subresource into a single-sample one of the
 * same size (D3D10's ResolveSubresource): each pixel is the average of its
 * four samples, each read as float by the format's rules (sRGB formats in
 * linear), summed in sample order, multiplied by 0.25 and converted back
 * as a render-target write would. `format` is the resources' format (or
 * UNKNOWN for it); both must have it, and integer and depth formats are
 * refused (RESOLVE_INVALID), as D3D10 does. The destination is DEFAULT. */
KILN_API kiln_result kiln_resolve_subresource(kiln_context *ctx, kiln_resource dst,
                                              uint32_t dst_subresource, kiln_resource src,
                                              uint32_t src_subresource, kiln_format format);

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
    uint32_t depth_pitch; /* 3D textures: bytes between depth slices;
                             otherwise bytes of the whole subresource */
} kiln_mapped_subresource;

/* Maps a subresource for the CPU. Waits only for queued commands that
 * conflict with this access to this resource (READ: earlier writers; WRITE:
 * earlier readers and writers). Until Unmap, commands queued later that
 * conflict with the map wait (after a READ map, later writers; after a
 * WRITE map, every later use). Several subresources of one texture may be
 * mapped at once, through the context and on the thread of the first, if
 * all maps are reads or the first map was a write (else
 * KILN_E_INVALID_CALL, MAP_ACCESS_CONFLICT), and no command queued in
 * between conflicts with them (else
 * KILN_E_WOULD_DEADLOCK: locks are per resource).
 *
 * A map belongs to the thread that made it until Unmap. A call that would
 * wait (for a command slot, transfer space, a Map, finish) for work that
 * only an Unmap can let run returns KILN_E_WOULD_DEADLOCK (log id
 * WOULD_DEADLOCK) instead of waiting when every such map is this thread's,
 * through any context, or its context's: nothing else could ever unmap
 * it. Only a map made by another thread through another context is
 * waited for. */
KILN_API kiln_result kiln_map(kiln_context *ctx, kiln_resource resource, uint32_t subresource,
                              kiln_map_type type, uint32_t map_flags,
                              kiln_mapped_subresource *out_mapped);
KILN_API kiln_result kiln_unmap(kiln_context *ctx, kiln_resource resource, uint32_t subresource);

/* Ends any batch being gathered so queued work can start. Never waits.
 * On an ASYNC device a context gathers draws into scenes, and small
 * copies, updates and clears (under 64 KiB each) into batches of 16 that
 * reach the worker threads together; anything that must follow them (Map,
 * finish, fences and signals, queries, server waits, a full command or
 * transfer ring) hands them over first, and so does this call. A context
 * whose thread goes on with other work and no such call may leave up to
 * 15 small commands unstarted until then. */
KILN_API kiln_result kiln_flush(kiln_context *ctx);

/* Blocks until every command this context queued has completed. Returns
 * KILN_E_WOULD_DEADLOCK if a resource this thread keeps mapped blocks some
 * of them (see kiln_map). */
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
 * it. The immediate context cannot be destroyed (CONTEXT_IMMEDIATE), nor a
 * context a swapchain renders through (KILN_E_INVALID_CALL,
 * CONTEXT_IN_USE: destroy the swapchain first). If its queued work waits
 * for a resource this thread keeps mapped through another context, the
 * work could never complete: KILN_E_WOULD_DEADLOCK (WOULD_DEADLOCK), and
 * the context stays, its own maps released. */
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
 * (the device was destroyed while waiting; the call then touches nothing).
 * KILN_E_WOULD_DEADLOCK (WOULD_DEADLOCK) when every point still pending is
 * on a context's own timeline and the work that would reach them waits for
 * a resource the calling thread keeps mapped (kiln_map), with nothing else
 * left that could let it run: no command ready or running, no server wait
 * pending, no map of another thread. Points on application timelines are
 * always waited for (any thread may signal them). */
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
/* Server wait on a token from any context of the same device. A token
 * whose value its context never handed out is refused (KILN_E_INVALID_ARG,
 * SYNC_TOKEN_INVALID), here, in kiln_wait_sync_token, and by
 * kiln_create_fence on a context's own timeline: nothing but that
 * context's later tokens would ever reach it. */
KILN_API kiln_result kiln_context_wait_sync_token(kiln_context *ctx, kiln_sync_token token);
/* Client wait on a token (see kiln_fence_wait for the results). */
KILN_API kiln_result kiln_wait_sync_token(kiln_device *device, kiln_sync_token token,
                                          uint64_t timeout_ns);

/* ---------------------------------------------------------------------------
 * Queries and predication (D3D10 style)
 *
 * A query measures the commands between its begin and its end (or, for
 * EVENT and TIMESTAMP, marks one point of the stream). Its result is
 * computed as the commands execute, in stream order, and read back with
 * kiln_query_get_data. Types and the data each returns:
 *
 *   EVENT                 uint32_t: 1 once every command before its end
 *                         completed. No begin.
 *   OCCLUSION             uint64_t: samples (pixels) that passed the depth
 *                         and stencil tests and were not discarded by the
 *                         pixel shader, whether or not color was written.
 *   TIMESTAMP             uint64_t: nanoseconds of a CPU monotonic clock,
 *                         read when every command before its end has
 *                         completed. No begin.
 *   TIMESTAMP_DISJOINT    kiln_query_data_timestamp_disjoint: frequency
 *                         1e9 (timestamps are nanoseconds), disjoint 0.
 *   PIPELINE_STATISTICS   kiln_query_data_pipeline_statistics (below).
 *   OCCLUSION_PREDICATE   uint32_t: 1 if any sample passed (as OCCLUSION).
 *   SO_STATISTICS         kiln_query_data_so_statistics: primitives the
 *                         draws wrote to the stream-output buffers, and
 *                         the primitives they would have written had the
 *                         buffers been large enough (written included).
 *   SO_OVERFLOW_PREDICATE uint32_t: 1 if a primitive was dropped because a
 *                         stream-output buffer was full (storage needed
 *                         exceeds written).
 *
 * OCCLUSION, OCCLUSION_PREDICATE and PIPELINE_STATISTICS count draws; on
 * the osmesa backend creating them is refused (KILN_E_UNSUPPORTED,
 * BACKEND_FEATURE). The SO types count stream output; the osmesa backend
 * has none and refuses them (KILN_E_UNSUPPORTED, QUERY_NO_STREAM_OUTPUT). Counts are exact: the same for any worker count and
 * for ASYNC and SERIAL devices. Draws are gathered into scenes; begin, end
 * and kiln_set_predication close the scene being gathered, so a draw
 * counts into exactly the queries active when it was called (the cost: a
 * scene per begin/end pair, like any other synchronizing call).
 *
 * Rules (D3D10's; every misuse returns its code and logs once): begin on a
 * query already active is KILN_E_INVALID_CALL (QUERY_ACTIVE); end without
 * a begin on this context, for the types that need one, likewise
 * (QUERY_NOT_ACTIVE); EVENT and TIMESTAMP have no begin (QUERY_TYPE);
 * begin and end are refused on a query a context uses as its predicate
 * (QUERY_IS_PREDICATE); at most KILN_MAX_ACTIVE_QUERIES queries
 * are active on one context at once (KILN_E_UNSUPPORTED,
 * QUERY_TOO_MANY_ACTIVE). A query may be destroyed while active or set as
 * a predicate: the context keeps what it needs.
 * ------------------------------------------------------------------------- */

typedef struct kiln_query { uint32_t id; } kiln_query;

/* D3D10_QUERY's values and order. */
typedef enum kiln_query_type {
    KILN_QUERY_EVENT = 0,
    KILN_QUERY_OCCLUSION,
    KILN_QUERY_TIMESTAMP,
    KILN_QUERY_TIMESTAMP_DISJOINT,
    KILN_QUERY_PIPELINE_STATISTICS,
    KILN_QUERY_OCCLUSION_PREDICATE,
    KILN_QUERY_SO_STATISTICS,          /* soft backend only */
    KILN_QUERY_SO_OVERFLOW_PREDICATE,  /* soft backend only */
    KILN_QUERY_TYPE_COUNT
} kiln_query_type;

#define KILN_MAX_ACTIVE_QUERIES 16 /* queries (with a begin) active on one context */

typedef struct kiln_query_data_timestamp_disjoint {
    uint64_t frequency; /* ticks per second of TIMESTAMP: 1000000000 */
    uint32_t disjoint;  /* 1 if the timestamps cannot be compared: always 0
                           (one monotonic clock) */
    uint32_t reserved;
} kiln_query_data_timestamp_disjoint;

/* D3D10_QUERY_DATA_PIPELINE_STATISTICS's layout. What each counts on the
 * soft backend, between begin and end:
 *   ia_vertices     vertices (or indices) the draws read: count x instances
 *   ia_primitives   primitives the topology makes of them: per instance,
 *                   triangles/lines/points of a list or strip of `count`
 *                   (strip cuts in indexed strips included)
 *   vs_invocations  vertices shaded: the vertex shader runs once per vertex
 *                   of a 1,024-primitive segment of a draw, an indexed
 *                   draw's repeated indices within a segment shaded once,
 *                   a strip's vertices shared by two segments twice
 *   gs_invocations  geometry shader calls: one per primitive of a draw
 *                   with a geometry shader that reached the geometry
 *                   stage (as c_invocations below; 0 without one)
 *   gs_primitives   primitives the geometry shader emitted: points, the
 *                   lines of a line strip, the triangles of a triangle
 *                   strip (a strip cut by kiln_gs_cut or ended with fewer
 *                   vertices than a primitive makes none)
 *   c_invocations   primitives that reached clipping: assembled primitives
 *                   not touching a strip cut (with a geometry shader: the
 *                   primitives it emitted), of draws whose viewport,
 *                   scissor and target leave pixels to draw
 *   c_primitives    primitives the clipper output: 0 for one wholly
 *                   outside a clip plane, 1 for one inside every plane, the
 *                   triangles (n - 2 for an n-gon) or the line a clipped
 *                   one became; counted before face culling
 *   ps_invocations  pixels shaded: covered pixels the pixel shader ran for
 *                   (after early depth/stencil rejection when the shader
 *                   cannot discard); the helper pixels of a 2x2 quad are
 *                   not counted */
typedef struct kiln_query_data_pipeline_statistics {
    uint64_t ia_vertices;
    uint64_t ia_primitives;
    uint64_t vs_invocations;
    uint64_t gs_invocations;
    uint64_t gs_primitives;
    uint64_t c_invocations;
    uint64_t c_primitives;
    uint64_t ps_invocations;
} kiln_query_data_pipeline_statistics;

/* D3D10_QUERY_DATA_SO_STATISTICS's layout. A primitive is a point, line
 * or triangle of the stream (strips count their primitives). */
typedef struct kiln_query_data_so_statistics {
    uint64_t primitives_written;
    uint64_t primitives_storage_needed;
} kiln_query_data_so_statistics;

typedef enum kiln_get_data_flags {
    KILN_GET_DATA_DO_NOT_FLUSH = 1u << 0
} kiln_get_data_flags;

/* On the osmesa backend KILN_E_UNSUPPORTED for the SO_* types
 * (QUERY_NO_STREAM_OUTPUT) and the other counting types (BACKEND_FEATURE). */
KILN_API kiln_result kiln_create_query(kiln_device *device, kiln_query_type type,
                                       kiln_query *out_query);
KILN_API kiln_result kiln_destroy_query(kiln_device *device, kiln_query query);
/* Starts counting: draws called after it on this context count into the
 * query (a begin after an end starts a new measurement from zero). */
KILN_API kiln_result kiln_query_begin(kiln_context *ctx, kiln_query query);
/* Ends it: the result covers the commands between begin and here. */
KILN_API kiln_result kiln_query_end(kiln_context *ctx, kiln_query query);
/* The result of the query's last end. KILN_OK with the data (if `data` is
 * not NULL) once it is known; KILN_E_WAS_STILL_DRAWING while the commands
 * it waits for run (flushing the context first unless DO_NOT_FLUSH: with
 * DO_NOT_FLUSH, work gathered but not flushed may never complete until
 * something flushes); KILN_E_COMMAND_FAILED if that work failed (EVENT,
 * TIMESTAMP_DISJOINT). KILN_E_INVALID_CALL (QUERY_NOT_ENDED) before the
 * first end or between a begin and its end. `size` is 0 with data NULL
 * (asks only whether it is known), else exactly the type's data size
 * (DATA_SIZE). */
KILN_API kiln_result kiln_query_get_data(kiln_context *ctx, kiln_query query, void *data,
                                         uint32_t size, uint32_t flags);

/* Predication (D3D10 SetPredication): while a predicate is set, the draws,
 * clears (kiln_clear_rtv, kiln_clear_dsv), copies (kiln_copy_resource,
 * kiln_copy_subresource_region) and kiln_update_subresource this context
 * queues are skipped when the predicate's result equals `value` (1: any
 * sample passed). Everything else (maps, generate_mips, signals, queries'
 * begin and end) is not predicated. The result is the predicate's last
 * end, read when each predicated command executes, in stream order: a
 * predicated command waits for that end's draws, and only predicated
 * commands wait for it. query {0} turns predication off (`value` is then
 * ignored). An SO_OVERFLOW_PREDICATE predicates the same way on its
 * result (1: a stream-output buffer overflowed). The query must be an
 * OCCLUSION_PREDICATE or SO_OVERFLOW_PREDICATE (KILN_E_INVALID_ARG,
 * PREDICATE_TYPE) that was ended and not begun since (KILN_E_INVALID_CALL,
 * PREDICATE_NOT_ISSUED); while it is set, begin and end on it are refused
 * (QUERY_IS_PREDICATE). */
KILN_API kiln_result kiln_set_predication(kiln_context *ctx, kiln_query query, int value);

/* ---------------------------------------------------------------------------
 * Drawing
 *
 * The pipeline is D3D10's: input assembler (layout, vertex and index
 * buffers, topology) -> vertex shader -> geometry shader (optional; soft
 * backend only) -> stream output (optional; soft backend only) ->
 * clipping and viewport -> rasterizer state -> pixel shader ->
 * depth-stencil test -> blending into up to 8 render targets (each with its own blend state).
 *
 * Rasterization follows D3D10: pixel centers at +0.5, vertices snapped to
 * 16.8 fixed point, the top-left fill rule (edges shared by two triangles
 * cover each pixel exactly once), perspective-correct varyings, depth
 * interpolated linearly in screen space, clipping to 0 <= z <= w (unless
 * depth clip is disabled) with a guard band for x and y.
 *
 * Pipeline setters (kiln_ia_*, kiln_vs_*, kiln_ps_*, kiln_rs_*, kiln_om_*)
 * record state in the context; they never queue work. A draw captures the
 * bound state, validates it, and queues. Consecutive draws to the same
 * targets are gathered into one scene whose tiles all workers rasterize,
 * each tile in draw order: the image is the same for any thread count.
 * ------------------------------------------------------------------------- */

#define KILN_MAX_VERTEX_BUFFERS 8
#define KILN_MAX_INPUT_ELEMENTS 8
#define KILN_MAX_VARYINGS 8        /* float4 varyings from VS to PS */
/* Slots per stage, D3D10's counts. A draw captures the slots up to the
 * highest one bound, so binding slot 0 only costs what it did with 8. */
#define KILN_MAX_CONSTANT_BUFFERS 14 /* D3D10_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT */
#define KILN_MAX_SHADER_RESOURCES 128 /* ..._INPUT_RESOURCE_SLOT_COUNT */
#define KILN_MAX_SAMPLERS 16          /* ..._SAMPLER_SLOT_COUNT */
#define KILN_MAX_RENDER_TARGETS 8   /* D3D10's 8, each with its own blend (D3D10.1's independent blend) */
#define KILN_VS_BATCH 64           /* at most this many vertices per VS call */
#define KILN_PS_BLOCK 16           /* pixels per PS call: a 4x4 block */

typedef struct kiln_input_layout { uint32_t id; } kiln_input_layout;
typedef struct kiln_vertex_shader { uint32_t id; } kiln_vertex_shader;
typedef struct kiln_pixel_shader { uint32_t id; } kiln_pixel_shader;
typedef struct kiln_geometry_shader { uint32_t id; } kiln_geometry_shader;
typedef struct kiln_rasterizer_state { uint32_t id; } kiln_rasterizer_state;
typedef struct kiln_depth_stencil_state { uint32_t id; } kiln_depth_stencil_state;
typedef struct kiln_blend_state { uint32_t id; } kiln_blend_state;
typedef struct kiln_sampler { uint32_t id; } kiln_sampler;

/* ---- shaders ----------------------------------------------------------
 *
 * Shaders are C functions. A vertex shader transforms up to KILN_VS_BATCH
 * vertices per call; a pixel shader shades one 4x4 block of pixels per
 * call, in structure-of-arrays form, so that a loop over the 16 pixels
 * vectorizes and texture derivatives exist (each 2x2 quad of the block).
 * Both run on worker threads, concurrently with themselves: they must not
 * keep state between calls except through `user` in a thread-safe way.
 *
 * Worked example: a pixel shader that modulates a texture by a color in
 * varying 0 and texture coordinates in varying 1.
 *
 *     static void ps_textured(const kiln_ps_args *a)
 *     {
 *         float t[4 * KILN_PS_BLOCK];
 *         kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 1, 0), KILN_PS_VARYING(a, 1, 1), t);
 *         for (int c = 0; c < 4; c++)
 *             for (int i = 0; i < KILN_PS_BLOCK; i++)
 *                 KILN_PS_COLOR(a, 0, c)[i] = t[c * KILN_PS_BLOCK + i] * KILN_PS_VARYING(a, 0, c)[i];
 *     }
 *
 * and a vertex shader that passes position (input 0) through:
 *
 *     static void vs_pass(const kiln_vs_args *a)
 *     {
 *         for (uint32_t v = 0; v < a->count; v++)
 *             for (int c = 0; c < 4; c++)
 *                 a->out[v * a->out_stride + c] = a->in[v * a->in_stride + c];
 *     }
 */

typedef struct kiln_vs_args {
    uint32_t count;             /* vertices in this call, 1..KILN_VS_BATCH */
    uint32_t instance_id;       /* the instance (same for the whole call) */
    const uint32_t *vertex_id;  /* per vertex: index value (+ base vertex) */
    /* Inputs: element e of vertex v is in[v * in_stride + 4 * e + 0..3],
     * widened to float4 as D3D10 does (missing y, z: 0; missing w: 1;
     * UNORM formats to [0, 1]). */
    const float *in;
    uint32_t in_stride;
    /* Outputs: out[v * out_stride + 0..3] is the clip-space position
     * (x, y, z, w), then 4 floats per varying. */
    float *out;
    uint32_t out_stride;
    /* Constant buffers bound to the vertex stage (NULL where none). */
    const void *const *cb;
    const uint32_t *cb_size;
    void *user;                 /* the shader desc's user pointer */
    /* Shader resources and samplers bound to the vertex stage
     * (kiln_vs_set_shader_resources / kiln_vs_set_samplers), read through
     * kiln_vs_sample_level, kiln_vs_load and kiln_vs_get_dimensions. */
    const struct kiln_ps_textures *textures;
} kiln_vs_args;

struct kiln_ps_textures; /* one stage's views and samplers (any stage) */

typedef struct kiln_ps_args {
    int32_t x, y;               /* the block's top-left pixel */
    /* Covered pixels: bit i is pixel (x + i % 4, y + i / 4). A shader
     * created with KILN_PS_MAY_DISCARD clears bits to discard pixels.
     * On the soft backend, opaque depth-tested draws are shaded after
     * their tile's visibility is known (hidden surface removal,
     * docs/raster.md): a pixel that a later fragment of the same scene
     * covers and passes is never shaded, the mask holds only the pixels
     * whose fragment stays visible (a block's pixels may come in several
     * calls), and the calls come in tile order, not draw order. A
     * shader's outputs must depend only on its pixel's inputs and quad
     * (derivatives), never on the mask or on side effects through
     * `user`; KILN_HSR=0 in the environment turns this off. */
    uint32_t mask;
    uint32_t front_facing;      /* 1 for front faces, lines and points */
    /* Varying k, component c, at pixel i: varyings[(k * 4 + c) * 16 + i],
     * perspective-correct, for all 16 pixels (covered or not, so that
     * derivatives exist at the edges). Use KILN_PS_VARYING. */
    const float *varyings;
    const float *z;             /* depth of each pixel, [0, 1]; 0s for KILN_PS_NO_Z */
    /* Output: target r, channel c (RGBA), pixel i:
     * color[(r * 4 + c) * 16 + i]. Use KILN_PS_COLOR. */
    float *color;
    const void *const *cb;      /* constant buffers bound to the pixel stage */
    const uint32_t *cb_size;
    const struct kiln_ps_textures *textures; /* for kiln_ps_sample */
    void *user;
    /* SV_PrimitiveID: without a geometry shader, the primitive's index
     * within its draw (per instance: each instance counts from 0); with
     * one, the out_primitive_id it emitted the primitive's first vertex
     * with. The triangles a clipped primitive became share it. In an
     * indexed strip with cut indices the index counts strip positions,
     * the cut ones included (docs/raster.md). */
    uint32_t primitive_id;
} kiln_ps_args;

#define KILN_PS_VARYING(a, k, c) ((a)->varyings + ((k) * 4 + (c)) * KILN_PS_BLOCK)
#define KILN_PS_COLOR(a, r, c) ((a)->color + ((r) * 4 + (c)) * KILN_PS_BLOCK)

/* Samples the shader resource in `srv_slot` with the sampler in
 * `sampler_slot` at (u[i], v[i]) for the 16 pixels of the block, writing
 * rgba[c * 16 + i]. The mip level comes from the derivatives of u and v
 * within each 2x2 quad. Formats read as D3D10 reads them (UNORM to [0, 1],
 * B8G8R8A8 swizzled to RGBA, missing channels 0 with alpha 1). An empty
 * slot reads (0, 0, 0, 0), and so does a typed buffer view with this and
 * every other sampling call (D3D10 samples no buffers; use Load). */
KILN_API void kiln_ps_sample(const kiln_ps_args *args, uint32_t srv_slot, uint32_t sampler_slot,
                             const float *u, const float *v, float *rgba);

/* D3D10's other sampling calls, on the same views and samplers, for the
 * 16 pixels of the block (arrays of 16, one value per pixel; results as
 * kiln_ps_sample writes them, an empty slot reads zeros). The LOD below
 * is the one kiln_ps_sample computes per 2x2 quad, log2 of the longer
 * derivative in texels of the view's first mip, plus the sampler's
 * mip_lod_bias, then clamped to [min_lod, max_lod]; each pixel is then
 * filtered on its own LOD (lod <= 0 magnifies).
 *
 * kiln_ps_sample_level (SampleLevel): lod[i] instead of the derivatives'
 *   LOD (mip_lod_bias and the clamps still apply, as D3D10's sample_l).
 * kiln_ps_sample_bias (SampleBias): kiln_ps_sample's LOD plus bias[i],
 *   limited to D3D10's [-16, 15.99]; a bias of 0 gives kiln_ps_sample's
 *   result exactly.
 * kiln_ps_sample_grad (SampleGrad): the LOD of the given derivatives of u
 *   and v along x and y at each pixel; passing each quad's own
 *   differences (u[i + 1] - u[i], u[i + 4] - u[i] at its top-left pixel)
 *   gives kiln_ps_sample's result exactly.
 *
 * A worked example, a pixel shader that blurs its texture by reading one
 * mip coarser than the derivatives ask for, and shows level 2 where
 * varying 1's x is negative:
 *
 *     static void ps(kiln_ps_args *a)
 *     {
 *         const float *u = KILN_PS_VARYING(a, 0, 0), *v = KILN_PS_VARYING(a, 0, 1);
 *         float bias[16], lod[16], blur[64], fixed[64];
 *         for (int i = 0; i < 16; i++) {
 *             bias[i] = 1.0f;
 *             lod[i] = 2.0f;
 *         }
 *         kiln_ps_sample_bias(a, 0, 0, u, v, bias, blur);
 *         kiln_ps_sample_level(a, 0, 0, u, v, lod, fixed);
 *         for (int c = 0; c < 4; c++)
 *             for (int i = 0; i < 16; i++)
 *                 KILN_PS_COLOR(a, 0, c)[i] = KILN_PS_VARYING(a, 1, 0)[i] < 0.0f
 *                                                  ? fixed[c * 16 + i] : blur[c * 16 + i];
 *     }
 *
 * The GLSL of such a shader (osmesa) uses textureLod, texture's bias
 * argument and textureGrad. */
KILN_API void kiln_ps_sample_level(const kiln_ps_args *args, uint32_t srv_slot,
                                   uint32_t sampler_slot, const float *u, const float *v,
                                   const float *lod, float *rgba);
KILN_API void kiln_ps_sample_bias(const kiln_ps_args *args, uint32_t srv_slot,
                                  uint32_t sampler_slot, const float *u, const float *v,
                                  const float *bias, float *rgba);
KILN_API void kiln_ps_sample_grad(const kiln_ps_args *args, uint32_t srv_slot,
                                  uint32_t sampler_slot, const float *u, const float *v,
                                  const float *dudx, const float *dvdx, const float *dudy,
                                  const float *dvdy, float *rgba);

/* SampleCmp and SampleCmpLevelZero: percentage-closer filtering with the
 * comparison sampler in sampler_slot. Each texel the filters read counts
 * 1 where (ref[i] comparison_func texel) holds and 0 elsewhere (BORDER
 * reads compare against the border color's red), and the weighted sum is
 * the result: out[i], one value per pixel, in [0, 1]. The texel is the
 * view's first channel (R32_FLOAT, R16_UNORM, D32_FLOAT or D16_UNORM are
 * the usual ones); for UNORM formats ref is clamped to [0, 1] first, as
 * D3D10 does. kiln_ps_sample_cmp takes the LOD as kiln_ps_sample does;
 * kiln_ps_sample_cmp_level_zero reads the view's first mip with the
 * magnification filter. A sampler whose comparison_func is DEFAULT, or an
 * empty slot, reads 0. GLSL: texture on a sampler2DShadow (the osmesa
 * backend sets the sampler's compare mode and function).
 *
 *     // shadow: the light-space depth in varying 1's z, the shadow map in slot 1
 *     float lit[16];
 *     kiln_ps_sample_cmp(a, 1, 1, KILN_PS_VARYING(a, 1, 0), KILN_PS_VARYING(a, 1, 1),
 *                        KILN_PS_VARYING(a, 1, 2), lit);   // LESS_EQUAL sampler
 */
KILN_API void kiln_ps_sample_cmp(const kiln_ps_args *args, uint32_t srv_slot, uint32_t sampler_slot,
                                 const float *u, const float *v, const float *ref, float *out);
KILN_API void kiln_ps_sample_cmp_level_zero(const kiln_ps_args *args, uint32_t srv_slot,
                                            uint32_t sampler_slot, const float *u, const float *v,
                                            const float *ref, float *out);

/* Load (D3D10's ld): texel (x[i], y[i]) of mip mip[i] of the view (0 is
 * the view's first mip) for each of the 16 pixels, unfiltered, converted
 * as kiln_ps_sample converts texels; a coordinate or mip out of range
 * reads (0, 0, 0, 0), as does an empty slot. No sampler is involved.
 * GLSL: texelFetch. On a typed buffer view (kiln_create_buffer_srv):
 * element x[i] of the view (y and mip ignored), zeros outside it.
 *
 *     int32_t x[16], y[16], mip[16];
 *     for (int i = 0; i < 16; i++) {
 *         x[i] = a->x + i % 4;      // the pixel's own texel: a 1:1 copy
 *         y[i] = a->y + i / 4;
 *         mip[i] = 0;
 *     }
 *     kiln_ps_load(a, 0, x, y, mip, KILN_PS_COLOR(a, 0, 0));
 */
KILN_API void kiln_ps_load(const kiln_ps_args *args, uint32_t srv_slot, const int32_t *x,
                           const int32_t *y, const int32_t *mip, float *rgba);

/* GetDimensions: the width and height of mip `mip` of the view in
 * srv_slot (0 is the view's first mip) and the view's number of mips; 0
 * for an empty slot, and width and height 0 for a mip past the view's.
 * A typed buffer view: its element count, height 1, 1 level, any mip.
 * Any pointer may be NULL. GLSL: textureSize, textureQueryLevels. */
KILN_API void kiln_ps_get_dimensions(const kiln_ps_args *args, uint32_t srv_slot, uint32_t mip,
                                     uint32_t *width, uint32_t *height, uint32_t *levels);

/* ---- sampling every texture kind: three coordinates ----
 *
 * The _uvw calls take three coordinate arrays (16 values each) whose
 * meaning follows the view's dimension, as HLSL's float4 coordinate does:
 *
 *   view dimension   u            v             w
 *   TEXTURE1D        u            -             -
 *   TEXTURE1DARRAY   u            array index   -
 *   TEXTURE2D        u            v             -
 *   TEXTURE2DARRAY   u            v             array index
 *   TEXTURE3D        u            v             w
 *   TEXTURECUBE      direction x  direction y   direction z
 *
 * An array index is rounded to the nearest integer (halves up) and
 * clamped to the view's slices, as D3D10 does; it takes no part in the
 * LOD. The two-coordinate calls above read any view as these do with w
 * = 0 (a 1D array's index is then v; a 2D array's first slice, as
 * before). The LOD is D3D10's: log2 of the longer of the x and y
 * derivatives of the coordinates in texels of the view's first mip (1D:
 * u alone; 3D: the 3-vector of u, v and w scaled by width, height and
 * depth), plus the biases, then clamped as for 2D.
 *
 * Cubes (D3D10's rules): the face is the direction's major axis, the
 * component of largest magnitude, and its sign; ties go to z, then y,
 * then x (|z| >= |x| and |z| >= |y| picks a z face; else |y| >= |x| a y
 * face). With that component m and the others, the face coordinates are
 *
 *   face   sc    tc         face   sc    tc
 *   +X     -z    -y         -X     +z    -y
 *   +Y     +x    +z         -Y     +x    -z
 *   +Z     +x    -y         -Z     -x    -y
 *
 * s = (sc / |m| + 1) / 2, t = (tc / |m| + 1) / 2, sampled as a 2D
 * texture of that face (array slice 0..5). The sampler's address modes
 * are ignored: s and t clamp to the face, so filtering never crosses to
 * another face (no seamless filtering, which D3D10.0 does not require;
 * bilinear reads at a face edge repeat the edge texel). The LOD of a 2x2
 * quad comes from the derivatives of s and t on its top-left pixel's
 * face (every pixel of the quad projected onto that face), times the face
 * size. A zero direction reads face +Z at its centre.
 *
 * Worked example: an environment lookup along varying 1's xyz (a
 * TEXTURECUBE view in slot 0), and a 3D noise texture in slot 1 read
 * with WRAP at varying 2's xyz, multiplied:
 *
 *     static void ps_env(kiln_ps_args *a)
 *     {
 *         float env[64], noise[64];
 *         kiln_ps_sample_uvw(a, 0, 0, KILN_PS_VARYING(a, 1, 0), KILN_PS_VARYING(a, 1, 1),
 *                            KILN_PS_VARYING(a, 1, 2), env);
 *         kiln_ps_sample_uvw(a, 1, 1, KILN_PS_VARYING(a, 2, 0), KILN_PS_VARYING(a, 2, 1),
 *                            KILN_PS_VARYING(a, 2, 2), noise);
 *         for (int c = 0; c < 4; c++)
 *             for (int i = 0; i < 16; i++)
 *                 KILN_PS_COLOR(a, 0, c)[i] = env[c * 16 + i] * noise[c * 16 + i];
 *     }
 *
 * _level, _bias and _grad are SampleLevel, SampleBias and SampleGrad on
 * three coordinates: grad takes ddx and ddy as 3 x 16 floats each,
 * ddx[k * 16 + i] the x derivative of coordinate k (u, v, w) at pixel i
 * (for a cube, of the direction: projected onto pixel i's face). The cmp
 * calls are SampleCmp and SampleCmpLevelZero on three coordinates. These
 * texture kinds take kiln's general sampling path (no SIMD kernels). */
KILN_API void kiln_ps_sample_uvw(const kiln_ps_args *args, uint32_t srv_slot, uint32_t sampler_slot,
                                 const float *u, const float *v, const float *w, float *rgba);
KILN_API void kiln_ps_sample_uvw_level(const kiln_ps_args *args, uint32_t srv_slot,
                                       uint32_t sampler_slot, const float *u, const float *v,
                                       const float *w, const float *lod, float *rgba);
KILN_API void kiln_ps_sample_uvw_bias(const kiln_ps_args *args, uint32_t srv_slot,
                                      uint32_t sampler_slot, const float *u, const float *v,
                                      const float *w, const float *bias, float *rgba);
KILN_API void kiln_ps_sample_uvw_grad(const kiln_ps_args *args, uint32_t srv_slot,
                                      uint32_t sampler_slot, const float *u, const float *v,
                                      const float *w, const float *ddx, const float *ddy,
                                      float *rgba);
KILN_API void kiln_ps_sample_cmp_uvw(const kiln_ps_args *args, uint32_t srv_slot,
                                     uint32_t sampler_slot, const float *u, const float *v,
                                     const float *w, const float *ref, float *out);
KILN_API void kiln_ps_sample_cmp_uvw_level_zero(const kiln_ps_args *args, uint32_t srv_slot,
                                                uint32_t sampler_slot, const float *u,
                                                const float *v, const float *w, const float *ref,
                                                float *out);

/* Load on three integer coordinates: (x) for TEXTURE1D, (x, array index
 * y) for TEXTURE1DARRAY, (x, y) for TEXTURE2D, (x, y, array index z) for
 * TEXTURE2DARRAY, (x, y, z) for TEXTURE3D; out of range reads zeros, and
 * so does a TEXTURECUBE view (D3D10 has no Load on cubes). kiln_ps_load
 * is this call with z = 0. */
KILN_API void kiln_ps_load_uvw(const kiln_ps_args *args, uint32_t srv_slot, const int32_t *x,
                               const int32_t *y, const int32_t *z, const int32_t *mip,
                               float *rgba);

/* GetDimensions of every kind: width, height (1 for 1D kinds), `depth`
 * (3D: the mip's depth; arrays: the view's slices; cubes: 6; else 1) and
 * the view's mips. Any pointer may be NULL; an empty slot gives zeros. */
KILN_API void kiln_ps_get_dimensions_uvw(const kiln_ps_args *args, uint32_t srv_slot, uint32_t mip,
                                         uint32_t *width, uint32_t *height, uint32_t *depth,
                                         uint32_t *levels);

/* Texture reads from a vertex shader (D3D10 lets the vertex stage read
 * textures; there are no derivatives there, so the LOD is explicit).
 * Each call reads `n` values (1..KILN_VS_BATCH; usually args->count, one
 * per vertex) from the view in srv_slot and the sampler in sampler_slot
 * bound with kiln_vs_set_shader_resources / kiln_vs_set_samplers, and
 * writes value i's channel c to rgba[c * n + i]. They are the pixel
 * stage's calls on the same machinery: value i gives exactly the bits
 * kiln_ps_sample_level / kiln_ps_load give a pixel with those inputs,
 * and the same empty-slot, out-of-range and format rules apply.
 *
 *   kiln_vs_sample_level (SampleLevel): u[i], v[i] at LOD lod[i] (+ the
 *     sampler's mip_lod_bias, clamped to its min_lod / max_lod).
 *   kiln_vs_load (Load): texel (x[i], y[i]) of mip mip[i], unfiltered.
 *   kiln_vs_get_dimensions (GetDimensions): as kiln_ps_get_dimensions.
 *
 * A worked example, a displacement map: each vertex moves along z by the
 * red channel of texture 0 at its texcoord (input 1), mip 0:
 *
 *     static void vs_displace(const kiln_vs_args *a)
 *     {
 *         float u[KILN_VS_BATCH], v[KILN_VS_BATCH], lod[KILN_VS_BATCH];
 *         float h[4 * KILN_VS_BATCH];
 *         for (uint32_t i = 0; i < a->count; i++) {
 *             u[i] = a->in[i * a->in_stride + 4];
 *             v[i] = a->in[i * a->in_stride + 5];
 *             lod[i] = 0.0f;
 *         }
 *         kiln_vs_sample_level(a, 0, 0, a->count, u, v, lod, h);
 *         for (uint32_t i = 0; i < a->count; i++) {
 *             float *o = a->out + i * a->out_stride;
 *             for (int c = 0; c < 4; c++)
 *                 o[c] = a->in[i * a->in_stride + c];
 *             o[2] += h[i];    (channel 0 of value i)
 *         }
 *     }
 *
 * The osmesa backend refuses vertex-stage views and samplers at bind
 * time (KILN_E_UNSUPPORTED, BACKEND_FEATURE). */
KILN_API void kiln_vs_sample_level(const kiln_vs_args *args, uint32_t srv_slot, uint32_t sampler_slot,
                                   uint32_t n, const float *u, const float *v, const float *lod,
                                   float *rgba);
KILN_API void kiln_vs_load(const kiln_vs_args *args, uint32_t srv_slot, uint32_t n, const int32_t *x,
                           const int32_t *y, const int32_t *mip, float *rgba);
KILN_API void kiln_vs_get_dimensions(const kiln_vs_args *args, uint32_t srv_slot, uint32_t mip,
                                     uint32_t *width, uint32_t *height, uint32_t *levels);

typedef void (*kiln_vs_fn)(const kiln_vs_args *args);
typedef void (*kiln_ps_fn)(kiln_ps_args *args);

typedef struct kiln_vertex_shader_desc {
    kiln_vs_fn fn;
    uint32_t num_inputs;        /* input elements read, 1..KILN_MAX_INPUT_ELEMENTS */
    uint32_t num_varyings;      /* float4 outputs after position, 0..KILN_MAX_VARYINGS */
    /* GLSL for the osmesa backend, or NULL (refused there at creation with
     * KILN_E_UNSUPPORTED, log id SHADER_NO_GLSL). The vertex shader is the
     * text up to a line "//--- fragment" (all of it without one); the k-th
     * `attribute` (or global `in`) is input element k; vertex-stage
     * constant buffer N is `uniform vec4 u_cb<N>[n]`. The string must stay
     * valid while the shader exists. Compile and link errors are logged at
     * the first draw (GL_SHADER_FAILED, with GL's info log); those draws
     * fail. The built-in effects carry theirs. */
    const char *glsl;
    void *user;
} kiln_vertex_shader_desc;

typedef enum kiln_ps_flags {
    KILN_PS_MAY_DISCARD = 1u << 0, /* the shader may clear mask bits: depth
                                      is then tested after shading */
    /* The shader never reads kiln_ps_args.z (D3D10: an input signature
     * without SV_Position's z). The soft backend then leaves the pixels'
     * depth uncomputed where no depth or stencil test needs it (a draw
     * without depth: a 2D pass, a post-process), and a->z points at 16
     * zeros whether or not a test runs; the test itself still uses the
     * true depth. A shader that reads a->z anyway sees those zeros. */
    KILN_PS_NO_Z = 1u << 1
} kiln_ps_flags;

typedef struct kiln_pixel_shader_desc {
    kiln_ps_fn fn;
    uint32_t num_varyings;      /* varyings read, 0..KILN_MAX_VARYINGS */
    uint32_t num_outputs;       /* render targets written, 0..4 */
    uint32_t flags;             /* kiln_ps_flags */
    /* GLSL for the osmesa backend, or NULL (as for the vertex shader): the
     * text after a line "//--- fragment" (all of it without one), so one
     * string can serve both descs. Pixel-stage constant buffer N is
     * `uniform vec4 u_ps_cb<N>[n]`, shader resource N `uniform sampler2D
     * u_tex<N>` sampled with sampler N, and the k-th global `out` of a
     * #version 130+ shader is render target k. */
    const char *glsl;
    void *user;
    /* The varying components the shader reads, as D3D10's input signature
     * masks them: bit 4 * k + c for component c (x, y, z, w) of varying k,
     * k below num_varyings; 0 means all of them. Only these are
     * interpolated, and the others read 0 (the soft backend: a shader that
     * reads two components of a float4 saves half its interpolation; the
     * osmesa backend interpolates what the GLSL reads). A bit of a varying
     * at or past num_varyings: KILN_E_INVALID_ARG, log id SHADER_DESC. */
    uint32_t read_mask;
} kiln_pixel_shader_desc;

KILN_API kiln_result kiln_create_vertex_shader(kiln_device *device, const kiln_vertex_shader_desc *desc,
                                               kiln_vertex_shader *out_shader);
KILN_API kiln_result kiln_create_pixel_shader(kiln_device *device, const kiln_pixel_shader_desc *desc,
                                              kiln_pixel_shader *out_shader);
KILN_API kiln_result kiln_destroy_vertex_shader(kiln_device *device, kiln_vertex_shader shader);
KILN_API kiln_result kiln_destroy_pixel_shader(kiln_device *device, kiln_pixel_shader shader);

/* ---- geometry shader ----
 *
 * D3D10's geometry stage, as a C function: it runs once per input
 * primitive (after the vertex shader), reads the primitive's shaded
 * vertices and emits vertices of an output strip with kiln_gs_emit,
 * restarting the strip with kiln_gs_cut. Emitted primitives continue down
 * the pipeline in input primitive order, then emission order, whatever the
 * number of workers: the image is the same for any thread count. Like the
 * other shaders it runs on worker threads, concurrently with itself.
 *
 * Worked example: point sprites, a quad of half-size s (varying 0's w
 * component) around each point, as a 4-vertex triangle strip:
 *
 *     static void gs_sprite(kiln_gs_args *a)
 *     {
 *         const float *p = a->in;  // position, then varying 0
 *         float s = p[7], v[8];
 *         for (int k = 0; k < 4; k++) {
 *             v[0] = p[0] + (k & 1 ? s : -s) * p[3];
 *             v[1] = p[1] + (k & 2 ? -s : s) * p[3];
 *             v[2] = p[2];
 *             v[3] = p[3];
 *             v[4] = (float)(k & 1); v[5] = (float)(k >> 1); v[6] = 0; v[7] = 1;
 *             kiln_gs_emit(a, v);
 *         }
 *     }
 *
 * with input KILN_GS_INPUT_POINT, output KILN_GS_OUTPUT_TRIANGLE_STRIP,
 * max_vertices 4, num_varyings 1. Layered rendering: a shader declaring
 * KILN_GS_WRITES_RT_ARRAY_INDEX picks each primitive's slice of the bound
 * array views (out_rt_array_index). Stream output: see
 * kiln_create_geometry_shader_with_so below. Not there: constant buffers
 * and shader resources for the geometry stage (the desc's `user` carries
 * parameters). The osmesa backend has no geometry stage: it refuses
 * creating a geometry shader and adjacency draws (KILN_E_UNSUPPORTED,
 * BACKEND_FEATURE). */

typedef enum kiln_gs_input {
    KILN_GS_INPUT_UNDEFINED = 0,  /* refused */
    KILN_GS_INPUT_POINT,          /* 1 vertex: POINT_LIST */
    KILN_GS_INPUT_LINE,           /* 2: LINE_LIST, LINE_STRIP */
    KILN_GS_INPUT_TRIANGLE,       /* 3: TRIANGLE_LIST, TRIANGLE_STRIP */
    KILN_GS_INPUT_LINE_ADJ,       /* 4: LINE_LIST_ADJ, LINE_STRIP_ADJ */
    KILN_GS_INPUT_TRIANGLE_ADJ    /* 6: TRIANGLE_LIST_ADJ, TRIANGLE_STRIP_ADJ */
} kiln_gs_input;

typedef enum kiln_gs_output {
    KILN_GS_OUTPUT_UNDEFINED = 0, /* refused */
    KILN_GS_OUTPUT_POINT_LIST,
    KILN_GS_OUTPUT_LINE_STRIP,
    KILN_GS_OUTPUT_TRIANGLE_STRIP
} kiln_gs_output;

/* D3D10: max_vertices x output scalars per vertex (4 for the position, 4
 * per varying) is at most this. */
#define KILN_GS_MAX_OUTPUT_SCALARS 1024

typedef enum kiln_gs_flags {
    /* The shader writes out_rt_array_index (SV_RenderTargetArrayIndex):
     * layered rendering into the slices of array views. */
    KILN_GS_WRITES_RT_ARRAY_INDEX = 1u << 0
} kiln_gs_flags;

struct kiln_gs_stream;

typedef struct kiln_gs_args {
    /* SV_PrimitiveID: the input primitive's index within its draw, per
     * instance (each instance counts from 0, as D3D10 defines; in an
     * indexed strip with cut indices, strip positions, cut ones included). */
    uint32_t primitive_id;
    uint32_t instance_id;
    /* Input vertices: 1, 2, 3, 4 or 6 by the input primitive, in D3D10's
     * order (adjacency: LINE_ADJ 0 and 3 are adjacent, 1-2 the line;
     * TRIANGLE_ADJ 0, 2, 4 the triangle, 1, 3, 5 adjacent). Vertex v is
     * in[v * in_stride + 0..3], the clip-space position, then 4 floats per
     * varying the vertex shader wrote. */
    uint32_t num_vertices;
    const float *in;
    uint32_t in_stride;
    void *user;                 /* the desc's user pointer */
    /* SV_PrimitiveID for the pixel shader: kiln_gs_emit records it with
     * each vertex; a primitive takes its first vertex's. Starts as
     * primitive_id. */
    uint32_t out_primitive_id;
    /* SV_RenderTargetArrayIndex, with KILN_GS_WRITES_RT_ARRAY_INDEX (else
     * ignored: slice 0): recorded with each vertex like out_primitive_id;
     * the primitive draws into that slice of every bound render-target
     * and depth-stencil view (views made with array_size > 1), counted
     * from the view's first_array_slice. An index past the fewest slices
     * of the bound views draws into slice 0. Starts at 0. */
    uint32_t out_rt_array_index;
    struct kiln_gs_stream *stream; /* the library's: for emit and cut */
    /* Shader resources and samplers bound to the geometry stage
     * (kiln_gs_set_shader_resources / kiln_gs_set_samplers), read through
     * kiln_gs_sample_level, kiln_gs_load and kiln_gs_get_dimensions. */
    const struct kiln_ps_textures *textures;
} kiln_gs_args;

/* The vertex stage's texture reads (kiln_vs_sample_level, kiln_vs_load,
 * kiln_vs_get_dimensions) from a geometry shader: the same calls on the
 * geometry stage's views and samplers, `n` values each (any number; a
 * primitive's vertices, say), value i's channel c in rgba[c * n + i]. */
KILN_API void kiln_gs_sample_level(const kiln_gs_args *args, uint32_t srv_slot, uint32_t sampler_slot,
                                   uint32_t n, const float *u, const float *v, const float *lod,
                                   float *rgba);
KILN_API void kiln_gs_load(const kiln_gs_args *args, uint32_t srv_slot, uint32_t n, const int32_t *x,
                           const int32_t *y, const int32_t *mip, float *rgba);
KILN_API void kiln_gs_get_dimensions(const kiln_gs_args *args, uint32_t srv_slot, uint32_t mip,
                                     uint32_t *width, uint32_t *height, uint32_t *levels);

typedef void (*kiln_gs_fn)(kiln_gs_args *args);

/* Appends a vertex to the output strip: the clip-space position, then 4
 * floats per output varying (4 + 4 * num_varyings floats). Vertices past
 * the desc's max_vertices are dropped, as in D3D10. */
KILN_API void kiln_gs_emit(kiln_gs_args *args, const float *vertex);
/* Ends the current strip: the next vertex starts a new one (RestartStrip).
 * A strip with too few vertices for a primitive makes none. */
KILN_API void kiln_gs_cut(kiln_gs_args *args);

typedef struct kiln_geometry_shader_desc {
    kiln_gs_fn fn;
    kiln_gs_input input;
    kiln_gs_output output;
    uint32_t max_vertices;      /* 1..; x (4 + 4 * num_varyings) <= 1024
                                   (GS_OUTPUT_LIMIT) */
    uint32_t num_varyings;      /* float4 outputs after position, 0..KILN_MAX_VARYINGS */
    uint32_t flags;             /* kiln_gs_flags */
    void *user;
} kiln_geometry_shader_desc;

/* KILN_E_INVALID_ARG (SHADER_DESC) for a NULL fn, enums out of range or
 * undefined, max_vertices 0, varyings out of range or unknown flags;
 * (GS_OUTPUT_LIMIT) past D3D10's output limit; on the osmesa backend
 * KILN_E_UNSUPPORTED (BACKEND_FEATURE). */
KILN_API kiln_result kiln_create_geometry_shader(kiln_device *device, const kiln_geometry_shader_desc *desc,
                                                 kiln_geometry_shader *out_shader);
KILN_API kiln_result kiln_destroy_geometry_shader(kiln_device *device, kiln_geometry_shader shader);

/* ---- stream output ----
 *
 * D3D10's stream output: the primitives leaving the geometry stage are
 * also written, vertex by vertex, into up to 4 buffers bound with
 * kiln_so_set_targets (created with KILN_BIND_STREAM_OUTPUT). Strips
 * become lists: each point, line or triangle is written whole, in input
 * primitive order then emission order, whatever the worker count (a
 * strip's odd triangles with their first two vertices swapped, the
 * winding kept, as they are rasterized). What each vertex writes is
 * declared when the geometry shader is created: for each element, a
 * register (0 the position, 1 + k varying k), components and the output
 * buffer (slot) it goes to.
 *
 * As in D3D10 (CreateGeometryShaderWithStreamOutput) the shader may be a
 * pass-through: with `gs` NULL, the object streams out the vertex
 * shader's output, each primitive of the draw's topology (adjacency
 * topologies still need a geometry shader function).
 *
 * Overflow (D3D10): a primitive that does not fit in every bound buffer
 * is written to none; the ones after it are dropped too; the
 * SO_STATISTICS query's storage-needed count keeps counting them, and an
 * SO_OVERFLOW_PREDICATE turns 1.
 *
 * Rasterization may be off: a draw with no pixel shader bound is valid
 * when the bound geometry shader streams out and depth and stencil are
 * disabled (or no depth-stencil view is bound); it writes the buffers and
 * does no raster work. With depth or stencil on it also draws depth only
 * (see kiln_ps_set_shader). Draws stream out whether or not render
 * targets are bound and whatever the viewport.
 *
 * Dependencies: a draw writes the buffers bound as targets, so a later
 * draw, copy or Map that reads one waits for it, and nothing else does.
 * Targets are DEFAULT buffers, which are not mapped: the CPU reads what
 * was written through a copy into a STAGING buffer (the copy waits).
 * The osmesa backend has no stream output: it refuses creating such a
 * shader, binding a target, draw_auto and the SO queries
 * (KILN_E_UNSUPPORTED, BACKEND_FEATURE / QUERY_NO_STREAM_OUTPUT). */

#define KILN_SO_BUFFER_SLOTS 4     /* D3D10_SO_BUFFER_SLOT_COUNT */
#define KILN_SO_MAX_ELEMENTS 64    /* D3D10_SO_SINGLE_BUFFER_COMPONENT_LIMIT */
#define KILN_SO_APPEND 0xffffffffu /* an offset: where the last write ended */

typedef struct kiln_so_element {
    uint32_t reg;             /* 0: the position; 1 + k: varying k */
    uint32_t start_component; /* 0..3 (x, y, z, w) */
    uint32_t component_count; /* 1..4, start + count <= 4 */
    uint32_t slot;            /* output buffer, 0..3 */
} kiln_so_element;

/* D3D10's rules: 1..64 elements, at most 64 components in all; with one
 * buffer slot used, elements are written side by side and `stride` (bytes,
 * 0: the elements' size) may leave room after them (a multiple of 4, at
 * least their size, at most 2048); with several slots each slot holds
 * exactly one element (D3D10_SO_MULTIPLE_BUFFER_ELEMENTS_PER_BUFFER), its
 * stride is the element's size, and `stride` must be 0. */
typedef struct kiln_so_desc {
    const kiln_so_element *elements; /* copied at creation */
    uint32_t num_elements;
    uint32_t stride;
} kiln_so_desc;

/* A geometry shader that streams out: `gs` as for
 * kiln_create_geometry_shader, or NULL for a pass-through of the vertex
 * shader's output. KILN_E_INVALID_ARG (SHADER_DESC) for a bad `gs`
 * (GS_OUTPUT_LIMIT as above); (SO_DECL) for a declaration breaking the
 * rules above or naming a register past the geometry shader's varyings
 * (a pass-through's are checked against the vertex shader at each draw:
 * DRAW_SO_MISMATCH); on the osmesa backend KILN_E_UNSUPPORTED
 * (BACKEND_FEATURE). Destroyed with kiln_destroy_geometry_shader. */
KILN_API kiln_result kiln_create_geometry_shader_with_so(kiln_device *device,
                                                         const kiln_geometry_shader_desc *gs,
                                                         const kiln_so_desc *so,
                                                         kiln_geometry_shader *out_shader);

/* ---- input assembler ---- */

typedef struct kiln_input_element {
    kiln_format format;         /* R32_FLOAT .. R32G32B32A32_FLOAT, R32G32B32_FLOAT,
                                   R8G8B8A8_UNORM, B8G8R8A8_UNORM */
    uint32_t slot;              /* vertex buffer slot */
    uint32_t offset;            /* bytes from the start of the vertex */
    uint32_t per_instance;      /* 0: per vertex; 1: per instance */
    uint32_t instance_step_rate;/* per-instance data advances every N
                                   instances (0 means 1) */
} kiln_input_element;

typedef struct kiln_input_layout_desc {
    uint32_t num_elements;      /* must equal the shader's num_inputs */
    kiln_input_element elements[KILN_MAX_INPUT_ELEMENTS];
} kiln_input_layout_desc;

KILN_API kiln_result kiln_create_input_layout(kiln_device *device, const kiln_input_layout_desc *desc,
                                              kiln_vertex_shader shader, kiln_input_layout *out_layout);
KILN_API kiln_result kiln_destroy_input_layout(kiln_device *device, kiln_input_layout layout);

typedef enum kiln_topology {
    KILN_TOPOLOGY_UNDEFINED = 0,
    KILN_TOPOLOGY_POINT_LIST,
    KILN_TOPOLOGY_LINE_LIST,
    KILN_TOPOLOGY_LINE_STRIP,
    KILN_TOPOLOGY_TRIANGLE_LIST,
    KILN_TOPOLOGY_TRIANGLE_STRIP,
    /* With adjacency, D3D10's orders; drawn only through a geometry shader
     * (without one: KILN_E_INVALID_CALL, DRAW_ADJACENCY_NO_GS).
     * LINE_LIST_ADJ: 4 vertices a line (a, v0, v1, b). LINE_STRIP_ADJ:
     * line j is vertices j .. j + 3. TRIANGLE_LIST_ADJ: 6 a triangle,
     * 0, 2, 4 the triangle and 1, 3, 5 adjacent. TRIANGLE_STRIP_ADJ: n
     * vertices make (n - 4) / 2 triangles (none below 6); the shader gets
     * triangle j of m as (corner, adjacent) x 3: even j (2j, 2j - 2,
     * 2j + 2, 2j + 6, 2j + 4, 2j + 3), odd j (2j + 2, 2j - 2, 2j, 2j + 3,
     * 2j + 4, 2j + 6); the first has 1 for 2j - 2, the last 2j + 5 for
     * 2j + 6; one alone is (0, 1, 2, 5, 4, 3). */
    KILN_TOPOLOGY_LINE_LIST_ADJ,
    KILN_TOPOLOGY_LINE_STRIP_ADJ,
    KILN_TOPOLOGY_TRIANGLE_LIST_ADJ,
    KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ
} kiln_topology;

typedef enum kiln_index_format {
    KILN_INDEX_UINT16 = 0,
    KILN_INDEX_UINT32 = 1
} kiln_index_format;

/* ---- state objects (immutable) ---- */

typedef enum kiln_fill_mode { KILN_FILL_SOLID = 0, KILN_FILL_WIREFRAME } kiln_fill_mode;
typedef enum kiln_cull_mode {
    KILN_CULL_DEFAULT = 0,      /* BACK, as D3D10 */
    KILN_CULL_NONE,
    KILN_CULL_FRONT,
    KILN_CULL_BACK
} kiln_cull_mode;

typedef struct kiln_rasterizer_desc {
    kiln_fill_mode fill;
    kiln_cull_mode cull;
    uint32_t front_ccw;         /* 0: clockwise triangles are front (D3D10) */
    int32_t depth_bias;         /* in units of the depth format's resolution */
    float depth_bias_clamp;
    float slope_scaled_depth_bias;
    uint32_t depth_clip_disable;/* 0: clip to 0 <= z <= w (D3D10 default) */
    uint32_t scissor_enable;
} kiln_rasterizer_desc;

typedef enum kiln_compare {
    KILN_COMPARE_DEFAULT = 0,   /* LESS for depth, ALWAYS for stencil */
    KILN_COMPARE_NEVER,
    KILN_COMPARE_LESS,
    KILN_COMPARE_EQUAL,
    KILN_COMPARE_LESS_EQUAL,
    KILN_COMPARE_GREATER,
    KILN_COMPARE_NOT_EQUAL,
    KILN_COMPARE_GREATER_EQUAL,
    KILN_COMPARE_ALWAYS
} kiln_compare;

typedef enum kiln_stencil_op {
    KILN_STENCIL_OP_DEFAULT = 0, /* KEEP */
    KILN_STENCIL_OP_KEEP,
    KILN_STENCIL_OP_ZERO,
    KILN_STENCIL_OP_REPLACE,
    KILN_STENCIL_OP_INCR_SAT,
    KILN_STENCIL_OP_DECR_SAT,
    KILN_STENCIL_OP_INVERT,
    KILN_STENCIL_OP_INCR,
    KILN_STENCIL_OP_DECR
} kiln_stencil_op;

typedef struct kiln_stencil_face {
    kiln_stencil_op fail_op, depth_fail_op, pass_op;
    kiln_compare func;
} kiln_stencil_face;

#define KILN_MASK_DEFAULT 0u    /* stencil masks: 0 means 0xFF ... */
#define KILN_MASK_NONE 0x100u   /* ... and this means 0x00 */

typedef struct kiln_depth_stencil_desc {
    uint32_t depth_disable;     /* 0: depth test on (D3D10 default) */
    uint32_t depth_write_disable;
    kiln_compare depth_func;
    uint32_t stencil_enable;
    uint32_t stencil_read_mask; /* KILN_MASK_DEFAULT, KILN_MASK_NONE or 1..0xFF */
    uint32_t stencil_write_mask;
    kiln_stencil_face front, back;
} kiln_depth_stencil_desc;

typedef enum kiln_blend_factor {
    KILN_BLEND_DEFAULT = 0,     /* ONE for sources, ZERO for destinations */
    KILN_BLEND_ZERO,
    KILN_BLEND_ONE,
    KILN_BLEND_SRC_COLOR,
    KILN_BLEND_INV_SRC_COLOR,
    KILN_BLEND_SRC_ALPHA,
    KILN_BLEND_INV_SRC_ALPHA,
    KILN_BLEND_DEST_ALPHA,
    KILN_BLEND_INV_DEST_ALPHA,
    KILN_BLEND_DEST_COLOR,
    KILN_BLEND_INV_DEST_COLOR,
    KILN_BLEND_SRC_ALPHA_SAT,
    KILN_BLEND_BLEND_FACTOR,
    KILN_BLEND_INV_BLEND_FACTOR
} kiln_blend_factor;

typedef enum kiln_blend_op {
    KILN_BLEND_OP_DEFAULT = 0,  /* ADD */
    KILN_BLEND_OP_ADD,
    KILN_BLEND_OP_SUBTRACT,
    KILN_BLEND_OP_REV_SUBTRACT,
    KILN_BLEND_OP_MIN,
    KILN_BLEND_OP_MAX
} kiln_blend_op;

#define KILN_COLOR_WRITE_DEFAULT 0u /* write masks: 0 means RGBA ... */
#define KILN_COLOR_WRITE_R 1u
#define KILN_COLOR_WRITE_G 2u
#define KILN_COLOR_WRITE_B 4u
#define KILN_COLOR_WRITE_A 8u
#define KILN_COLOR_WRITE_NONE 0x10u /* ... and this writes nothing */

typedef struct kiln_blend_target {
    uint32_t enable;
    kiln_blend_factor src, dst;
    kiln_blend_op op;
    kiln_blend_factor src_alpha, dst_alpha;
    kiln_blend_op op_alpha;
    uint32_t write_mask;
} kiln_blend_target;

typedef struct kiln_blend_desc {
    kiln_blend_target rt[KILN_MAX_RENDER_TARGETS];
    /* D3D10's AlphaToCoverageEnable: render target 0's alpha output keeps
     * the first n of a pixel's covered samples (in sample order), n =
     * floor(saturate(alpha) * samples + 0.5), before the depth test; with
     * one sample a pixel is kept when alpha >= 0.5. The pattern is kiln's
     * (D3D10 leaves it to the implementation). */
    uint32_t alpha_to_coverage;
} kiln_blend_desc;

typedef enum kiln_filter {
    KILN_FILTER_DEFAULT = 0 /* LINEAR */,
    KILN_FILTER_POINT,
    KILN_FILTER_LINEAR,
    /* D3D10's ANISOTROPIC, one mode for minification, magnification and
     * mips: set in min_filter (mag_filter and mip_filter then DEFAULT,
     * LINEAR or ANISOTROPIC; ANISOTROPIC elsewhere is STATE_DESC), with
     * kiln_sampler_desc.max_anisotropy. kiln_ps_sample, _bias and _grad
     * take the derivatives in texels of the view's first mip, dx and dy
     * (Sample: each quad's, as for its LOD), major = the longer, minor =
     * the shorter; N = min(ceil(major / minor - 2^-10), max_anisotropy)
     * (the 2^-10 absorbs the derivatives' rounding on an isotropic
     * footprint; 1 when major is 0, max_anisotropy when minor is 0); N
     * trilinear taps at
     * LOD log2(major) - log2(N) (+ biases, then the clamps) along the
     * major derivative, at offsets ((k + 0.5) / N - 0.5) x that
     * derivative for k = 0..N-1, averaged with equal weights. Where N is
     * 1 (an isotropic footprint, or max_anisotropy 1) that is exactly the
     * trilinear sample. SampleLevel and SampleCmp filter trilinearly. */
    KILN_FILTER_ANISOTROPIC
} kiln_filter;

typedef enum kiln_address {
    KILN_ADDRESS_DEFAULT = 0,   /* CLAMP, as D3D10 */
    KILN_ADDRESS_WRAP,
    KILN_ADDRESS_MIRROR,
    KILN_ADDRESS_CLAMP,
    KILN_ADDRESS_BORDER,
    /* D3D10's MIRROR_ONCE: the coordinate's absolute value, then CLAMP
     * (texel index i < 0 reads -i - 1, then clamped to the edge). */
    KILN_ADDRESS_MIRROR_ONCE
} kiln_address;

typedef struct kiln_sampler_desc {
    kiln_filter min_filter, mag_filter, mip_filter;
    kiln_address address_u, address_v;
    float mip_lod_bias;
    uint32_t lod_clamp_enable;  /* 0: no clamp (D3D10's 0..FLT_MAX) */
    float min_lod, max_lod;
    /* BORDER reads this color, filtered like a texel, in all four
     * channels whatever channels the format stores, converted to the
     * format's meaning as D3D10 does: clamped to [0, 1] for UNORM and
     * UNORM_SRGB formats (BC ones included; linear, never sRGB-decoded),
     * to [-1, 1] for SNORM, as given for float and depth formats (D16:
     * UNORM). Integer formats cannot be sampled (zeros, no border). */
    float border_color[4];
    /* A comparison sampler (D3D10's COMPARISON_* filters, for
     * kiln_ps_sample_cmp): each texel read is replaced by 1 where
     * (reference comparison_func texel) holds and 0 elsewhere, then
     * filtered as the filters above say. DEFAULT (0): not a comparison
     * sampler; kiln_ps_sample ignores the function. */
    kiln_compare comparison_func;
    /* Anisotropic filtering's limit, 1..16 (0 means 1); read only with
     * KILN_FILTER_ANISOTROPIC. */
    uint32_t max_anisotropy;
    /* The third axis, w, of 3D textures (DEFAULT: CLAMP, as the others).
     * Cubes ignore all three modes: face coordinates clamp to the face. */
    kiln_address address_w;
} kiln_sampler_desc;

KILN_API kiln_result kiln_create_rasterizer_state(kiln_device *device, const kiln_rasterizer_desc *desc,
                                                  kiln_rasterizer_state *out_state);
KILN_API kiln_result kiln_create_depth_stencil_state(kiln_device *device,
                                                     const kiln_depth_stencil_desc *desc,
                                                     kiln_depth_stencil_state *out_state);
KILN_API kiln_result kiln_create_blend_state(kiln_device *device, const kiln_blend_desc *desc,
                                             kiln_blend_state *out_state);
KILN_API kiln_result kiln_create_sampler(kiln_device *device, const kiln_sampler_desc *desc,
                                         kiln_sampler *out_sampler);
KILN_API kiln_result kiln_destroy_rasterizer_state(kiln_device *device, kiln_rasterizer_state state);
KILN_API kiln_result kiln_destroy_depth_stencil_state(kiln_device *device, kiln_depth_stencil_state state);
KILN_API kiln_result kiln_destroy_blend_state(kiln_device *device, kiln_blend_state state);
KILN_API kiln_result kiln_destroy_sampler(kiln_device *device, kiln_sampler sampler);

/* ---- pipeline setters (never queued; 0 handles unbind) ---- */

typedef struct kiln_viewport {
    float x, y, width, height;
    float min_depth, max_depth;
} kiln_viewport;

typedef struct kiln_rect { int32_t left, top, right, bottom; } kiln_rect;

KILN_API kiln_result kiln_ia_set_input_layout(kiln_context *ctx, kiln_input_layout layout);
KILN_API kiln_result kiln_ia_set_vertex_buffers(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                                const kiln_buffer *buffers, const uint32_t *strides,
                                                const uint32_t *offsets);
KILN_API kiln_result kiln_ia_set_index_buffer(kiln_context *ctx, kiln_buffer buffer,
                                              kiln_index_format format, uint32_t offset);
KILN_API kiln_result kiln_ia_set_topology(kiln_context *ctx, kiln_topology topology);
KILN_API kiln_result kiln_vs_set_shader(kiln_context *ctx, kiln_vertex_shader shader);
KILN_API kiln_result kiln_vs_set_constant_buffers(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                                  const kiln_buffer *buffers);
/* The vertex stage's views and samplers (D3D10 VSSetShaderResources,
 * VSSetSamplers), with the pixel stage's rules: slots [start_slot,
 * start_slot + count) within KILN_MAX_SHADER_RESOURCES /
 * KILN_MAX_SAMPLERS (else KILN_E_INVALID_ARG, BIND_RANGE); a view whose
 * texture is also a bound target fails the draw (DRAW_HAZARD). A draw
 * reads the bound textures: a later write to one waits for it, and a Map
 * waits only for the draws that read it. Read with kiln_vs_sample_level,
 * kiln_vs_load, kiln_vs_get_dimensions. osmesa: KILN_E_UNSUPPORTED,
 * BACKEND_FEATURE, for any non-empty slot. */
KILN_API kiln_result kiln_vs_set_shader_resources(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                                  const kiln_srv *views);
KILN_API kiln_result kiln_vs_set_samplers(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                          const kiln_sampler *samplers);
/* {0} unbinds (no geometry stage). */
KILN_API kiln_result kiln_gs_set_shader(kiln_context *ctx, kiln_geometry_shader shader);
/* The geometry stage's views and samplers (D3D10 GSSetShaderResources,
 * GSSetSamplers): the vertex stage's rules (above). osmesa, which has no
 * geometry stage: KILN_E_UNSUPPORTED, BACKEND_FEATURE, for any non-empty
 * slot. */
KILN_API kiln_result kiln_gs_set_shader_resources(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                                  const kiln_srv *views);
KILN_API kiln_result kiln_gs_set_samplers(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                          const kiln_sampler *samplers);
/* D3D10 SOSetTargets: binds buffers 0..count-1 (created with
 * KILN_BIND_STREAM_OUTPUT, else KILN_E_INVALID_ARG, BIND_USAGE; {0}
 * leaves a slot empty) and unbinds the slots after them; count 0 unbinds
 * all. offsets[i] (NULL: all 0) is the byte offset where the next draw
 * starts writing buffer i, or KILN_SO_APPEND to continue where the last
 * write to that buffer ended (D3D10's -1); later draws continue where
 * the previous one ended. Offsets are multiples of 4 (SO_OFFSET; the
 * elements are 32-bit). count > 4: BIND_RANGE. One buffer in two slots:
 * KILN_E_INVALID_ARG, SO_TARGET_DUPLICATE (where writes go and end would
 * be ambiguous). A draw streams out only
 * when the bound geometry shader has a declaration: every slot it
 * declares must have a buffer, and no target may also be bound in a
 * vertex-buffer slot or as the index buffer (KILN_E_INVALID_CALL,
 * DRAW_SO_MISMATCH / DRAW_HAZARD). Binding a buffer on the osmesa
 * backend: KILN_E_UNSUPPORTED (BACKEND_FEATURE). */
KILN_API kiln_result kiln_so_set_targets(kiln_context *ctx, uint32_t count, const kiln_buffer *buffers,
                                         const uint32_t *offsets);
/* A pixel shader of 0 (none) is D3D10's NULL pixel shader. With a
 * depth-stencil view bound whose state tests depth or stencil (the
 * default state tests depth), draws are depth only: they rasterize, test
 * and write depth and stencil exactly as with a shader, shade nothing and
 * leave the render targets untouched (a shadow map's depth pass, a
 * depth pre-pass). OCCLUSION queries count their passing samples;
 * PIPELINE_STATISTICS counts no pixel-shader invocations. Without a
 * pixel shader a draw needs such a test or stream output:
 * KILN_E_INVALID_CALL, DRAW_NO_SHADER (no depth-stencil view, no stream
 * output) or DRAW_NO_RASTER (a view, but depth and stencil off). The
 * osmesa backend draws them too (a fragment shader that writes nothing,
 * color writes masked off). */
KILN_API kiln_result kiln_ps_set_shader(kiln_context *ctx, kiln_pixel_shader shader);
KILN_API kiln_result kiln_ps_set_constant_buffers(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                                  const kiln_buffer *buffers);
/* Slots past KILN_MAX_SHADER_RESOURCES (128), KILN_MAX_SAMPLERS (16),
 * KILN_MAX_CONSTANT_BUFFERS (14): KILN_E_INVALID_ARG, BIND_RANGE. The
 * osmesa backend has 16 shader-resource slots per stage (GL's texture
 * unit N is view N sampled with sampler N): a view in slot 16 or above
 * is refused there at bind time (KILN_E_UNSUPPORTED, BACKEND_FEATURE);
 * its 14 constant buffers and 16 samplers are all there. */
KILN_API kiln_result kiln_ps_set_shader_resources(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                                  const kiln_srv *views);
KILN_API kiln_result kiln_ps_set_samplers(kiln_context *ctx, uint32_t start_slot, uint32_t count,
                                          const kiln_sampler *samplers);
/* NULL state: the defaults (a zero desc). */
KILN_API kiln_result kiln_rs_set_state(kiln_context *ctx, kiln_rasterizer_state state);
KILN_API kiln_result kiln_rs_set_viewport(kiln_context *ctx, const kiln_viewport *viewport);
KILN_API kiln_result kiln_rs_set_scissor_rect(kiln_context *ctx, const kiln_rect *rect);
KILN_API kiln_result kiln_om_set_render_targets(kiln_context *ctx, uint32_t count, const kiln_rtv *views,
                                                kiln_dsv depth_stencil);
/* blend_factor NULL: (1, 1, 1, 1). */
KILN_API kiln_result kiln_om_set_blend_state(kiln_context *ctx, kiln_blend_state state,
                                             const float blend_factor[4]);
KILN_API kiln_result kiln_om_set_depth_stencil_state(kiln_context *ctx, kiln_depth_stencil_state state,
                                                     uint32_t stencil_ref);

/* ---- draws ----
 *
 * kiln's limit: one draw makes at most 2^28 vertices (count x instances,
 * times the bound geometry shader's max_vertices) and 2^20 instances
 * (DRAW_TOO_LARGE); bigger draws are split by the app.
 * A count or instance count of 0 draws nothing and returns KILN_OK. */

KILN_API kiln_result kiln_draw(kiln_context *ctx, uint32_t vertex_count, uint32_t start_vertex);
KILN_API kiln_result kiln_draw_indexed(kiln_context *ctx, uint32_t index_count, uint32_t start_index,
                                       int32_t base_vertex);
KILN_API kiln_result kiln_draw_instanced(kiln_context *ctx, uint32_t vertex_count, uint32_t instance_count,
                                         uint32_t start_vertex, uint32_t start_instance);
KILN_API kiln_result kiln_draw_indexed_instanced(kiln_context *ctx, uint32_t index_count,
                                                 uint32_t instance_count, uint32_t start_index,
                                                 int32_t base_vertex, uint32_t start_instance);
/* D3D10 DrawAuto: a non-indexed draw of the vertices stream output last
 * wrote to the buffer in vertex-buffer slot 0: (where that write ended -
 * the slot's offset) / the slot's stride, rounded down (0 if never
 * written), known when the draw executes. Slot 0 must hold a buffer
 * created with KILN_BIND_STREAM_OUTPUT and a non-zero stride
 * (KILN_E_INVALID_CALL, DRAW_AUTO_NO_SO); DRAW_TOO_LARGE counts the
 * vertices the whole buffer could hold. Otherwise validated as kiln_draw.
 * On the osmesa backend KILN_E_UNSUPPORTED (BACKEND_FEATURE). */
KILN_API kiln_result kiln_draw_auto(kiln_context *ctx);

/* ---- built-in effects ----
 *
 * Ready shaders, written in C with SIMD kernels (SSE2, and AVX2 chosen at
 * run time from the CPU's features), each with GLSL for the osmesa backend.
 * Matrices are 16 floats, row-major, applied to column vectors:
 * clip = M * (x, y, z, 1), so clip.x = m[0]x + m[1]y + m[2]z + m[3].
 *
 *   VERTEX_COLOR   inputs: 0 position (2-4 floats), 1 color (4 floats or
 *                  R8G8B8A8_UNORM). VS cb0: world_view_proj (16 floats).
 *                  Output: the interpolated color.
 *   TEXTURE        inputs: 0 position, 1 texcoord (2 floats). VS cb0 as
 *                  above. PS: srv 0 sampled with sampler 0.
 *   TEXTURE_COLOR  inputs: 0 position, 1 color, 2 texcoord. The texture
 *                  times the color.
 *   LIT            inputs: 0 position, 1 normal (3 floats), 2 color. VS cb0:
 *                  world_view_proj (16 floats), then world (16 floats; its
 *                  upper 3x3 transforms normals). PS cb0: light direction
 *                  (xyz, pointing from the light; w unused), light color
 *                  (rgb), ambient (rgb): per-pixel
 *                  color * (ambient + light_color * max(0, dot(n, -dir))),
 *                  alpha from the color.
 */
typedef enum kiln_effect {
    KILN_EFFECT_VERTEX_COLOR = 0,
    KILN_EFFECT_TEXTURE,
    KILN_EFFECT_TEXTURE_COLOR,
    KILN_EFFECT_LIT,
    KILN_EFFECT_COUNT
} kiln_effect;

/* Fills the shader descs of a built-in effect (either pointer may be NULL).
 * The pixel shader's desc declares what it reads: read_mask, and
 * KILN_PS_NO_Z (no effect reads the depth). A vertex shader desc changed
 * to fewer inputs or varyings than the effect uses still works: the
 * missing inputs read as zeros and only the declared outputs are written
 * (more varyings than the effect writes read as zeros). */
KILN_API kiln_result kiln_effect_get(kiln_effect effect, kiln_vertex_shader_desc *out_vs,
                                     kiln_pixel_shader_desc *out_ps);
/* Which SIMD level the built-in kernels and the sampler use on this CPU:
 * "avx512" (AVX-512 F, BW, VL and DQ, with AVX2 and FMA), "avx2" (AVX2 and
 * FMA) or "sse2". KILN_SIMD=sse2 in the environment forces the baseline,
 * KILN_SIMD=avx2 the AVX2 level on a CPU with AVX-512. Every level gives
 * the same bits. */
KILN_API const char *kiln_effect_simd_level(void);

/* Fills mips 1.. of the view's texture from its most detailed mip with a
 * 2x2 box filter (odd sizes take the edge texel once more), for every
 * slice of the view (1D textures: 2 texels; cubes: each face on its own;
 * 3D textures: a 2x2x2 box, halving the depth too). */
KILN_API kiln_result kiln_generate_mips(kiln_context *ctx, kiln_srv view);

/* ---------------------------------------------------------------------------
 * Presenting: swapchains and window-system targets
 *
 * A swapchain owns 2 or 3 color buffers in a buffer queue (seed 001):
 * FREE -> DEQUEUED (the app renders into it) -> QUEUED (presented; its
 * acquire fence signals when that rendering completes) -> ACQUIRED (the
 * target displays it) -> FREE, with a release fence that signals when the
 * target has finished reading it. Present returns at once. Taking the next
 * back buffer blocks only when no buffer is FREE; its release fence is
 * waited on by the context (a server wait), never by the app's thread.
 *
 * Targets display frames on the swapchain's own thread:
 *   PNG     each displayed frame is written as a numbered PNG file;
 *   MEMORY  each frame is handed to an application callback;
 *   X11     a window (when built with libx11; MIT-SHM when available);
 *   NULL    frames are discarded (benchmarks).
 * ------------------------------------------------------------------------- */

typedef struct kiln_swapchain kiln_swapchain;

typedef enum kiln_present_mode {
    KILN_PRESENT_FIFO = 0,   /* every presented frame is displayed, in order */
    KILN_PRESENT_MAILBOX     /* a newer frame replaces one still queued */
} kiln_present_mode;

typedef enum kiln_winsys_kind {
    KILN_WINSYS_NULL = 0,
    KILN_WINSYS_PNG,
    KILN_WINSYS_MEMORY,
    KILN_WINSYS_X11
} kiln_winsys_kind;

/* One displayed frame, as the MEMORY target hands it over. */
typedef struct kiln_frame {
    const void *pixels;      /* valid only until the callback returns */
    uint32_t width, height;
    uint32_t row_pitch;      /* bytes */
    kiln_format format;
    uint64_t frame_number;   /* 1 for the first frame presented */
} kiln_frame;

/* Called on the swapchain's display thread, one frame at a time, in display
 * order. Must not call back into kiln. */
typedef void (*kiln_frame_fn)(const kiln_frame *frame, void *user);

typedef struct kiln_swapchain_desc {
    uint32_t width, height;     /* 1..8192 */
    kiln_format format;         /* UNKNOWN: R8G8B8A8_UNORM; or B8G8R8A8_UNORM */
    uint32_t buffer_count;      /* 0: 2; 2 or 3 */
    kiln_present_mode mode;
    kiln_winsys_kind winsys;
    /* PNG: printf pattern with one unsigned conversion for the frame
     * number, e.g. "out/frame-%04u.png". NULL: "frame-%05u.png". */
    const char *png_path;
    /* MEMORY */
    kiln_frame_fn frame_fn;
    void *frame_user;
    /* X11: window title (NULL: "kiln"); display name NULL: $DISPLAY. */
    const char *x11_title;
    const char *x11_display;
} kiln_swapchain_desc;

typedef struct kiln_swapchain_stats {
    uint64_t presented;         /* present calls */
    uint64_t displayed;         /* frames the target displayed */
    uint64_t dropped;           /* MAILBOX: frames replaced before display;
                                   X11: frames after the window closed;
                                   frames destroy found stuck (below) */
    uint64_t waits_no_buffer;   /* get_back_buffer calls that had to wait */
    uint64_t blocked_ns;        /* time the app's thread spent in those waits */
    uint64_t display_errors;    /* frames the target failed to display */
    uint32_t window_closed;     /* X11: the user closed the window */
} kiln_swapchain_stats;

/* The swapchain renders through `ctx` (its fences and server waits go on
 * that context's stream). */
KILN_API kiln_result kiln_swapchain_create(kiln_context *ctx, const kiln_swapchain_desc *desc,
                                           kiln_swapchain **out_swapchain);
/* Displays what was presented (FIFO) and frees everything.
 *
 * Waiting for the display (get_back_buffer, resize, wait_idle, destroy)
 * cannot hang on a frame whose work waits for a resource the calling
 * thread keeps mapped (kiln_map): once nothing else could let that work
 * run, the first three return KILN_E_WOULD_DEADLOCK (WOULD_DEADLOCK) and
 * destroy drops the frames left, with one WOULD_DEADLOCK message. */
KILN_API void kiln_swapchain_destroy(kiln_swapchain *swapchain);

/* The back buffer to render into: takes a FREE buffer if none is held
 * (blocking only while none is FREE) and returns its texture and a render
 * target view. Both stay valid until the buffer is presented. */
KILN_API kiln_result kiln_swapchain_get_back_buffer(kiln_swapchain *swapchain,
                                                    kiln_texture *out_texture, kiln_rtv *out_view);
/* Queues the back buffer with an acquire fence for everything the context
 * queued so far; returns at once. */
KILN_API kiln_result kiln_swapchain_present(kiln_swapchain *swapchain);
/* New buffers of a new size; frames already queued display at their size. */
KILN_API kiln_result kiln_swapchain_resize(kiln_swapchain *swapchain, uint32_t width, uint32_t height);
KILN_API kiln_result kiln_swapchain_get_stats(kiln_swapchain *swapchain, kiln_swapchain_stats *out_stats);
/* Blocks until every presented frame has been displayed or dropped. */
KILN_API kiln_result kiln_swapchain_wait_idle(kiln_swapchain *swapchain);
/* 1 if this build has the X11 target. */
KILN_API int kiln_winsys_x11_available(void);

/* ---------------------------------------------------------------------------
 * Capture and replay
 *
 * A capture writes every call made on a device, with the bytes it was given
 * (initial data, updates, what the CPU wrote into a mapped resource, by
 * Unmap) and the handles it returned, into one file. The kiln_replay tool
 * (tools/replay) runs the calls again on a new device, with any thread
 * count, execution mode or backend, writes the presented frames (or the
 * final contents of every render target) as PNG files and prints per-frame
 * statistics. On the soft backend a replay gives the live run's images bit
 * for bit. docs/capture.md describes the file format.
 *
 * Starting: kiln_capture_begin on a device that has no objects yet, or
 * KILN_CAPTURE=path in the environment, which makes every device capture
 * from its creation ("%u" in the path becomes the device's number in the
 * process, 1 for the first; without it each device rewrites the file).
 * Calls that fail are recorded as failed (their code, not their arguments)
 * and not replayed. Objects that kiln's own code creates (a swapchain's
 * buffers and display thread) are not recorded: the swapchain calls are.
 *
 * Shaders are C functions, which a file cannot hold: the capture names
 * them. A shader desc registered on the device under a name (matched by
 * its `fn` and `user`) is recorded by that name; the built-in effects are
 * registered already, as "kiln.vertex_color", "kiln.texture",
 * "kiln.texture_color" and "kiln.lit" (one vertex and one pixel shader
 * each; geometry shaders have their own names, none built in). A shader created from a desc registered under no name is recorded
 * unnamed, with one warning (CAPTURE_SHADER_UNNAMED); a replay stops there
 * and says so. A replay recreates a named shader from the desc registered
 * under that name on the replaying device (kiln_replay knows the built-in
 * effects only).
 *
 * Threads: capture calls may be made from any thread. Calls of several
 * threads are recorded in the order they returned; a call that signals
 * (timeline and context signals, fences, sync tokens, query ends) is
 * recorded before a wait it releases can return. Begin and end a capture
 * while no other thread uses the device.
 * ------------------------------------------------------------------------- */

/* Starts writing every call on `device` to `path` (created or truncated).
 * KILN_E_INVALID_CALL if a capture runs (CAPTURE_ACTIVE) or the device has
 * objects (CAPTURE_LIVE_OBJECTS: their creation would be missing);
 * KILN_E_IO if the file cannot be opened (CAPTURE_OPEN_FAILED). */
KILN_API kiln_result kiln_capture_begin(kiln_device *device, const char *path);
/* Writes what is buffered and closes the file. KILN_E_INVALID_CALL without
 * a running capture (CAPTURE_NOT_ACTIVE); KILN_E_IO if writing failed
 * (logged once when it happened, CAPTURE_WRITE_FAILED). Destroying the
 * device ends its capture. */
KILN_API kiln_result kiln_capture_end(kiln_device *device);
/* Marks the end of a frame in the capture, for applications that do not
 * present through a swapchain (a present marks one too). A replay counts
 * frames at these marks. KILN_OK and nothing else without a capture. */
KILN_API kiln_result kiln_capture_frame(kiln_device *device);

/* Registers a shader desc under `name` (1..63 characters of A-Z a-z 0-9
 * _ . - :, not starting with "kiln."), for captures and replays on this
 * device. The desc is copied; its glsl string must stay valid while the
 * device exists. Registering a name again with the same fn and user is
 * KILN_OK; with others KILN_E_INVALID_ARG (CAPTURE_SHADER_NAME). */
KILN_API kiln_result kiln_capture_register_vertex_shader(kiln_device *device, const char *name,
                                                         const kiln_vertex_shader_desc *desc);
KILN_API kiln_result kiln_capture_register_pixel_shader(kiln_device *device, const char *name,
                                                        const kiln_pixel_shader_desc *desc);
KILN_API kiln_result kiln_capture_register_geometry_shader(kiln_device *device, const char *name,
                                                           const kiln_geometry_shader_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* KILN_H */
