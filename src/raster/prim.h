/*
 * Binned primitives and the per-draw execution context shared by geometry
 * (geom.c) and tile rasterization (tile.c).
 */
#ifndef KILN_RASTER_PRIM_H
#define KILN_RASTER_PRIM_H

#include "raster.h"

#include <string.h>

#define KR_TILE 64
#define KR_SUBPIXEL 256 /* 16.8 fixed point */

struct kr_prim;
struct kr_fb;
struct kr_drawx;

/* Writes a block's covered pixels of one 8-bit RGBA / BGRA target (see
 * kr_write8_select). */
typedef void (*kr_write8_fn)(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch, int x,
                             int y, const float *col, uint32_t mask);

/* A draw's specialized whole-block pixel path (see kr_block_select):
 * shades, tests and writes the covered pixels of the 4x4 block at (x, y)
 * exactly as the general path would, or returns false, having written
 * nothing, for the general path to do it. */
typedef bool (*kr_block_fn)(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                            uint32_t mask);

/* A draw's specialized shading of a block (see kr_shade_select): called
 * by shade_block with the pixels that passed the early depth and stencil
 * test; shades them and writes render target 0 exactly as the general
 * path's interpolate, pixel shader and output would, or returns false,
 * having written nothing, for them to do it. */
typedef bool (*kr_shade_fn)(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                            uint32_t mask);

/* A draw's blocks of a rect inside a triangle (see kr_span_select): the
 * rect [x0, x1) x [y0, y1), within one tile, has every pixel center
 * inside all three edges; shades the blocks that cover it, each with its
 * pixels in the rect, exactly as kr_drawx.direct would block by block
 * (shade_block where direct is NULL: kr_general_span_select's span), in
 * raster_tri's order with its target lines fetched ahead, or returns
 * false, having written nothing. */
typedef bool (*kr_span_fn)(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0, int x1,
                           int y1);
/* A triangle's rect [x0, x1) x [y0, y1) of at most 4x4 pixels in a tile
 * (its box, the tile and the scissor: clip_to_prim's), as one block at
 * (x0, y0): its pixels' coverage found there and the covered ones shaded,
 * exactly as the draw's direct function would from raster_window's mask;
 * returns false, having done nothing, when some edge value of the rect
 * does not fit in int32 (the caller's general path then). */
typedef bool (*kr_corner_fn)(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0,
                             int x1, int y1);

/* A draw ready to execute: everything resolved to pointers. */
typedef struct kr_drawx {
    const kd_draw *d;              /* the first draw it was built for */
    const kd_state *s;
    const uint8_t *vb[KILN_MAX_VERTEX_BUFFERS];
    size_t vb_size[KILN_MAX_VERTEX_BUFFERS];  /* bytes from vb[i] on */
    const void *vs_cb[KILN_MAX_CONSTANT_BUFFERS], *ps_cb[KILN_MAX_CONSTANT_BUFFERS];
    uint32_t vs_cb_size[KILN_MAX_CONSTANT_BUFFERS], ps_cb_size[KILN_MAX_CONSTANT_BUFFERS];
    /* Views and samplers of the pixel and vertex stages, NULL when the
     * stage binds no view (sampling reads zeros then); shared by the
     * contexts of draws that bind the same ones (tex_owner built them). */
    const struct kiln_ps_textures *tex, *vs_tex, *gs_tex;
    const kd_draw *tex_owner;
    uint32_t nvary;                /* varyings interpolated: the PS's count */
    uint32_t vmask;                /* of their components, those the PS reads
                                      (kd_state.ps_reads): the others are 0 */
    uint32_t out_stride;           /* floats per shaded vertex */
    bool early_z;
    bool wide;                     /* the AVX2 level is chosen: pixel_avx2.c */
    bool wide16;                   /* the AVX-512 level is chosen: pixel_avx512.c */
    /* shade_block's output, chosen per draw (kr_output_select): 0
     * output(), 1 write8 on target 0, 2 nothing written */
    uint8_t out1;
    kr_write8_fn write8; /* or NULL */
    /* Bytes per texel of target 0 when the draw reads it (blending or a
     * partial write mask), else 0 (kr_output_select): raster_tri fetches
     * its next lines ahead. */
    uint8_t ahead_rt;
    float depth_r;                 /* depth bias unit of the depth format */
    kr_block_fn block;             /* specialized pixel path, or NULL */
    kr_shade_fn shade;             /* specialized whole-block shading, or NULL */
    kr_block_fn direct;            /* block, or shade (after the early depth
                                      test if any), when they settle a block
                                      (kr_direct_select), or NULL */
    kr_span_fn span;               /* direct over a rect (kr_span_select), or
                                      shade_block's general path over one
                                      (kr_general_span_select), or NULL */
    bool vs_writes;                /* the VS writes every output float
                                      (kr_effect_vs_writes) */
    bool hsr;                      /* its triangles' shading may wait for the
                                      tile's visibility (kr_hsr_select) */
    uint8_t direct_any;            /* direct takes a block at any pixel, not
                                      only at multiples of 4: 0 no, 1 yes, 2
                                      yes and counted (kr_direct_any_origin) */
    kr_corner_fn corner4;          /* with direct_any: direct's kernel for a
                                      rect of at most 4x4 pixels, coverage
                                      and block in one call, or NULL */
    _Alignas(16) unsigned char block_data[96]; /* its per-draw constants */
    _Alignas(16) unsigned char shade_data[80]; /* shade's (kr_shade_select) */
} kr_drawx;

