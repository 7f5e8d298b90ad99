/*
 * driver: the seam between the API layer and the backends (Mesa gallium's
 * p_state.h in spirit). src/api builds these records; a backend (src/raster,
 * src/gl) reads them when the queue's executor hands it a command through
 * the kq_backend vtable (queue.h). Nothing here knows a backend.
 *
 * Ownership:
 * - A kd_state (the pipeline state a draw captured) is immutable once
 *   built and reference counted (atomic: dropped on any thread); it holds
 *   references to every object it names.
 * - A kd_draw's storages, captured when the draw was called (so WRITE_DISCARD
 *   renames between draws are seen), are held by its kd_bind record.
 * - A kd_scene owns its ops, draws and node array; kd_scene_free releases
 *   every reference and gives the memory to the device's kd_recycler (or
 *   frees it). The queue owns the nodes once they are handed to a command.
 */
#ifndef KILN_DRIVER_H
#define KILN_DRIVER_H

#include "../queue/queue.h"

/* A sampler with its defaults resolved: filters POINT or LINEAR, address
 * modes WRAP..MIRROR_ONCE, min_lod/max_lod set (0..1000 when unclamped). */
typedef struct kd_sampler {
    kiln_filter min_filter, mag_filter, mip_filter;
    kiln_address address_u, address_v;
    float mip_lod_bias, min_lod, max_lod;
    float border[4];
    kiln_compare cmp; /* DEFAULT: not a comparison sampler */
    uint32_t max_aniso; /* ANISOTROPIC: 2..16 (filters then LINEAR); 0:
                           not anisotropic (max_anisotropy 1 is trilinear) */
    kiln_address address_w; /* 3D textures' third axis (resolved like u, v) */
} kd_sampler;

/* Resolves a sampler desc's defaults (NULL: the default sampler). */
void kd_sampler_resolve(const kiln_sampler_desc *d, kd_sampler *out);

typedef struct kd_element {
    kiln_format format;
    uint32_t slot, offset, per_instance, step;
} kd_element;

typedef struct kd_stencil_face {
    kiln_stencil_op fail, zfail, pass; /* resolved: never DEFAULT */
    kiln_compare func;
} kd_stencil_face;

typedef struct kd_blend_rt {
    uint32_t enable;
    kiln_blend_factor src, dst, src_a, dst_a; /* resolved */
    kiln_blend_op op, op_a;
    uint32_t write_mask;                     /* 0..15 */
} kd_blend_rt;

/* The read_mask bits of the first n varyings (all of their components). */
_Static_assert(KILN_MAX_VARYINGS <= 8, "a read_mask has four bits per varying");
static inline uint32_t kd_varying_components(uint32_t n)
{
    return n >= 8 ? 0xffffffffu : (1u << (4 * n)) - 1u;
}

typedef struct kd_state {
    atomic_uint refs;
    const kb_env *env;
    /* shaders */
    kiln_vs_fn vs;
    void *vs_user;
    uint32_t vs_inputs, vs_varyings;
    kiln_ps_fn ps;
    void *ps_user;
    uint32_t ps_varyings, ps_outputs, ps_flags;
    uint32_t ps_reads; /* the components interpolated: the desc's read_mask, or all */
    const char *vs_glsl, *ps_glsl; /* the descs' GLSL (osmesa), or NULL */
    kiln_gs_fn gs;                 /* NULL: no geometry shader */
    void *gs_user;
    kiln_gs_output gs_output;
    uint32_t gs_max_vertices, gs_varyings, gs_flags;
    /* Stream output: the bound geometry shader's declaration (so.n 0:
     * none; with gs NULL a pass-through of the vertex shader's output). */
    kres_so_decl so;
    uint32_t raster;               /* 0: no pixel shader, rasterization
                                      off: the draw only streams out */
    /* input assembly */
    kd_element elems[KILN_MAX_INPUT_ELEMENTS];
    uint32_t nelems;
    kres_resource *vb[KILN_MAX_VERTEX_BUFFERS];
    uint32_t vb_stride[KILN_MAX_VERTEX_BUFFERS], vb_offset[KILN_MAX_VERTEX_BUFFERS];
    kres_resource *ib;
    kiln_index_format ib_format;
    uint32_t ib_offset;
    kiln_topology topology;
    /* resources of the stages: srv / samp the pixel stage's, vs_srv /
     * vs_samp the vertex stage's. Only the slots below each count (the
     * highest bound slot + 1 when the state was built) are set; the rest
     * are empty. Every sampler slot is resolved (empty: the default). */
    kres_resource *vs_cb[KILN_MAX_CONSTANT_BUFFERS], *ps_cb[KILN_MAX_CONSTANT_BUFFERS];
    kres_view *srv[KILN_MAX_SHADER_RESOURCES];
    kd_sampler samp[KILN_MAX_SAMPLERS];
    kres_view *vs_srv[KILN_MAX_SHADER_RESOURCES];
    kd_sampler vs_samp[KILN_MAX_SAMPLERS];
    kres_view *gs_srv[KILN_MAX_SHADER_RESOURCES]; /* the geometry stage's */
    kd_sampler gs_samp[KILN_MAX_SAMPLERS];
    uint32_t n_vs_cb, n_ps_cb, nsrv, nsamp, n_vs_srv, n_vs_samp, n_gs_srv, n_gs_samp;
    /* rasterizer */
    kiln_fill_mode fill;
    kiln_cull_mode cull;          /* NONE, FRONT or BACK */
    uint32_t front_ccw, depth_clip, scissor_enable;
    int32_t depth_bias;
    float depth_bias_clamp, slope_bias;
    kiln_viewport vp;
    kiln_rect scissor;
    /* output merger */
    uint32_t depth_enable, depth_write;
    kiln_compare depth_func;
    uint32_t stencil_enable, stencil_read, stencil_write, stencil_ref;
    kd_stencil_face front, back;
    kd_blend_rt blend[KILN_MAX_RENDER_TARGETS];
    float blend_factor[4];
    uint32_t alpha_to_coverage;
} kd_state;

