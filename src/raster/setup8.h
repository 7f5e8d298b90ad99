/*
 * Triangle setup of eight triangles at once (setup8_lanes.h, built by
 * setup_avx512.c for the AVX-512 level and setup_avx2.c for the AVX2
 * level), for geom.c's TRIANGLE_LIST draws without a geometry shader or
 * stream output, with solid fill and no depth bias: the outcodes, screen
 * mapping and setup arithmetic of outcode, to_screen3 and setup_tri, one
 * triangle per lane, with the same operations in the same order, so the
 * same bits. geom.c writes the records and bins them in primitive order,
 * and sends a triangle with a vertex outside a clip plane through
 * clip_setup (which drops it or clips it).
 */
#ifndef KILN_RASTER_SETUP8_H
#define KILN_RASTER_SETUP8_H

#include <stdbool.h>
#include <stdint.h>

/* x86-64 builds compile it; geom.c runs it at the AVX2 and AVX-512
 * levels. */
#if defined(__x86_64__)
#define KR_SETUP8 1
#else
#define KR_SETUP8 0
#endif

/* What the eight triangles share: the draw's viewport, clip and raster
 * constants. */
typedef struct kr_tri8_consts {
    float vp_x, vp_y, vp_w, vp_h, vp_min, vp_range; /* range: max_depth - min_depth */
    float guard;                                    /* clip_ctx.guard */
    bool depth_clip;
    int32_t rx0, ry0, rx1, ry1; /* setup_ctx's raster rect */
    int64_t reach;              /* setup_tri's: 96 on a 4x target, else 0 */
    bool cull_front, cull_back; /* the rasterizer state's cull mode */
    bool front_ccw;
    uint32_t ncomp; /* varying components (nvary * 4) */
} kr_tri8_consts;

enum {
    KR_TRI8_DROP = 0, /* nothing to draw: a bad vertex (NaN), culled, no area, no pixel */
    KR_TRI8_EMIT = 1, /* set up: the fields below are the record's */
    KR_TRI8_CLIP = 2, /* a vertex is outside a clip plane: clip_setup's */
};

/* Per lane (triangle i of the eight), setup_tri's record fields: the
 * vertices in clockwise order, edges, planes. */
typedef struct kr_tri8 {
    uint8_t status[8];
    uint8_t front[8];
    int32_t minx[8], miny[8], maxx[8], maxy[8];
    int64_t a[3][8], b[3][8], c[3][8];
    float ox[8], oy[8];
    float z[3][8], q[3][8];
} kr_tri8;

/* Triangle i's vertex m is the row at rows + off[m][i] (floats: x, y,
 * z, w, then the varyings). attr receives ncomp * 3 * 8 floats:
 * component k's plane entry e (value at vertex 0, x and y gradient) of
 * lane i at attr[(3 * k + e) * 8 + i]. */
void kr_setup_tri8_avx512(const kr_tri8_consts *k, const float *rows, const int32_t off[3][8],
                          kr_tri8 *out, float *attr);
/* The same lanes with AVX2 alone: the same bits. */
void kr_setup_tri8_avx2(const kr_tri8_consts *k, const float *rows, const int32_t off[3][8],
                        kr_tri8 *out, float *attr);
/* Either of them (geom.c picks one per draw's level). */
typedef void (*kr_setup_tri8_fn)(const kr_tri8_consts *k, const float *rows,
                                 const int32_t off[3][8], kr_tri8 *out, float *attr);

#endif
