/*
 * raster: the soft backend. Vertex fetch and shading, clipping, setup in
 * 16.8 fixed point, binning into 64x64 tiles, tile rasterization by all
 * workers (each tile by one thread, in draw order), depth/stencil,
 * blending, texture sampling and the built-in effects.
 *
 * Contract:
 * - Everything here runs inside an executing command, on a worker (or the
 *   calling thread in SERIAL mode), after the queue granted every resource
 *   the command touches. Nothing here takes the scheduler mutex except
 *   through kq_parallel_for.
 * - Results never depend on the number of threads: work is split by tile,
 *   and within a tile primitives are processed in submission order.
 */
#ifndef KILN_RASTER_H
#define KILN_RASTER_H

#include "../driver/driver.h"

/* ---- textures and samplers as the pixel stage sees them ---- */

/* A shader-resource view resolved for one scene: the storage it reads and
 * the subresource layout. */
typedef struct kr_texture {
    const uint8_t *data;              /* storage base (NULL: empty slot) */
    const kres_subresource *subs;     /* the resource's layout */
    kiln_format format;
    uint32_t res_mip_levels;          /* mips of the resource (for indexing subs) */
    uint32_t first_mip, num_mips;     /* the view's mips */
    uint32_t slice;                   /* the view's first array slice */
    uint32_t num_slices;              /* the view's slices (cube: 6) */
    uint32_t dim;                     /* the view's kiln_srv_dimension */
    uint32_t first_element, num_elements; /* BUFFER views: data is the buffer's
                                             storage, element k at byte
                                             (first_element + k) * format size */
    /* A 2D view of one RGBA8 / BGRA8 level with storage: kiln_ps_sample
     * under a LINEAR sampler goes straight to the bilinear kernel
     * (kr_texture_quick; 0 only costs the general checks). */
    uint32_t quick;
} kr_texture;

/* kr_texture.quick for a view filled in. */
static inline uint32_t kr_texture_quick(const kr_texture *t)
{
    return t->data && t->subs && t->num_mips == 1 &&
           (t->dim == KILN_SRV_DIMENSION_DEFAULT || t->dim == KILN_SRV_DIMENSION_TEXTURE2D ||
            t->dim == KILN_SRV_DIMENSION_TEXTURE2DARRAY) &&
           (t->format == KILN_FORMAT_R8G8B8A8_UNORM || t->format == KILN_FORMAT_B8G8R8A8_UNORM);
}


/* Views the 2D path of sample.c does not read: 1D, 1D and 2D arrays
 * (through the _uvw calls), 3D and cubes, and typed buffers (their Load
 * and GetDimensions; sampling them reads zeros); sample_kinds.c does. */
static inline int kr_kind_view(const kr_texture *t)
{
    return t->dim != KILN_SRV_DIMENSION_DEFAULT && t->dim != KILN_SRV_DIMENSION_TEXTURE2D &&
           t->dim != KILN_SRV_DIMENSION_TEXTURE2DARRAY;
}

/* generate_mips of a 3D texture (sample_kinds.c; kr_generate_mips has
 * checked the format): each mip from the one above with a 2x2x2 box. */
void kr_generate_mips_3d(kres_resource *res, kres_storage *st, uint32_t first_mip, uint32_t num_mips);

/* Shared with sample_kinds.c (sample.c's own definitions, so both read
 * texels, address and quantize alike). */
/* A LOD's sampling plan (sample.c's plan_lod, shared with sample_kinds.c):
 * the filter at the chosen level(s), one or two levels and their weights. */
typedef struct kr_lod_plan {
    kiln_filter filter; /* POINT or LINEAR at the chosen level(s) */
    uint32_t passes;    /* 1 or 2 levels */
    uint32_t level[2];  /* relative to the view */
    float lw[2];        /* weight of each level */
} kr_lod_plan;
/* The plan for a LOD with its biases added (not yet clamped): clamped to
 * [min_lod, max_lod], the filter chosen (lod <= 0 magnifies), then the
 * level(s) among the view's nl. */
void kr_plan_lod(const kd_sampler *s, uint32_t nl, float lod, kr_lod_plan *p);
int32_t kr_address(int32_t i, int32_t size, kiln_address mode);
/* Tests: kiln_ps_sample's wide BC blocks (sample.c, kr_sample_bc_avx512)
 * on (0, the default), off (1), or on and counting the blocks it sampled
 * (2: kr_bc_wide_count). */
void kr_bc_wide_force(int mode);
uint64_t kr_bc_wide_count(void);
int32_t kr_split_coord(float x, int32_t *frac256);
int32_t kr_floor_coord(float x);
void kr_decode_texel(kiln_format f, const uint8_t *p, float o[4]);
int kr_format_sampleable(kiln_format f);
int kr_compare(kiln_compare f, float ref, float texel);
const struct kd_sampler *kr_default_sampler(void);

/* A level as the AVX2 kernels read it: CLAMP or WRAP on a power-of-two
 * axis (kr_fused_level_ok). Read directly (sample.c's lvk, in plain C)
 * when both axes have at least 2 texels and rows are under 32 KiB: a
 * pixel's texel pairs as two 8-byte reads. Otherwise, and for the pixels
 * of a block whose pair wraps around a WRAP axis, texel by texel: each
 * index masked (WRAP) and clamped to [0, size - 1], which is address()'s
 * texel for these modes. */
