/* Geometry jobs: a range of one draw's primitives for one instance, shaded,
 * clipped, set up and binned into per-tile lists of the job's own arena. */
#ifndef KILN_RASTER_GEOM_H
#define KILN_RASTER_GEOM_H

#include "prim.h"

#include <stdatomic.h>

typedef struct kr_chunk {
    struct kr_chunk *next;
    size_t size, used;
    uint8_t data[];
} kr_chunk;

/* Free chunks kept per device between waves and scenes, so a frame does
 * not fault fresh pages in every time (bounded: KR_POOL_MAX bytes). */
#define KR_POOL_CLASSES 7 /* 16 KiB << 0..6 */
#define KR_POOL_MAX (64u << 20)
typedef struct kr_pool {
    pthread_mutex_t mu;
    const kb_env *env;
    kr_chunk *free[KR_POOL_CLASSES];
    size_t bytes;
    /* Hidden surface removal's per-tile state (kr_hsr), one slot per
     * tile running at once: made at the first scene that defers (mu
     * held), kept until the device goes. A tile that finds every slot
     * busy (more threads helping than slots) shades in order. */
    struct kr_hsr *hsr;
    uint32_t nhsr;    /* slots made (at most 32) */
    uint32_t threads; /* the device's execution threads (0: SERIAL) */
    _Atomic uint32_t hsr_busy;
    /* Tile buffers (kr_tilebuf), as many slots as kr_hsr's, made at the
     * first scene that may use them (mu held), kept until the device goes;
     * each slot's planes made by the tile that first needs them. */
    struct kr_tilebuf *tb;
    uint32_t ntb;
    _Atomic uint32_t tb_busy;
    bool prefetchw; /* the CPU has PREFETCHW (kr_arena_alloc's write prefetch) */
} kr_pool;

/* A tile's own copy of some of its planes while the tile runs
 * (tilebuf.c, docs/raster.md "Tile buffers"): per plane (the targets,
 * then the depth-stencil), per sample, KR_TILE rows of KR_TILE 4-byte
 * texels, KR_TILEBUF_PITCH bytes apart, the samples KR_TILE rows apart,
 * 64-byte aligned. */
#define KR_TILEBUF_PITCH (KR_TILE * 4u)
#define KR_TILEBUF_SAMPLE ((size_t)KR_TILE * KR_TILEBUF_PITCH) /* a sample's bytes */
typedef struct kr_tilebuf {
    void *raw[KILN_MAX_RENDER_TARGETS + 1];        /* the allocations, NULL: not made yet */
    uint32_t samples[KILN_MAX_RENDER_TARGETS + 1]; /* the samples raw[k] holds */
} kr_tilebuf;

/* The pool's slots, made on first use; false: none (out of memory). */
bool kr_pool_hsr_ready(kr_pool *p);
/* A free slot, or NULL; kr_pool_hsr_put gives it back. */
struct kr_hsr *kr_pool_hsr_get(kr_pool *p);
void kr_pool_hsr_put(kr_pool *p, struct kr_hsr *h);
/* The same for tile buffers. */
bool kr_pool_tilebuf_ready(kr_pool *p);
kr_tilebuf *kr_pool_tilebuf_get(kr_pool *p);
void kr_pool_tilebuf_put(kr_pool *p, kr_tilebuf *b);
/* Plane k of slot b for `samples` samples (the slot's holder's alone: no
 * lock), made on first use and again when it holds fewer; NULL: out of
 * memory. */
uint8_t *kr_tilebuf_plane(kr_pool *p, kr_tilebuf *b, uint32_t k, uint32_t samples);

/* A tile's tile buffers while it runs (tile_task): start with pool (NULL:
 * none for the scene) and home (the scene's kr_fb), the rest zero. */
typedef struct kr_tile_planes {
    kr_pool *pool;
    const kr_fb *home;
    kr_tilebuf *slot; /* taken at the first clear that fits */
    uint32_t held;    /* bits of the planes held, k as kr_tilebuf's */
    uint8_t *buf[KILN_MAX_RENDER_TARGETS + 1];
    kr_fb fb; /* the tile's copy of fb, once a plane is held */
} kr_tile_planes;

/* Before a clear of plane k that something follows in the tile (a draw,
 * a clear; anything in a wave before the last), `full`: it writes every
 * bit of the texels. Holds the plane when it fits (4-byte texels, no
 * other slot on its bytes) and a slot and its plane are there, and
 * returns the kr_fb the tile goes on with: fb, or the tile's copy with
 * the plane moved to the buffer. */
const kr_fb *kr_tilebuf_clear(kr_tile_planes *tp, const kr_fb *fb, uint32_t k, bool full, int x0,
                              int y0);
/* At the tile's end (of the wave): the held planes written back to the
 * targets' rect [x0, x1) x [y0, y1), the slot given back. */