typedef enum kr_prim_kind { KR_TRI = 0, KR_LINE, KR_POINT } kr_prim_kind;

typedef struct kr_prim {
    uint8_t kind;
    uint8_t front;
    uint16_t slice;                   /* render-target array slice */
    uint32_t prim_id;                 /* SV_PrimitiveID */
    const kr_drawx *dx;
    int32_t minx, miny, maxx, maxy;   /* pixels, [min, max) */
    union {
        /* Triangles: edge i is E = a*px + b*py + c over 16.8 pixel-center
         * coordinates, inside when E >= 0 (the fill rule's bias is in c). */
        struct {
            int64_t a[3], b[3], c[3];
        };
        /* Lines: endpoints in pixels. */
        struct {
            float x0, y0, x1, y1;
        };
    };
    /* Planes in pixels relative to (ox, oy): f = f0 + fx * dx + fy * dy.
     * Lines: f along t in [0, 1] (f0 + fx * t). Points: constants. */
    float ox, oy;
    float z[3], q[3];                 /* depth (with bias) and 1/w planes */
    float *attr;                      /* nvary*4 planes of attribute / w */
} kr_prim;

/* Framebuffer of one scene. */
typedef struct kr_fb {
    uint8_t *rt[KILN_MAX_RENDER_TARGETS];
    uint32_t rt_pitch[KILN_MAX_RENDER_TARGETS];
    kiln_format rt_format[KILN_MAX_RENDER_TARGETS];
    uint32_t nrt;
    uint8_t *ds;
    uint32_t ds_pitch;
    kiln_format ds_format;
    uint32_t width, height;
    /* Samples per pixel of every target (1 or 4); with 4, sample k of a
     * target is at rt[r] + k * rt_plane[r] (ds + k * ds_plane). */
    uint32_t samples;
    size_t rt_plane[KILN_MAX_RENDER_TARGETS];
    size_t ds_plane;
    /* Counting for queries, one tile's: [0] pixels shaded, [1] samples
     * that passed (depth, stencil, discard). NULL: not counting. */
    uint64_t *counts;
    /* The tile's deferred shading (kr_hsr), or NULL: none. */
    struct kr_hsr *hsr;
} kr_fb;

/* Edge k of triangle p over a window of pixel centers from (px, py) (16.8
 * fixed point) across cols more columns and rows more rows: its value at
 * the first center, *e, and its steps a pixel right and down, *sx and
 * *sy, as 32-bit lanes take them; false when some value in the window
 * does not fit in int32 (the lanes' wrapping adds give the exact values
 * only then). raster_window's and the corner4 kernels' check. */
static inline bool kr_edge_window32(const kr_prim *p, int k, int64_t px, int64_t py, int64_t cols,
                                    int64_t rows, uint32_t *e, uint32_t *sx, uint32_t *sy)
{
    const int64_t stepx = p->a[k] * KR_SUBPIXEL, stepy = p->b[k] * KR_SUBPIXEL;
    const int64_t e0 = p->a[k] * px + p->b[k] * py + p->c[k];
    const int64_t dx = stepx * cols, dy = stepy * rows;
    const int64_t lo = e0 + (dx < 0 ? dx : 0) + (dy < 0 ? dy : 0);
    const int64_t hi = e0 + (dx > 0 ? dx : 0) + (dy > 0 ? dy : 0);
    *e = (uint32_t)e0;
    *sx = (uint32_t)stepx;
    *sy = (uint32_t)stepy;
    return lo >= INT32_MIN && hi <= INT32_MAX;
}