typedef struct kr_fused_level {
    const uint8_t *base;   /* row 0 */
    size_t pitch;
    float fw, fh;          /* size in texels */
    int32_t mx, my;        /* applied to the start index: -1 (CLAMP) or size - 1 (WRAP) */
    int16_t hx, hy;        /* the largest start index per axis */
    int16_t sx, sy;        /* WRAP: size - 1, where the pair wraps; -1 elsewhere */
    int32_t lx, ly;        /* size - 1: the last texel per axis */
    uint32_t hxy, sxy;     /* hx | hy << 16 and sx | sy << 16 as 16-bit words: the
                            * quads kernels load each as one 32-bit value */
    uint32_t mul;          /* pitch << 16 | 4: madd of a 16-bit pair (x, y) gives its offset */
    bool clamp2;           /* both axes CLAMP */
    bool direct;           /* pairs read as 8 bytes (else texel by texel) */
} kr_fused_level;

/* kiln_ps_sample's prepared shortcut: views in slots below KR_PREPARED
 * that are RGBA8 / BGRA8 2D views under a LINEAR (min and mag),
 * non-BORDER, non-anisotropic sampler whose every level the AVX2 kernels
 * read (the sampler of the same slot, else slot 0's) have their levels
 * (up to KR_PREP_LEVELS) set up once per draw (kr_textures_prepare)
 * instead of at every call. */
#define KR_PREPARED 4
#define KR_PREP_LEVELS 16

/* The bilinear rows kernel of the chosen SIMD level (fused.h) on one
 * prepared level: texel bytes 0..3 of the block's 16 pixels to rgba +
 * 16 * b, bytes 0 and 2 exchanged when swap (a BGRA8 view). */
typedef void (*kr_rows_fn)(const kr_fused_level *L, const float *u, const float *v, float *rgba,
                           int swap);

/* kiln_ps_sample's POINT shortcut: a view of one RGBA8 / BGRA8 level
 * under a sampler whose min and mag filters are POINT, with no BORDER
 * axis, read as the general path does (texel floor(u w), floor(v h) of
 * the coordinates clamped to +-2^30, NaN to -2^30, each axis's address
 * mode on the index, each byte b read as b / 255.0f). */
typedef struct kr_point_level {
    const uint8_t *base; /* row 0 */
    int32_t pitch;       /* bytes per row */
    int32_t w, h;        /* texels */
    float fw, fh;        /* w and h as floats */
    uint8_t au, av;      /* kiln_address of each axis (never BORDER) */
} kr_point_level;

/* A POINT kernel: the block's 16 pixels from L to rgba + 16 * c, bytes 0
 * and 2 exchanged when swap (a BGRA8 view). */
typedef void (*kr_point_fn)(const kr_point_level *L, const float *u, const float *v, float *rgba,
                            int swap);

struct kiln_ps_textures {
    kr_texture tex[KILN_MAX_SHADER_RESOURCES];
    const kd_sampler *samp[KILN_MAX_SAMPLERS]; /* NULL: the default sampler */
    uint8_t prep_sampler[KR_PREPARED];         /* the sampler slot + 1 prepared for; 0: none */
    uint8_t prep_levels[KR_PREPARED];          /* levels prepared: the view's, at most KR_PREP_LEVELS */
    kr_fused_level prep[KR_PREPARED][KR_PREP_LEVELS];
    kr_rows_fn rows; /* set with prep_sampler: the kernel for one-level slots */
    /* The POINT shortcut of each slot below KR_PREPARED, at every SIMD
     * level: the sampler slot + 1 it was set up for (0: none), the level,
     * and the kernel that reads it. */
    uint8_t point_sampler[KR_PREPARED];
    kr_point_level point[KR_PREPARED];
    kr_point_fn point_fn[KR_PREPARED];
};

/* Fills prep_sampler, prep_levels and prep of a set whose tex and samp
 * are filled in, when the chosen SIMD level is AVX2 or above (else clears
 * prep_sampler), and point_sampler, point and point_fn at every level. A
 * set zeroed and never prepared takes kiln_ps_sample's other paths, with
 * the same results. */
void kr_textures_prepare(struct kiln_ps_textures *t);

/* Reads texel (x, y) of mip `level` (absolute) as RGBA float. */
void kr_texel_fetch(const kr_texture *t, uint32_t level, uint32_t x, uint32_t y, float rgba[4]);

/* generate_mips: fills mips first_mip+1 .. first_mip+num_mips-1 of each
 * slice in [first_slice, first_slice + num_slices) from the mip above
 * (3D textures: a 2x2x2 box over the whole mip). */
void kr_generate_mips(kres_resource *res, kres_storage *st, uint32_t first_mip, uint32_t num_mips,
                      uint32_t first_slice, uint32_t num_slices);

/* Per-device memory the soft backend keeps between scenes (created with
 * the device, freed after its workers stop). */
struct kr_pool *kr_pool_create(const kb_env *env);
void kr_pool_destroy(struct kr_pool *pool);

#endif