void kd_state_ref(kd_state *s);
void kd_state_unref(kd_state *s);

/* The storages a draw reads, captured when it was recorded (references
 * held; NULL: unbound). Consecutive draws of a scene that bind the same
 * storages share one record, so a draw costs no reference counting.
 * Slots are captured up to the highest bound one (the counts); the
 * shader-resource arrays are sized to them (128 slots are D3D10's, one or
 * two the usual use), in the record's own allocation. */
typedef struct kd_bind {
    struct kd_bind *next; /* the scene's list */
    bool complete;        /* every storage is a node of the scene */
    uint32_t n_vs_cb, n_ps_cb, nsrv, n_vs_srv, n_gs_srv;
    kres_storage *vb_st[KILN_MAX_VERTEX_BUFFERS], *ib_st;
    kres_storage *vs_cb_st[KILN_MAX_CONSTANT_BUFFERS], *ps_cb_st[KILN_MAX_CONSTANT_BUFFERS];
    kres_storage **srv_st;    /* nsrv: the pixel stage's views' storages */
    kres_storage **vs_srv_st; /* n_vs_srv: the vertex stage's */
    kres_storage **gs_srv_st; /* n_gs_srv: the geometry stage's */
    kres_storage *st_[];      /* the three arrays */
} kd_bind;

/* A draw: its scene owns it and holds what it points to. */
typedef struct kd_draw {
    kd_state *state;              /* held by the scene (kd_scene.states) */
    const kd_bind *bind;
    uint32_t indexed;
    uint32_t count;               /* vertices or indices */
    uint32_t start;               /* first vertex or index */
    int32_t base_vertex;
    uint32_t instances, start_instance;
    /* draw_auto: `count` is set when the draw executes, from where stream
     * output last ended in vertex-buffer slot 0's buffer. */
    uint32_t is_auto;
} kd_draw;

typedef enum kd_op_kind { KD_OP_CLEAR_RT, KD_OP_CLEAR_DS, KD_OP_DRAW } kd_op_kind;

typedef struct kd_op {
    kd_op_kind kind;
    uint32_t rt;                  /* CLEAR_RT: target index */
    uint8_t texel[16];            /* CLEAR_RT: packed color; CLEAR_DS: 32-bit word */
    uint32_t mask;                /* CLEAR_DS: bits of the word written */
    kd_draw *draw;                /* DRAW */
} kd_op;

struct kd_recycler;