/* Bits of the 16 block pixels whose column is in [x0, x1) and row in
 * [y0, y1), for a block at (bx, by): all of them, with no more work, for
 * a block inside the rect (most of a big rect's). */
static inline uint32_t kr_rect_mask(int bx, int by, int x0, int y0, int x1, int y1)
{
    if (bx >= x0 && by >= y0 && bx + 4 <= x1 && by + 4 <= y1)
        return 0xffffu;
#define SPAN4(lo, hi)                                                                              \
    ((15u >> (4 - ((hi) < 0   ? 0                                                                  \
                   : (hi) > 4 ? 4                                                                  \
                              : (hi)))) &                                                          \
     ~(15u >> (4 - ((lo) < 0   ? 0                                                                 \
                    : (lo) > 4 ? 4                                                                 \
                               : (lo)))))
    /* SPAN4: bits [lo, hi) of four, from the rect's bounds relative to
     * the block. */
    uint32_t cols = SPAN4(x0 - bx, x1 - bx), rows = SPAN4(y0 - by, y1 - by);
#undef SPAN4
    /* Row r's bit to bit 4r, then one copy of the columns per row (the
     * products do not overlap, so there is no carry). */
    uint32_t spread = (rows & 1u) | (rows & 2u) << 3 | (rows & 4u) << 6 | (rows & 8u) << 9;
    return cols * spread;
}

/* The target lines a row of blocks reads next (a draw that blends or
 * writes some channels only: kr_drawx's ahead_rt, bytes per texel),
 * fetched one line of 16 pixels ahead. At the block that starts a line,
 * the next line of the block's four rows; at the row's last line, the
 * first line of the next row of blocks. The hardware prefetcher does not
 * follow the four interleaved row streams: on bench (c+), 16 blended
 * layers, the blend's target loads waited on L2 (docs/raster.md has the
 * figures, and the variants measured and dropped). always_inline: GCC
 * finds a function whose only effect is a prefetch pure, and drops the
 * call. */
static inline __attribute__((always_inline)) void kr_fetch_ahead(const uint8_t *plane,
                                                                 uint32_t pitch, uint32_t bytes,
                                                                 int bx, int by, int x0, int x1,
                                                                 int y1)
{
#if defined(__GNUC__)
    int nx = bx + 16, ny = by;
    if (nx >= x1) { /* the next row of blocks */
        nx = x0 & ~3;
        ny = by + 4;
        if (ny >= y1)
            return;
    }
    const uint8_t *at = plane + (size_t)ny * pitch + (size_t)nx * bytes;
    for (int r = 0; r < 4; r++)
        for (uint32_t l = 0; l < (bytes + 3) / 4; l++) /* 16 texels: bytes / 4 lines */
            __builtin_prefetch(at + (size_t)r * pitch + 64 * l, 1, 3);
#else
    (void)plane, (void)pitch, (void)bytes, (void)bx, (void)by, (void)x0, (void)x1, (void)y1;
#endif
}

/* Stores a row of four packed 32-bit pixels to dst, pixel k where bit k
 * of m is set (m == 15: one 16-byte write). */
static inline void kr_store_row4(uint8_t *dst, const uint32_t px[4], uint32_t m)
{
    if (m == 15u) {
        memcpy(dst, px, 16);
        return;
    }
    for (uint32_t k = 0; k < 4; k++)
        if (m >> k & 1)
            memcpy(dst + 4 * k, &px[k], 4);
}

/* tile.c's blending into an 8-bit RGBA or BGRA target (blending on or a
 * partial write mask) for the covered pixels (bit i of mask: pixel
 * (x + i % 4, y + i / 4)) of a block, two rows per AVX2 vector, the same
 * bytes (pixel_avx2.c; only when kr_drawx.wide); no byte of an uncovered
 * pixel is read or written. kr_unorm8_avx2 is its byte / 255.0f for
 * eight bytes, exposed for the exhaustive test. */
void kr_blend_rgba8_avx2(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,
                         bool bgra, int x, int y, const float *col, uint32_t mask);