void kr_tilebuf_finish(kr_tile_planes *tp, int x0, int y0, int x1, int y1);

typedef struct kr_arena {
    const kb_env *env;
    kr_pool *pool;       /* may be NULL */
    kr_chunk *head;
    bool failed;         /* an allocation failed: the job's output is void */
} kr_arena;

void *kr_arena_alloc(kr_arena *a, size_t size);
void *kr_arena_alloc_lines(kr_arena *a, size_t size);
void kr_arena_free(kr_arena *a);

/* Triangles set up eight at a time so far (setup8.h), for tests. */
uint64_t kr_setup8_count(void);

/* Jobs a scene sets up per wave at most (backend.c): every job's arena
 * takes at least 16 KiB, its bins 16 bytes a tile, and a scene alternating
 * draws and clears is a job per draw and per clear. */
#define KR_WAVE_JOBS 1024u

/* A job's primitives of one tile: n pointers from p (in pieces of
 * KR_BIN_PIECE pointers or more, filled tile after tile). */
#define KR_BIN_PIECE 8192u
typedef struct kr_bin {
    const struct kr_prim *const *p;
    uint32_t n;
} kr_bin;

/* A range of one draw's primitives for one instance. */
typedef struct kr_seg {
    const kr_drawx *dx;           /* may be shared by consecutive draws */
    const kd_draw *d;
    uint32_t instance;
    uint32_t first, count;
    uint32_t strip_start;         /* indexed strips: position after the last
                                     cut before `first` (0 if none) */
} kr_seg;

/* Indexed strips: is the index at `pos` the strip-cut value? */
bool kr_is_cut(const kr_drawx *dx, const kd_draw *d, uint32_t pos);

/* A primitive a job streamed out: nv vertices of `stride` floats (the
 * shaded or emitted vertex: position, then varyings), in the job's arena. */
typedef struct kr_so_prim {
    struct kr_so_prim *next;
    uint32_t nv, stride;
    float v[];
} kr_so_prim;

/* A job: one clear op, or consecutive segments (of one or many draws) whose
 * primitives are binned together, in order. */
typedef struct kr_job {
    const kd_op *clear;           /* a clear op, or NULL */
    const kr_seg *segs;
    uint32_t nsegs;
    uint32_t prims;
    kr_arena arena;
    /* Its primitives by tile, in the order it binned them: tile t's are
     * bins[t].p[0 .. bins[t].n) ([tiles_x * tiles_y]; NULL: the job
     * binned nothing). */
    const struct kr_bin *bins;
    struct kr_binstaging *stage; /* while it bins (geom.c) */
    /* Pipeline statistics of the job (summed per scene for queries): */
    uint64_t vs_invocations;      /* vertices shaded */
    uint64_t gs_invocations;      /* geometry shader calls */
    uint64_t gs_primitives;       /* primitives they emitted */
    uint64_t c_invocations;       /* primitives that reached clipping */
    uint64_t c_primitives;        /* primitives the clipper output */
    /* Stream output: the primitives the job's segments streamed out, in
     * input then emission order. The scene writes the jobs' lists to the
     * buffers in job order after each geometry wave (backend.c), so the
     * buffers' bytes do not depend on which worker ran which job. */
    kr_so_prim *so_head, *so_tail;
} kr_job;

typedef struct kr_geom_ctx {
    const kr_fb *fb;
    uint32_t tiles_x, tiles_y;
    uint32_t nslices;             /* array slices of the targets (layered) */
} kr_geom_ctx;

/* What one geometry shader call emitted: n vertices of `stride` floats,
 * each with its SV_PrimitiveID and whether it starts a strip. */
typedef struct kr_gs_out {
    float v[KILN_GS_MAX_OUTPUT_SCALARS];
    uint32_t prim_id[KILN_GS_MAX_OUTPUT_SCALARS / 4];
    uint32_t rt_index[KILN_GS_MAX_OUTPUT_SCALARS / 4]; /* 0 unless declared */
    bool restart[KILN_GS_MAX_OUTPUT_SCALARS / 4];
    uint32_t n, max, stride;
} kr_gs_out;

/* Runs the draw's geometry shader on one input primitive (nv shaded
 * vertices of dx->out_stride floats) into *out (gs.c). */
void kr_gs_invoke(const kr_drawx *dx, const float *const *v, uint32_t nv, uint32_t prim_id,
                  uint32_t instance, kr_gs_out *out);

/* Shades, clips, sets up and bins the job's primitives. */
void kr_geom_run(const kr_geom_ctx *g, kr_job *job);

/* Tests: whether the three-lane screen mapping of an unclipped triangle
 * (x86-64) gives the one-vertex mapping's fields for v[0..2] (positions
 * x y z w) in viewport vp: the same bits, a NaN only NaN on both sides
 * and in a vertex marked bad; true elsewhere. */
bool kr_screen3_same(const kiln_viewport *vp, const float *const v[3]);

#endif