typedef struct kd_scene {
    const kb_env *env;
    struct kd_recycler *recycler; /* takes the scene back when freed */
    kres_view *rtv[KILN_MAX_RENDER_TARGETS]; /* references held */
    uint32_t nrt;
    kres_view *dsv;
    kd_op *ops;
    uint32_t nops, ops_cap;
    uint64_t vertices;            /* work estimate: vertices submitted */
    /* Queries the scene's draws count into, and its predicate: each is
     * also a node of the scene (written, resp. read), which holds it; the
     * backend finds the storage with kd_node_storage. */
    kres_resource *queries[KILN_MAX_ACTIVE_QUERIES];
    uint32_t nqueries;
    kres_resource *pred_res;      /* NULL: not predicated */
    uint32_t pred_value;
    /* Stream output: a draw that streams out is a scene of its own; its
     * targets (written nodes of the scene, which hold them) and where it
     * starts writing each (KILN_SO_APPEND: where the last write ended). */
    kres_resource *so[KILN_SO_BUFFER_SLOTS];
    uint32_t so_offset[KILN_SO_BUFFER_SLOTS];
    bool streams;                 /* the scene's draw streams out */
    uint64_t trace_t0;            /* tracing: when its first op was recorded */
    /* Nodes for the command: one per storage (deduplicated through a small
     * open-addressing table of storage pointers -> node index + 1, the
     * first hash_cap words of `hash`; the next hash_cap map each resource
     * to its newest node + 1, for the renamed storages' charge). */
    kq_node *nodes;
    uint32_t nnodes, nodes_cap;
    uint32_t *hash;
    uint32_t hash_cap;
    /* Draw records come from chunks (one allocation per KD_DRAW_CHUNK
     * draws, none per draw); bind records and state blocks are held once
     * per scene however many draws share them. */
    struct kd_draw_chunk *chunks; /* newest first */
    struct kd_draw_chunk *spare;  /* emptied chunks of a recycled scene */
    kd_bind *binds;               /* newest first */
    size_t bind_bytes;            /* what the bind records take */
    /* Storages the scene holds that a WRITE_DISCARD then replaced:
     * nothing but queued work keeps them alive, and a draw per Map would
     * otherwise hold one per draw (kd_scene_retired for the mapping
     * context's scene, kd_scene_use for another's). */
    size_t retired_bytes;
    /* Draws with shader resources whose state or view storages differ
     * from the previous such draw's (kd_bind_same_views: other storages,
     * a per-draw constant buffer, do not count): each may cost the backend
     * a resolved copy of its views (src/raster), so a scene ends at
     * KD_SCENE_MAX_TEXSETS. */
    uint32_t texsets;
    const kd_state *tex_state;
    const kd_bind *tex_bind;
    kd_state **states;            /* one reference each */
    uint32_t nstates, states_cap;
    /* WRITE_NO_OVERWRITE Maps (docs/queue.md, Map): `mapped_at_open` if
     * the scene opened while its context had one open (its draws may
     * follow one); `before_maps` once a NO_OVERWRITE Map left it open,
     * until a draw ends it (the API's draw: a draw while such a Map is
     * open goes to the next scene, which waits for the Unmap). */
    bool mapped_at_open, before_maps;
} kd_scene;

#define KD_DRAW_CHUNK 256u

/* Limits that end a scene (the API submits it and starts another). The
 * op limit bounds a scene's records (40 + 48 bytes a draw) and the
 * backend's geometry memory; it is no lower because each further scene of
 * a frame costs the soft rasterizer a pass over every tile it touches,
 * whose targets then come from memory rather than cache: bench (d),
 * 100,000 one-triangle draws a frame at 1080p, took 19% less time as one
 * scene than as two (the old limit, 65,536), and 1.44x as long as seven
 * (16,384) (docs/raster.md). */
#define KD_SCENE_MAX_OPS 131072u
#define KD_SCENE_MAX_VERTICES (4u << 20)
#define KD_SCENE_MAX_TEXSETS 512u

/* Scenes' memory kept for the next scenes of a device: a freed scene
 * (released on the worker that completed it) keeps its op, node and state
 * arrays and its draw chunks, and kd_scene_create takes it back, so a
 * steady stream of frames allocates nothing and faults no pages in.
 * Bounded: KD_RECYCLE_SCENES scenes of at most KD_RECYCLE_BYTES each;
 * larger or further ones are freed. */
#define KD_RECYCLE_SCENES 2u
#define KD_RECYCLE_BYTES (32u << 20)
typedef struct kd_recycler {
    pthread_mutex_t mu;
    kd_scene *kept[KD_RECYCLE_SCENES];
    uint32_t nkept;
} kd_recycler;
void kd_recycler_init(kd_recycler *r);
/* Frees the kept scenes; no scene of the device may be freed after. */
void kd_recycler_fini(kd_recycler *r);

/* The memory a recorded scene holds: its op, node and state arrays, its
 * draw chunks and bind records, and the storages it keeps alive that a
 * WRITE_DISCARD retired (not the state blocks, shared
 * between scenes, nor storages still current). What the queue's scene
 * budget counts (kiln_device_desc.scene_budget). */