/* The kind of bl's blend that pixel_avx2.c and pixel_avx512.c keep copies
 * of their blend for: 0 no blending (a partial write mask), 1 ADD of
 * (ONE, ONE) on both the color and the alpha part, 2 ADD of (SRC_ALPHA,
 * INV_SRC_ALPHA) on both, 3 anything else (the general factors). */
static inline int kr_blend_kind(const kd_blend_rt *bl)
{
#define KR_IS_ADD(s, d, op, fs, fd) ((op) == KILN_BLEND_OP_ADD && (s) == (fs) && (d) == (fd))
    if (!bl->enable)
        return 0;
    if (KR_IS_ADD(bl->src, bl->dst, bl->op, KILN_BLEND_ONE, KILN_BLEND_ONE) &&
        KR_IS_ADD(bl->src_a, bl->dst_a, bl->op_a, KILN_BLEND_ONE, KILN_BLEND_ONE))
        return 1;
    if (KR_IS_ADD(bl->src, bl->dst, bl->op, KILN_BLEND_SRC_ALPHA, KILN_BLEND_INV_SRC_ALPHA) &&
        KR_IS_ADD(bl->src_a, bl->dst_a, bl->op_a, KILN_BLEND_SRC_ALPHA, KILN_BLEND_INV_SRC_ALPHA))
        return 2;
    return 3;
#undef KR_IS_ADD
}
/* The bytes of an RGBA8 (bgra: BGRA8) target word that write mask wm
 * (bit c: channel c) leaves alone. */
static inline uint32_t kr_keep_bytes(uint32_t wm, bool bgra)
{
    const int pos[4] = {bgra ? 2 : 0, 1, bgra ? 0 : 2, 3}; /* channel c's byte */
    uint32_t keep = 0;
    for (int c = 0; c < 4; c++)
        if (!(wm >> c & 1))
            keep |= 0xffu << (8 * pos[c]);
    return keep;
}
/* What output() does to an RGBA8 (bgra: BGRA8) target under bl at the
 * AVX2 level, chosen once per draw (kr_output_select): the store of
 * kr_store_rgba8_avx2 or the copy of kr_blend_rgba8_avx2 for bl's kind and
 * the byte order; NULL when bl writes nothing (pixel_avx2.c). */
kr_write8_fn kr_write8_select(const kd_blend_rt *bl, bool bgra);
/* The same at the AVX-512 level (pixel_avx512.c): the block's 16 pixels
 * per vector, partly covered rows through masked loads and stores; the
 * same bytes. */
kr_write8_fn kr_write8_select_avx512(const kd_blend_rt *bl, bool bgra);
/* kr_interpolate_avx2 and kr_block_depth_avx2 at the AVX-512 level, the
 * block's 16 pixels per vector, the same floats (pixel_avx512.c; only
 * when kr_drawx.wide16). */
void kr_interpolate_avx512(const kr_prim *p, int x, int y, uint32_t ncomp, uint32_t mask, float *vary);
void kr_block_depth_avx512(const kr_prim *p, int x, int y, float *z);
/* kr_block_depth_avx512 then kr_depth_d32_avx512 on a triangle's block,
 * the depths in a register between them (pixel_avx512.c): the passing
 * pixels, the same depths written. Only where both would run: a triangle
 * (KR_TRI) of a kr_drawx.wide16 draw, a D32_FLOAT buffer, no stencil
 * (tile.c's test_d32_16). */
uint32_t kr_block_test_d32_avx512(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask);
/* tested_shade in one function for a draw whose shading is
 * kr_shade_color_avx2 or kr_shade_lit_avx2 behind the D32_FLOAT depth
 * test without stencil, written by the AVX-512 level's plain store (no
 * blending, every channel); NULL for any other draw (pixel_avx512.c; the
 * same bytes). */
kr_block_fn kr_effect_d32_select_avx512(const kr_drawx *dx, const kr_fb *fb);
/* For f one of kr_effect_d32_select_avx512's kernels: the same kernel for
 * a triangle's rect of at most 4x4 pixels [x0, x1) x [y0, y1) in a tile
 * as one block at (x0, y0), its coverage computed there
 * (kr_drawx.corner4); NULL for any other f. */
kr_corner_fn kr_effect_d32_corner_avx512(kr_block_fn f);
/* Whether kr_effect_d32_select_avx512 chose a kernel since the last call
 * (tests; chosen, not run: a deferred draw's blocks go elsewhere); clears
 * the flag. */
