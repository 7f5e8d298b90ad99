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
} kr_texture;

struct kiln_ps_textures {
    kr_texture tex[KILN_MAX_SHADER_RESOURCES];
    const kd_sampler *samp[KILN_MAX_SAMPLERS]; /* NULL: the default sampler */
};

/* Reads texel (x, y) of mip `level` (absolute) as RGBA float. */
void kr_texel_fetch(const kr_texture *t, uint32_t level, uint32_t x, uint32_t y, float rgba[4]);

/* generate_mips: fills mips first_mip+1 .. first_mip+num_mips-1 of each
 * slice in [first_slice, first_slice + num_slices) from the mip above. */
void kr_generate_mips(kres_resource *res, kres_storage *st, uint32_t first_mip, uint32_t num_mips,
                      uint32_t first_slice, uint32_t num_slices);

/* Per-device memory the soft backend keeps between scenes (created with
 * the device, freed after its workers stop). */
struct kr_pool *kr_pool_create(const kb_env *env);
void kr_pool_destroy(struct kr_pool *pool);

#endif