size_t kd_scene_bytes(const kd_scene *s);
/* A WRITE_DISCARD on the scene's context replaced `st`: counted in the
 * scene's bytes if the scene holds it (once; a scene of another context
 * is charged by kd_scene_use when it takes the replacement). `st` is only
 * compared: it may be freed unless the scene holds it. */
void kd_scene_retired(kd_scene *s, const kres_storage *st);
/* What grows with a scene's ops: op and draw records, nodes, bind records
 * and retired storages (kd_scene_bytes but for spare capacity), from
 * running counts: cheap enough for every draw and clear, which end the
 * scene at the budget. */
static inline size_t kd_scene_held(const kd_scene *s)
{
    return (size_t)s->nops * (sizeof(kd_op) + sizeof(kd_draw)) +
           (size_t)s->nnodes * sizeof(kq_node) + s->bind_bytes + s->retired_bytes;
}

/* A scene, from `r`'s kept ones when it has one (r may be NULL). */
kd_scene *kd_scene_create(const kb_env *env, kd_recycler *r);
/* A zeroed draw record owned by the scene; NULL on out of memory. The
 * newest one can be given back (kd_scene_drop_draw) when recording fails. */
kd_draw *kd_scene_new_draw(kd_scene *s);
void kd_scene_drop_draw(kd_scene *s);
/* A zeroed bind record with room for `nsrv` pixel-stage and `n_vs_srv`
 * vertex-stage view storages, owned by the scene (it drops the storages'
 * references when freed); NULL on out of memory. */
kd_bind *kd_scene_new_bind(kd_scene *s, uint32_t nsrv, uint32_t n_vs_srv, uint32_t n_gs_srv);
/* The scene holds one reference to `st` for all its draws. */
bool kd_scene_hold_state(kd_scene *s, kd_state *st);
/* Adds a node for `st` of `res` (taking new references), merging with an
 * existing one (write wins). False on out of memory. */
bool kd_scene_use(kd_scene *s, kres_resource *res, kres_storage *st, int mode);
bool kd_scene_push(kd_scene *s, const kd_op *op);
void kd_scene_free(kd_scene *s);

/* Whether two draws read the same vertex, constant and shader-resource
 * storages (the index buffer aside): backends share per-draw setup then. */
bool kd_draw_same_storages(const kd_draw *a, const kd_draw *b);

/* Whether two bind records hold the same shader-resource view storages
 * (every stage's): with one state block, draws that read the same
 * textures (a backend resolves them once). */
bool kd_bind_same_views(const kd_bind *x, const kd_bind *y);

/* The storage a scene command was granted for `res` (its targets'). */
kres_storage *kd_node_storage(const kq_cmd *cmd, const kres_resource *res);

/* Adds a scene's counts (KQ_Q_*) into every query it counts into. */
void kd_scene_count(const kd_scene *s, const kq_cmd *cmd, const uint64_t counts[KQ_Q_COUNT]);

/* Number of primitives a draw makes per instance (inline: every draw
 * asks it three times, the API and the backend's two setup passes). */
static inline uint32_t kd_prim_count(kiln_topology t, uint32_t n)
{
    switch (t) {
    case KILN_TOPOLOGY_POINT_LIST:
        return n;
    case KILN_TOPOLOGY_LINE_LIST:
        return n / 2;
    case KILN_TOPOLOGY_LINE_STRIP:
        return n >= 2 ? n - 1 : 0;
    case KILN_TOPOLOGY_TRIANGLE_LIST:
        return n / 3;
    case KILN_TOPOLOGY_TRIANGLE_STRIP:
        return n >= 3 ? n - 2 : 0;
    case KILN_TOPOLOGY_LINE_LIST_ADJ:
        return n / 4;
    case KILN_TOPOLOGY_LINE_STRIP_ADJ:
        return n >= 4 ? n - 3 : 0;
    case KILN_TOPOLOGY_TRIANGLE_LIST_ADJ:
        return n / 6;
    case KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ:
        return n >= 6 ? (n - 4) / 2 : 0;
    default:
        return 0;
    }
}

/* draw_auto: the vertices stream output last wrote to `vb` past `offset`,
 * `stride` bytes each (bounded by the buffer's size). Read while the
 * command holds the buffer. */
uint32_t kd_auto_count(const kres_resource *vb, uint32_t offset, uint32_t stride);

/* ---- the backends ---- */

/* The backend that executes a device's commands, or NULL when it is not
 * built into this library (`why` then says what to install). */
const kq_backend *kd_backend_find(kiln_backend which, const char **why);

/* Defined by the backends themselves (src/raster, src/gl). */
extern const kq_backend kr_soft_backend;
#if KILN_HAVE_GL
extern const kq_backend kg_osmesa_backend;
#endif

#endif
