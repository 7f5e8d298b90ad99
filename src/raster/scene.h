/*
 * The scene: consecutive draws (and clears) to one set of render targets,
 * gathered by the API and executed as one command by the raster backend.
 *
 * Ownership: a kr_state (the pipeline state a draw captured) is immutable
 * and reference counted; it holds references to every object it names. A
 * kr_draw holds references to the storages it reads (captured when the draw
 * was called, so WRITE_DISCARD renames between draws are seen correctly).
 * A scene owns its ops, draws and node array; kr_scene_free releases all.
 */
#ifndef KILN_RASTER_SCENE_H
#define KILN_RASTER_SCENE_H

#include "../queue/queue.h"
#include "raster.h"

typedef struct kr_element {
    kiln_format format;
    uint32_t slot, offset, per_instance, step;
} kr_element;

typedef struct kr_stencil_face {
    kiln_stencil_op fail, zfail, pass; /* resolved: never DEFAULT */
    kiln_compare func;
} kr_stencil_face;

typedef struct kr_blend_rt {
    uint32_t enable;
    kiln_blend_factor src, dst, src_a, dst_a; /* resolved */
    kiln_blend_op op, op_a;
    uint32_t write_mask;                     /* 0..15 */
} kr_blend_rt;

typedef struct kr_state {
    atomic_uint refs;
    const kb_env *env;
    /* shaders */
    kiln_vs_fn vs;
    void *vs_user;
    uint32_t vs_inputs, vs_varyings;
    kiln_ps_fn ps;
    void *ps_user;
    uint32_t ps_varyings, ps_outputs, ps_flags;
    /* input assembly */
    kr_element elems[KILN_MAX_INPUT_ELEMENTS];
    uint32_t nelems;
    kres_resource *vb[KILN_MAX_VERTEX_BUFFERS];
    uint32_t vb_stride[KILN_MAX_VERTEX_BUFFERS], vb_offset[KILN_MAX_VERTEX_BUFFERS];
    kres_resource *ib;
    kiln_index_format ib_format;
    uint32_t ib_offset;
    kiln_topology topology;
    /* resources of the stages */
    kres_resource *vs_cb[KILN_MAX_CONSTANT_BUFFERS], *ps_cb[KILN_MAX_CONSTANT_BUFFERS];
    kres_view *srv[KILN_MAX_SHADER_RESOURCES];
    kr_sampler samp[KILN_MAX_SAMPLERS];
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
    kr_stencil_face front, back;
    kr_blend_rt blend[KILN_MAX_RENDER_TARGETS];
    float blend_factor[4];
} kr_state;

void kr_state_ref(kr_state *s);
void kr_state_unref(kr_state *s);

typedef struct kr_draw {
    kr_state *state;
    uint32_t indexed;
    uint32_t count;               /* vertices or indices */
    uint32_t start;               /* first vertex or index */
    int32_t base_vertex;
    uint32_t instances, start_instance;
    /* storages captured at draw time (references held; NULL: unbound) */
    kres_storage *vb_st[KILN_MAX_VERTEX_BUFFERS], *ib_st;
    kres_storage *vs_cb_st[KILN_MAX_CONSTANT_BUFFERS], *ps_cb_st[KILN_MAX_CONSTANT_BUFFERS];
    kres_storage *srv_st[KILN_MAX_SHADER_RESOURCES];
} kr_draw;

typedef enum kr_op_kind { KR_OP_CLEAR_RT, KR_OP_CLEAR_DS, KR_OP_DRAW } kr_op_kind;

typedef struct kr_op {
    kr_op_kind kind;
    uint32_t rt;                  /* CLEAR_RT: target index */
    uint8_t texel[16];            /* CLEAR_RT: packed color; CLEAR_DS: 32-bit word */
    uint32_t mask;                /* CLEAR_DS: bits of the word written */
    kr_draw *draw;                /* DRAW */
} kr_op;

typedef struct kr_scene {
    const kb_env *env;
    kres_view *rtv[KILN_MAX_RENDER_TARGETS]; /* references held */
    uint32_t nrt;
    kres_view *dsv;
    kr_op *ops;
    uint32_t nops, ops_cap;
    uint64_t vertices;            /* work estimate: vertices submitted */
    /* Nodes for the command: one per storage (deduplicated through a small
     * open-addressing table of storage pointers -> node index + 1). */
    kq_node *nodes;
    uint32_t nnodes, nodes_cap;
    uint32_t *hash;
    uint32_t hash_cap;
} kr_scene;

/* Limits that end a scene (the API submits it and starts another). */
#define KR_SCENE_MAX_OPS 65536u
#define KR_SCENE_MAX_VERTICES (4u << 20)

kr_scene *kr_scene_create(const kb_env *env);
/* Drops a draw's state block and captured storages, and frees it. */
void kr_draw_free(const kb_env *env, kr_draw *d);
/* Adds a node for `st` of `res` (taking new references), merging with an
 * existing one (write wins). False on out of memory. */
bool kr_scene_use(kr_scene *s, kres_resource *res, kres_storage *st, int mode);
bool kr_scene_push(kr_scene *s, const kr_op *op);
void kr_scene_free(kr_scene *s);

/* Number of primitives a draw makes per instance (geom.c). */
uint32_t kr_prim_count(kiln_topology t, uint32_t count);

/* Per-device memory the backend keeps between scenes (created with the
 * device, freed after its workers stop). */
struct kr_pool *kr_pool_create(const kb_env *env);
void kr_pool_destroy(struct kr_pool *pool);

/* The soft backend's entry points for the queue. */
extern const kq_backend kr_soft_backend;

#endif
