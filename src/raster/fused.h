/*
 * The fused path of KILN_EFFECT_TEXTURE (sample.c): one texture level as
 * its 8-pixel AVX2 kernel reads it, and the kernel (fused_avx2.c, compiled
 * with -mavx2 and reached only on CPUs that have it).
 */
#ifndef KILN_RASTER_FUSED_H
#define KILN_RASTER_FUSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A level read directly: CLAMP or WRAP on a power-of-two axis, both axes
 * at least 2 texels, rows under 32 KiB (sample.c's lvk, in plain C). */
typedef struct kr_fused_level {
    const uint8_t *base;   /* row 0 */
    size_t pitch;
    float fw, fh;          /* size in texels */
    int32_t mx, my;        /* applied to the start index: -1 (CLAMP) or size - 1 (WRAP) */
    int16_t hx, hy;        /* the largest start index per axis */
    int16_t sx, sy;        /* WRAP: size - 1, where the pair wraps; -1 elsewhere */
    bool clamp2;           /* both axes CLAMP */
} kr_fused_level;

struct kr_prim;

/* The 16 pixels of the 4x4 block at (x, y) of triangle p: u and v
 * (varying 0) as shade_block interpolates them, filtered bilinearly on
 * `k`, each channel's sum S rounded to a byte as (S + 32768) >> 16, texel
 * bytes 0 and 2 exchanged when swap, stored to the 4 rows at dst under
 * mask. Returns false, having written nothing, when a pixel's pair of
 * texels wraps around a WRAP axis (the caller's SSE2 kernel reads those). */
bool kr_fused_tri_avx2(const kr_fused_level *k, const struct kr_prim *p, int x, int y, int swap,
                       uint8_t *dst, size_t pitch, uint32_t mask);

#endif