bool kr_effect_d32_chosen(void);
/* tile.c's D32_FLOAT depth test without stencil (depth_d32) on a block's
 * covered pixels at the AVX-512 level: the 16 depths compared in one
 * vector with compare_f's predicate (NaN fails all but NOT_EQUAL and
 * ALWAYS), the passing ones written when `write`; rows read and written
 * through masked loads and stores (no uncovered pixel touched). The mask
 * of those that pass (pixel_avx512.c; only when kr_drawx.wide16). */
uint32_t kr_depth_d32_avx512(kiln_compare func, bool write, uint8_t *ds, size_t pitch, int x, int y,
                             const float *z, uint32_t mask);
void kr_unorm8_avx2(const uint8_t in[8], float out[8]);
/* kr_unorm8_avx2 and fused_avx2.c's kr_quot_avx2 at the AVX-512 level (16
 * values), exposed for the same exhaustive tests. */
void kr_unorm8_avx512(const uint8_t in[16], float out[16]);
/* tile.c's interpolate of a triangle's block, two rows per vector, the
 * same floats, for the first ncomp varying components, of which those
 * whose bit in mask is clear are zeros (pixel_avx2.c; only when
 * kr_drawx.wide). */
void kr_interpolate_avx2(const kr_prim *p, int x, int y, uint32_t ncomp, uint32_t mask, float *vary);
/* tile.c's block_depth of a triangle's block at its pixel centers, two
 * rows per vector, the same floats (pixel_avx2.c; only when
 * kr_drawx.wide). */
void kr_block_depth_avx2(const kr_prim *p, int x, int y, float *z);
/* tile.c's D32_FLOAT depth test without stencil (depth_d32) on a block's
 * covered pixels at the AVX2 level, two rows per vector, compare_f's
 * predicate: with `whole` (the block inside the target) its rows read and
 * written back whole, the old depth where a pixel does not pass; else only
 * the covered pixels touched (masked loads and stores). The mask of those
 * that pass (pixel_avx2.c; only when kr_drawx.wide). */
uint32_t kr_depth_d32_avx2(kiln_compare func, bool write, bool whole, uint8_t *ds, size_t pitch,
                           int x, int y, const float *z, uint32_t mask);
/* tile.c's D24_UNORM_S8_UINT depth test without stencil on a block's
 * covered pixels at the AVX2 level, the same way: z as depth_to_unorm24
 * gives it, compare_u's result, the passing pixels' 24 depth bits written
 * when `write` (their stencil byte kept); the mask of those that pass
 * (pixel_avx2.c; only when kr_drawx.wide). */
uint32_t kr_depth_d24_avx2(kiln_compare func, bool write, bool whole, uint8_t *ds, size_t pitch,
                           int x, int y, const float *z, uint32_t mask);
/* The same without blending, all channels written (tile.c's output_rgba8,
 * the same bytes). */
void kr_store_rgba8_avx2(uint8_t *base, uint32_t pitch, bool bgra, int x, int y, const float *col,
                         uint32_t mask);

/* kr_drawx.out1 and write8 for a draw into `fb` (tile.c): what output()
 * does for every block of it, when that is one call of pixel_avx2.c on
 * target 0 (or none), chosen once. */
void kr_output_select(kr_drawx *dx, const kr_fb *fb);

/* The specialized pixel path for a draw into `fb`, or NULL when the
 * draw's state has none (sample.c); fills dx->block_data for it. */
kr_block_fn kr_block_select(kr_drawx *dx, const kr_fb *fb);
/* The specialized whole-block shading for a draw into `fb`, or NULL
 * (sample.c): at the AVX2 level, KILN_EFFECT_TEXTURE into an 8-bit RGBA /
 * BGRA target, and KILN_EFFECT_VERTEX_COLOR, KILN_EFFECT_TEXTURE_COLOR and
 * KILN_EFFECT_LIT into whatever output() writes with one call
 * (kr_drawx.out1), under any blend, depth and stencil state; fills
 * dx->shade_data for the two that sample. */
kr_shade_fn kr_shade_select(kr_drawx *dx, const kr_fb *fb);
/* The function that settles a triangle's block without shade_block, or
 * NULL (tile.c; after kr_block_select and kr_shade_select). */
