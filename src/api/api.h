/*
 * api: the public entry points. Validates every argument before anything
 * is queued (one log call per failure), resolves handles to objects (with
 * a reference for the duration of the call) and builds commands.
 */
#ifndef KILN_API_INTERNAL_H
#define KILN_API_INTERNAL_H

#include "../driver/driver.h"
#include "../queue/queue.h"

struct ka_pipeline;
struct kd_scene;
struct kcap_writer;
struct kcap_registry;

struct kiln_context {
    kiln_device *dev;
    kq_context q;
    struct ka_pipeline *pipe;  /* bound pipeline state (pipeline.c) */
    struct kd_scene *scene;    /* draws being gathered, not yet queued */
    uint32_t timeline_id;     /* handle of the context's own timeline */
    kiln_context *next, *prev; /* device's list of created contexts */
    atomic_uint swapchains;    /* swapchains rendering through it */
    /* Queries (query.c), the context thread's own: the queries active
     * here (a reference each) and the predicate (a reference). */
    struct ka_query *active[KILN_MAX_ACTIVE_QUERIES];
    uint32_t nactive;
    struct ka_query *pred;
    uint32_t pred_value;
};

struct kiln_device {
    kb_env env;
    ks_domain *dom;
    kres_handles handles;
    kq_device queue;
    kiln_context immediate;
    kiln_context *contexts;   /* created ones, guarded by dom->mu */
    uint32_t num_threads;
    uint32_t ring_capacity, transfer_size;
    bool serial;
    /* Bumped after any object is destroyed: a draw re-checks its bound
     * objects only when this or the pipeline changed (pipeline.c). */
    atomic_uint_fast64_t destroy_epoch;
    kd_recycler recycler; /* scenes' memory kept for the next scenes */
    /* Capture (src/capture): the running capture's writer, or NULL; every
     * entry point tests it. The writer itself lives from the first begin
     * to the device's destruction, the shader-name registry likewise. */
    _Atomic(struct kcap_writer *) capture;
    struct kcap_writer *capture_writer;
    struct kcap_registry *capture_registry;
};

/* Marks an object destroyed for the draw checks (after its own flag). */
static inline void ka_destroyed(kiln_device *dev)
{
    atomic_fetch_add_explicit(&dev->destroy_epoch, 1, memory_order_release);
}

/* Used when there is no device to log to (NULL device or context). */
extern const kb_env ka_stderr_env;

/* Logs and returns the failure code for a handle lookup that failed. */
kiln_result ka_handle_fail(kiln_device *dev, const char *api, const char *what,
                           kiln_log_id id);

/* Resource lookup: a buffer, a texture, or either (kiln_resource). Returns
 * a referenced object or NULL after logging. Inline: it is a wrapper every
 * small command goes through, and its call cost ~25 instructions. */
static inline kres_resource *ka_get_resource(kiln_device *dev, uint32_t id, kres_type lo,
                                             kres_type hi, const char *api, const char *what,
                                             kiln_result *r)
{
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_get(&dev->handles, id, lo, hi, &lid);
    if (!o) {
        *r = ka_handle_fail(dev, api, what, lid);
        return NULL;
    }
    *r = KILN_OK;
    return kres_as_resource(o);
}
/* View lookup; fails also when the view's resource was destroyed. */
kres_view *ka_get_view(kiln_device *dev, uint32_t id, kres_type type, const char *api,
                       kiln_result *r);

/* Queues the scene being gathered, if any. Every context call that queues
 * something else, maps or synchronizes calls this first, so call order is
 * kept (a WRITE_DISCARD Map need not: it renames, and the scene's draws
 * hold the storages they captured). Returns an error only if the scene
 * could not be queued (logged). */
kiln_result ka_flush_scene(kiln_context *ctx, const char *api);
/* The test for gathered draws is inline: every context call makes it and
 * nearly always finds none (a call into ka_flush_scene was ~24
 * instructions of a small command's producer cost). */
#define KA_FLUSH_SCENE_OR_RETURN(ctx, api)                                                         \
    do {                                                                                           \
        if ((ctx)->scene) {                                                                        \
            kiln_result fr_ = ka_flush_scene((ctx), (api));                                        \
            if (fr_ != KILN_OK)                                                                    \
                return fr_;                                                                        \
        }                                                                                          \
    } while (0)
kiln_result ka_pipeline_init(kiln_context *ctx);

/* Adds a point on the context's own timeline at the current end of its
 * stream and returns its value; `hook` (may be NULL) runs when it is
 * reached (kq_record_hook_locked). Caller holds the mutex. */
kiln_result ka_mark_locked(kiln_context *ctx, uint64_t *value, void (*hook)(kres_object *, uint64_t),
                           kres_object *obj, uint64_t arg);
/* Queries (query.c). A scene being opened takes the context's active
 * counting queries (written) and predicate (read) as nodes; false on out
 * of memory. */
bool ka_scene_queries(kiln_context *ctx, struct kd_scene *s);
/* A predicated command (clear, update, copy) reads the context's
 * predicate, if one is set. Call after its other accesses. */
void ka_predicate(kiln_context *ctx, kq_cmd *cmd);
/* Drops the context's queries when it is destroyed (its work is done). */
void ka_queries_fini(kiln_context *ctx);
/* Adds a clear of one of the open scene's targets to the scene (opening
 * one when the view is the bound first target or depth-stencil). */
bool ka_scene_clear(kiln_context *ctx, struct kres_view *v, bool depth, const uint8_t texel[16],
                    uint32_t mask);
void ka_pipeline_fini(kiln_context *ctx);
/* The part of a context's pipeline state that names no object: what a
 * capture beginning now records, so a replay starts from the same state. */
typedef struct ka_scalar_state {
    kiln_topology topology;
    bool viewport_set;
    kiln_viewport viewport;
    kiln_rect scissor;
    float blend_factor[4];
    uint32_t stencil_ref;
    kiln_index_format index_format;
    uint32_t index_offset;
    uint32_t vb_stride[KILN_MAX_VERTEX_BUFFERS], vb_offset[KILN_MAX_VERTEX_BUFFERS];
} ka_scalar_state;
void ka_pipeline_scalars(const kiln_context *ctx, ka_scalar_state *out);

/* Sets up / tears down a context (immediate or created). */
kiln_result ka_context_init(kiln_device *dev, kiln_context *ctx);
void ka_context_fini(kiln_context *ctx);

#endif