kr_block_fn kr_direct_select(const kr_drawx *dx, const kr_fb *fb);
/* Whether a draw's direct function f may be given a block at any pixel,
 * not only at multiples of 4 (tile.c; kr_drawx.direct_any): 1 when a
 * pixel's values come from its own center alone (no 2x2 quads, no
 * per-block state), so that a small triangle's pixels go out in fewer
 * blocks placed at its own corner (raster_window, kr_drawx.corner4), 2
 * the same and counted, 0 not. kr_corner_force (tests; read when a scene
 * sets up its draws, so it applies to scenes executed after the call): 0
 * wherever f allows (the default), 1 never, 2 wherever f allows and
 * counted in kr_corner_counts: the windows placed so (a triangle's, once
 * in each tile it takes one in), the rects corner4 took and those it
 * declined. */
uint8_t kr_direct_any_origin(kr_block_fn f);
void kr_corner_force(int mode);
void kr_corner_counts(uint64_t *windows, uint64_t *fours, uint64_t *declined);
/* kr_drawx.corner4 for a direct function that takes a block at any
 * pixel, or NULL: it has none (tile.c). */
kr_corner_fn kr_direct_corner4(kr_block_fn f);
/* The span kernel of dx->direct, or NULL (sample.c). */
kr_span_fn kr_span_select(const kr_drawx *dx);
/* For a draw that has no span kernel of dx->direct's and is not counted:
 * the general pixel path over a rect (span_general.h) when its blocks go
 * through shade_block's general shading with no depth or stencil test and
 * one write8 call, at the AVX2 or AVX-512 level, else NULL (tile.c). */
kr_span_fn kr_general_span_select(const kr_drawx *dx, const kr_fb *fb);
bool kr_general_span_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0, int x1,
                          int y1);
bool kr_general_span_avx512(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0, int x1,
                            int y1);
/* One more rect through a general span, counted only while a test asked
 * for it: kr_general_span_calls(count) turns counting on or off and
 * returns the rects counted so far (tests: that draws took the span). */
void kr_general_span_counted(void);
uint64_t kr_general_span_calls(bool count);
/* It (fused_avx2.c). */
bool kr_fused_shade_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y, uint32_t mask);
/* It under ADD of (ONE, ONE) on both parts of target 0 with one prepared
 * level (fused_avx2.c): the sample's bytes added to the target's in
 * bytes, the same bytes; kr_add_band_avx2 is its test of eight pixels'
 * four channel sums (bit i: pixel i, channel sums m[0..3][i], takes the
 * float way), exposed for test_raster_fused. */
bool kr_fused_shade_add_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                             uint32_t mask);
uint32_t kr_add_band_avx2(const int32_t m[4][8]);
/* And under ADD of (SRC_ALPHA, INV_SRC_ALPHA) on both parts: blend_rows'
 * arithmetic in registers, its clamps (which change nothing on a sample)
 * left out, the same bytes. */
bool kr_fused_shade_alpha_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                               uint32_t mask);
/* The two over a rect (kr_span_fn): the primitive's constants once. */
bool kr_fused_span_add_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0, int x1,
                            int y1);
bool kr_fused_span_alpha_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0,
                              int x1, int y1);
/* The four at the AVX-512 level (fused_avx512.c): a block per vector, the
 * same bytes; kr_add_band_avx512 is kr_add_band_avx2 on 16 pixels. */
uint32_t kr_add_band_avx512(const int32_t m[4][16]);
bool kr_fused_shade_add_avx512(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                               uint32_t mask);
bool kr_fused_shade_alpha_avx512(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                                 uint32_t mask);
bool kr_fused_span_add_avx512(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0,
                              int x1, int y1);
bool kr_fused_span_alpha_avx512(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0,
                                int x1, int y1);
/* The same for KILN_EFFECT_VERTEX_COLOR and KILN_EFFECT_LIT (pixel_avx2.c):
 * kr_interpolate_avx2's floats, the effect's kernel's arithmetic and
 * kr_drawx.write8, in registers between them. */
bool kr_shade_color_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                         uint32_t mask);
bool kr_shade_lit_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                       uint32_t mask);
/* And for KILN_EFFECT_TEXTURE_COLOR (fused_avx2.c): the texture effect's
 * sampling as kr_fused_shade_avx2 does it, times the interpolated color. */
bool kr_fused_shade_tc_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                            uint32_t mask);

/* Rasterizes one primitive inside the pixel rect [x0,x1) x [y0,y1). */
void kr_raster_prim(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1);

/* Hidden surface removal within a tile: a run of triangles whose draws
 * allow it (kr_hsr_select) is depth- and stencil-tested in order with
 * their shading deferred; each pixel remembers the last triangle whose
 * fragment passed there (the one whose color the in-order execution
 * leaves), and kr_hsr_resolve shades every block once per triangle
 * that owns some of its pixels, with just those pixels. What the
 * targets hold afterwards is what shading each passing fragment in order
 * would have left (docs/raster.md, "Hidden surface removal"). */
#define KR_HSR_PRIMS 1024 /* triangles deferred before a resolve */
_Static_assert(KR_HSR_PRIMS < 65536, "owners are 16-bit indices + 1");
_Static_assert((KR_TILE * KR_TILE / 16) % 64 == 0, "the dirty bits fill whole words");
typedef struct kr_hsr {
    /* Per sample (plane k: sample k of a 4x target; plane 0 alone at one
     * sample), 1 + the index in prim of its owner, 0: none; block by block
     * (16 entries per 4x4 block, the blocks in rows of the tile). */
    uint16_t owner[4][KR_TILE * KR_TILE];
    uint64_t dirty[KR_TILE * KR_TILE / 16 / 64]; /* blocks with an owner */
    const kr_prim *prim[KR_HSR_PRIMS];
    uint32_t n;
    int x0, y0;       /* the tile's first pixel */
    uint32_t samples; /* of the targets: 1 or 4 */
} kr_hsr;

/* Whether a draw's triangles may be deferred into a kr_hsr: a pixel
 * shader that cannot discard, no alpha to coverage, a
 * depth test on a bound depth buffer, and every bound target written by
 * the shader with blending off and all four channels, so that a pixel's
 * final color is its last passing fragment's; not for counted scenes
 * (the caller's). `mode` is kr_hsr_mode(). */
bool kr_hsr_select(const kr_drawx *dx, const kr_fb *fb, int mode);
/* 0: defer where it pays (kr_hsr_select's cost rule), 1: never, 2:
 * wherever allowed; from KILN_HSR (read once: "0" or "off" 1, "all" 2,
 * else 0) unless kr_hsr_force (tests) set it. A scene reads it when it
 * starts executing. */
int kr_hsr_mode(void);
void kr_hsr_force(int mode);
/* Starts a tile's deferral at (x0, y0) on targets of `samples` (the
 * owner map is clear). */
void kr_hsr_begin(kr_hsr *h, int x0, int y0, uint32_t samples);
/* Depth- and stencil-tests triangle p (p->dx->hsr, slice 0) inside the
 * rect, recording the owners; resolves first when h is full. fb->hsr is
 * h. */
void kr_hsr_prim(kr_hsr *h, const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1);
/* Shades what h deferred and empties it. */
void kr_hsr_resolve(kr_hsr *h, const kr_fb *fb);
/* Triangles deferred and resolves since the process started (tests:
 * that a scene took the path, and how). */
void kr_hsr_counts(uint64_t *deferred, uint64_t *resolves);

/* Tile buffers (tilebuf.c, docs/raster.md "Tile buffers"): a tile whose
 * plane a clear fills, with something after it, runs on a copy of that
 * plane in a buffer of its own, written back past the cache when the tile
 * is done. 1: on (the default), 0: off; from KILN_TILEBUF (read once: "0"
 * or "off" turn it off) unless kr_tilebuf_force (tests) set it; forcing
 * -1 reads the environment again. A scene reads it when it starts
 * executing. */
int kr_tilebuf_mode(void);
void kr_tilebuf_force(int mode);
/* Planes written back from tile buffers since the process started
 * (tests: that a scene took the path). */
uint64_t kr_tilebuf_count(void);

/* i / 255.0f for every byte i (the bits of the division: geom.c). */
extern const float kr_unorm8_float[256];
/* Fills a rect of render target `rt` (or the depth-stencil when rt < 0)
 * with a texel; for depth-stencil `mask` selects the bits written.
 * `stream`: nothing reads or writes the rect again before the scene ends
 * (4-byte planes are then written past the cache, fenced). */
void kr_clear_rect(const kr_fb *fb, int rt, const uint8_t *texel, uint32_t mask, int x0, int y0,
                   int x1, int y1, bool stream);

#endif
