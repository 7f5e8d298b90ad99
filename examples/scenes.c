/*
 * scenes.c - the scene table, and the copy scenes (see scenes.h for the
 * contract).
 *
 * The copy scenes are built from clears, UpdateSubresource uploads, copies
 * (CopyResource and CopySubresourceRegion) and DYNAMIC textures mapped with
 * WRITE_DISCARD. Each is a deterministic function of the frame number, and
 * each has a CPU reference (`expect`) that computes the same image without
 * kiln. The draw scenes live in scenes_draw.c and scenes_stream.c.
 */
#include "scenes.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Colors and hashing shared by the scenes and their CPU references
 * ------------------------------------------------------------------------- */

typedef struct rgba {
    uint8_t c[4];
} rgba;

static const rgba palette[8] = {
    {{230, 57, 70, 255}}, {{244, 162, 97, 255}}, {{233, 196, 106, 255}}, {{42, 157, 143, 255}},
    {{38, 70, 83, 255}},  {{69, 123, 157, 255}}, {{168, 218, 220, 255}}, {{241, 250, 238, 255}},
};

static rgba mkrgba(uint32_t r, uint32_t g, uint32_t b)
{
    rgba c = {{(uint8_t)r, (uint8_t)g, (uint8_t)b, 255}};
    return c;
}

/* UNORM conversion rounds to nearest, so byte / 255 clears to that byte. */
static void to_float(rgba c, float out[4])
{
    for (int i = 0; i < 4; i++)
        out[i] = (float)c.c[i] / 255.0f;
}

static void put(uint8_t *p, rgba c) { memcpy(p, c.c, 4); }

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    return hash32(a ^ hash32(b ^ hash32(c + 0x9e3779b9U)));
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* ---------------------------------------------------------------------------
 * Scene "checker": tiles cleared to colors, assembled with
 * CopySubresourceRegion from the two slices of an array texture.
 *
 * Each cell of the canvas is a copy of one slice of `tiles` (chosen by the
 * parity of cell + frame, so the board flips every frame) without its first
 * row and column, so the grout color of the cleared canvas shows through as
 * one-pixel lines. Each slice carries a dot, itself a cleared texture copied
 * into both slices.
 * ------------------------------------------------------------------------- */

typedef struct checker {
    uint32_t ts, dot0, dots; /* tile size, dot offset and size */
    kiln_texture tiles, dot;
    kiln_rtv tile_rtv[2], dot_rtv;
} checker;

static void checker_geometry(const demo *d, uint32_t *ts, uint32_t *dot0, uint32_t *dots)
{
    *ts = max_u32(3, min_u32(d->w, d->h) / 9);
    *dot0 = *ts / 3;
    *dots = max_u32(1, *ts / 3);
}

static rgba checker_grout(uint32_t f) { return mkrgba(20 + (f * 7) % 40, 22, 30); }

static int checker_setup(demo *d, void *state)
{
    checker *s = state;
    checker_geometry(d, &s->ts, &s->dot0, &s->dots);
    if (demo_new_texture(d, s->ts, s->ts, 2, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0,
                         &s->tiles) ||
        demo_new_texture(d, s->dots, s->dots, 1, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0,
                         &s->dot) ||
        demo_new_rtv(d, s->tiles, 0, &s->tile_rtv[0]) ||
        demo_new_rtv(d, s->tiles, 1, &s->tile_rtv[1]) || demo_new_rtv(d, s->dot, 0, &s->dot_rtv))
        return -1;
    return 0;
}

static int checker_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    checker *s = state;
    float col[4];

    to_float(checker_grout(f), col);
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, col));
    to_float(palette[f % 8], col);
    TRY(d, kiln_clear_rtv(d->ctx, s->tile_rtv[0], col));
    to_float(palette[(f + 3) % 8], col);
    TRY(d, kiln_clear_rtv(d->ctx, s->tile_rtv[1], col));
    to_float(palette[(f + 5) % 8], col);
    TRY(d, kiln_clear_rtv(d->ctx, s->dot_rtv, col));
    for (uint32_t slice = 0; slice < 2; slice++)
        TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(s->tiles), slice, s->dot0, s->dot0, 0,
                                            demo_res(s->dot), 0, NULL));

    for (uint32_t y0 = 0, cy = 0; y0 < d->h; y0 += s->ts, cy++) {
        for (uint32_t x0 = 0, cx = 0; x0 < d->w; x0 += s->ts, cx++) {
            uint32_t cw = min_u32(s->ts, d->w - x0), ch = min_u32(s->ts, d->h - y0);
            if (cw <= 1 || ch <= 1)
                continue; /* only grout fits */
            kiln_box box = {1, 1, 0, cw, ch, 1};
            TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(canvas), 0, x0 + 1, y0 + 1, 0,
                                                demo_res(s->tiles), (cx + cy + f) & 1, &box));
        }
    }
    return 0;
}

static void checker_expect(const demo *d, uint32_t f, uint8_t *img)
{
    uint32_t ts, dot0, dots;
    checker_geometry(d, &ts, &dot0, &dots);
    for (uint32_t y = 0; y < d->h; y++) {
        for (uint32_t x = 0; x < d->w; x++) {
            uint32_t lx = x % ts, ly = y % ts, slice = (x / ts + y / ts + f) & 1;
            rgba c;
            if (lx == 0 || ly == 0)
                c = checker_grout(f);
            else if (lx >= dot0 && lx < dot0 + dots && ly >= dot0 && ly < dot0 + dots)
                c = palette[(f + 5) % 8];
            else
                c = palette[(f + (slice ? 3 : 0)) % 8];
            put(img + ((size_t)y * d->w + x) * 4, c);
        }
    }
}

/* ---------------------------------------------------------------------------
 * Scene "gradient": the canvas is cleared, then every row is uploaded with
 * UpdateSubresource, in bands of 1..13 rows, from one scratch buffer that is
 * refilled as soon as each call returns (the upload is copied at call time)
 * and whose rows are padded (row_pitch > width * 4).
 * ------------------------------------------------------------------------- */

#define GRADIENT_MAX_BAND 13
#define GRADIENT_PAD 16

typedef struct gradient {
    uint8_t *scratch;
} gradient;

static uint32_t triangle(uint32_t v)
{
    v %= 512;
    return v < 256 ? v : 511 - v;
}

static rgba gradient_texel(const demo *d, uint32_t x, uint32_t y, uint32_t f)
{
    uint32_t wave = triangle(x + 2 * y + 16 * f);
    uint32_t r = x * 255 / max_u32(1, d->w - 1);
    uint32_t g = y * 255 / max_u32(1, d->h - 1);
    return mkrgba((r * 3 + wave) / 4, (g * 3 + 255 - wave) / 4, wave);
}

static int gradient_setup(demo *d, void *state)
{
    gradient *s = state;
    s->scratch = malloc(((size_t)d->w * 4 + GRADIENT_PAD) * GRADIENT_MAX_BAND);
    if (!s->scratch)
        return demo_fail(d, "out of memory");
    return 0;
}

static void gradient_teardown(void *state)
{
    gradient *s = state;
    free(s->scratch);
}

static int gradient_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv,
                          uint32_t f)
{
    gradient *s = state;
    uint32_t pitch = d->w * 4 + GRADIENT_PAD;
    float magenta[4] = {1, 0, 1, 1}; /* must never show */

    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, magenta));
    for (uint32_t y0 = 0; y0 < d->h;) {
        uint32_t y1 = min_u32(d->h, y0 + 1 + (y0 * 7 + f) % GRADIENT_MAX_BAND);
        for (uint32_t y = y0; y < y1; y++) {
            uint8_t *row = s->scratch + (size_t)(y - y0) * pitch;
            for (uint32_t x = 0; x < d->w; x++)
                put(row + x * 4, gradient_texel(d, x, y, f));
            memset(row + d->w * 4, 0xcd, GRADIENT_PAD); /* padding is not texels */
        }
        kiln_box box = {0, y0, 0, d->w, y1, 1};
        TRY(d, kiln_update_subresource(d->ctx, demo_res(canvas), 0, &box, s->scratch, pitch, 0));
        y0 = y1;
    }
    return 0;
}

static void gradient_expect(const demo *d, uint32_t f, uint8_t *img)
{
    for (uint32_t y = 0; y < d->h; y++)
        for (uint32_t x = 0; x < d->w; x++)
            put(img + ((size_t)y * d->w + x) * 4, gradient_texel(d, x, y, f));
}

/* ---------------------------------------------------------------------------
 * Scene "mosaic": many small regions per frame. Each cell of a grid gets one
 * of five treatments, chosen by a hash of (cell, frame / 4):
 *   DYNAMIC   a DYNAMIC texture mapped with WRITE_DISCARD, filled, copied in
 *             (one rename per cell: the copies queued earlier still read
 *             the old storage)
 *   UPDATE    UpdateSubresource straight into the canvas cell
 *   STAMP     UpdateSubresource into a small DEFAULT texture, then a copy
 *   LEFT      a copy of the cell to its left, inside the canvas itself
 *   STRIP     a copy from a palette strip uploaded once per frame
 * Cells on the right and bottom edges are clipped.
 * ------------------------------------------------------------------------- */

enum { CELL_DYNAMIC, CELL_UPDATE, CELL_STAMP, CELL_LEFT, CELL_STRIP };

typedef struct mosaic {
    uint32_t cs; /* cell size */
    kiln_texture dyn, stamp, strip;
    uint8_t *scratch; /* cs * cs texels, or the strip */
} mosaic;

static uint32_t mosaic_cell_size(const demo *d) { return max_u32(4, min_u32(d->w, d->h) / 22); }

static uint32_t mosaic_kind(uint32_t cx, uint32_t cy, uint32_t f, uint32_t *h)
{
    *h = hash3(cx, cy, f / 4);
    uint32_t k = *h % 10;
    if (k < 3)
        return CELL_DYNAMIC;
    if (k < 6)
        return CELL_UPDATE;
    if (k < 8)
        return CELL_STAMP;
    return cx > 0 ? CELL_LEFT : CELL_STRIP;
}

/* Texel (lx, ly) of a cell of the given kind (not LEFT). */
static rgba mosaic_texel(uint32_t kind, uint32_t h, uint32_t f, uint32_t cs, uint32_t lx,
                         uint32_t ly)
{
    rgba a = palette[(h >> 8) % 8], b = palette[(h >> 12) % 8];
    switch (kind) {
    case CELL_DYNAMIC: { /* concentric squares moving outwards */
        uint32_t dx = 2 * lx + 1 > cs ? 2 * lx + 1 - cs : cs - 2 * lx - 1;
        uint32_t dy = 2 * ly + 1 > cs ? 2 * ly + 1 - cs : cs - 2 * ly - 1;
        uint32_t dist = max_u32(dx, dy) / 2;
        return ((dist + 64 - f % 64) / 2) % 2 ? a : b;
    }
    case CELL_UPDATE: /* diagonal stripes */
        return ((lx + ly + f) / 3) % 2 ? a : b;
    case CELL_STAMP: /* a small gradient */
        return mkrgba(lx * 255 / (cs - 1), ly * 255 / (cs - 1), (h >> 16) & 255);
    default: { /* STRIP: a framed solid color; (h >> 4) picks the slot */
        rgba c = palette[((h >> 4) + f) % 8];
        if (lx == 0 || ly == 0 || lx == cs - 1 || ly == cs - 1)
            c = mkrgba(c.c[0] / 2, c.c[1] / 2, c.c[2] / 2);
        return c;
    }
    }
}

static int mosaic_setup(demo *d, void *state)
{
    mosaic *s = state;
    s->cs = mosaic_cell_size(d);
    s->scratch = malloc((size_t)s->cs * s->cs * 4 * 8);
    if (!s->scratch)
        return demo_fail(d, "out of memory");
    if (demo_new_texture(d, s->cs, s->cs, 1, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE,
                         KILN_CPU_ACCESS_WRITE, &s->dyn) ||
        demo_new_texture(d, s->cs, s->cs, 1, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0,
                         &s->stamp) ||
        demo_new_texture(d, s->cs * 8, s->cs, 1, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0,
                         &s->strip))
        return -1;
    return 0;
}

static void mosaic_teardown(void *state)
{
    mosaic *s = state;
    free(s->scratch);
}

/* Fills `dst` (rows `pitch` bytes apart) with a cs x cs cell. */
static void mosaic_fill(uint8_t *dst, uint32_t pitch, uint32_t kind, uint32_t h, uint32_t f,
                        uint32_t cs)
{
    for (uint32_t ly = 0; ly < cs; ly++)
        for (uint32_t lx = 0; lx < cs; lx++)
            put(dst + (size_t)ly * pitch + lx * 4, mosaic_texel(kind, h, f, cs, lx, ly));
}

static int mosaic_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    mosaic *s = state;
    uint32_t cs = s->cs;

    /* The strip: slot k holds the STRIP cell for (h >> 4) % 8 == k. */
    for (uint32_t k = 0; k < 8; k++)
        mosaic_fill(s->scratch + k * cs * 4, cs * 8 * 4, CELL_STRIP, k << 4, f, cs);
    TRY(d, kiln_update_subresource(d->ctx, demo_res(s->strip), 0, NULL, s->scratch, 0, 0));

    for (uint32_t y0 = 0, cy = 0; y0 < d->h; y0 += cs, cy++) {
        for (uint32_t x0 = 0, cx = 0; x0 < d->w; x0 += cs, cx++) {
            uint32_t cw = min_u32(cs, d->w - x0), ch = min_u32(cs, d->h - y0), h;
            uint32_t kind = mosaic_kind(cx, cy, f, &h);
            kiln_box cell = {0, 0, 0, cw, ch, 1};
            switch (kind) {
            case CELL_DYNAMIC: {
                kiln_mapped_subresource m;
                TRY(d, kiln_map(d->ctx, demo_res(s->dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &m));
                if (m.row_pitch < cs * 4) {
                    kiln_unmap(d->ctx, demo_res(s->dyn), 0);
                    return demo_fail(d, "kiln_map returned row_pitch %u < %u", m.row_pitch, cs * 4);
                }
                mosaic_fill(m.data, m.row_pitch, kind, h, f, cs);
                TRY(d, kiln_unmap(d->ctx, demo_res(s->dyn), 0));
                TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(canvas), 0, x0, y0, 0,
                                                    demo_res(s->dyn), 0, &cell));
                break;
            }
            case CELL_UPDATE: {
                /* Rows cs texels apart even when the clipped box is narrower. */
                mosaic_fill(s->scratch, cs * 4, kind, h, f, cs);
                kiln_box box = {x0, y0, 0, x0 + cw, y0 + ch, 1};
                TRY(d, kiln_update_subresource(d->ctx, demo_res(canvas), 0, &box, s->scratch,
                                               cs * 4, 0));
                break;
            }
            case CELL_STAMP:
                mosaic_fill(s->scratch, cs * 4, kind, h, f, cs);
                TRY(d,
                    kiln_update_subresource(d->ctx, demo_res(s->stamp), 0, NULL, s->scratch, 0, 0));
                TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(canvas), 0, x0, y0, 0,
                                                    demo_res(s->stamp), 0, &cell));
                break;
            case CELL_LEFT: {
                kiln_box left = {x0 - cs, y0, 0, x0 - cs + cw, y0 + ch, 1};
                TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(canvas), 0, x0, y0, 0,
                                                    demo_res(canvas), 0, &left));
                break;
            }
            default: {
                uint32_t slot = (h >> 4) % 8;
                kiln_box box = {slot * cs, 0, 0, slot * cs + cw, ch, 1};
                TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(canvas), 0, x0, y0, 0,
                                                    demo_res(s->strip), 0, &box));
                break;
            }
            }
        }
    }
    (void)canvas_rtv;
    return 0;
}

static void mosaic_expect(const demo *d, uint32_t f, uint8_t *img)
{
    uint32_t cs = mosaic_cell_size(d);
    for (uint32_t y0 = 0, cy = 0; y0 < d->h; y0 += cs, cy++) {
        for (uint32_t x0 = 0, cx = 0; x0 < d->w; x0 += cs, cx++) {
            uint32_t cw = min_u32(cs, d->w - x0), ch = min_u32(cs, d->h - y0), h;
            uint32_t kind = mosaic_kind(cx, cy, f, &h);
            for (uint32_t ly = 0; ly < ch; ly++) {
                uint8_t *row = img + ((size_t)(y0 + ly) * d->w + x0) * 4;
                if (kind == CELL_LEFT) {
                    memcpy(row, row - cs * 4, cw * 4);
                    continue;
                }
                for (uint32_t lx = 0; lx < cw; lx++) {
                    uint32_t hh = kind == CELL_STRIP ? ((h >> 4) % 8) << 4 : h;
                    put(row + lx * 4, mosaic_texel(kind, hh, f, cs, lx, ly));
                }
            }
        }
    }
}

/* ---------------------------------------------------------------------------
 * Scene "scroll": a skyline scrolling left SCROLL_STEP pixels per frame.
 * Two DEFAULT textures ping-pong: frame f copies the previous frame shifted
 * left (CopySubresourceRegion between the two), uploads only the new strip
 * of columns on the right, and the result reaches the canvas with
 * CopyResource. Frame 0 uploads the whole image (split by kiln when larger
 * than half the transfer ring). Frame f shows column x + f * SCROLL_STEP of
 * the skyline at x, however many frames led to it.
 * ------------------------------------------------------------------------- */

#define SCROLL_STEP 3u
#define SCROLL_BLOCK 24u

typedef struct scroll {
    kiln_texture page[2];
    uint8_t *scratch; /* the full image for frame 0, then the strip */
} scroll;

static rgba scroll_texel(const demo *d, uint32_t gx, uint32_t y)
{
    uint32_t b = gx / SCROLL_BLOCK, bx = gx % SCROLL_BLOCK, hb = hash32(b);
    uint32_t height = d->h / 5 + hb % (d->h / 2 + 1);
    if (bx >= 2 && y >= d->h - height) {
        uint32_t wy = (y - (d->h - height)) % 10, wx = (bx - 2) % 5;
        if (wy >= 3 && wy < 7 && wx >= 1 && wx < 4 && hash3(b, (bx - 2) / 5, y / 10) % 3)
            return mkrgba(250, 214, 110); /* a lit window */
        uint32_t grey = 40 + (hb >> 8) % 50;
        return mkrgba(grey, grey, grey + 12);
    }
    uint32_t t = y * 255 / max_u32(1, d->h - 1); /* sky: dark at the top */
    return mkrgba(16 + t / 4, 24 + t / 3, 70 + t / 2);
}

static int scroll_setup(demo *d, void *state)
{
    scroll *s = state;
    s->scratch = malloc((size_t)d->w * d->h * 4);
    if (!s->scratch)
        return demo_fail(d, "out of memory");
    for (int i = 0; i < 2; i++)
        if (demo_new_texture(d, d->w, d->h, 1, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0,
                             &s->page[i]))
            return -1;
    return 0;
}

static void scroll_teardown(void *state)
{
    scroll *s = state;
    free(s->scratch);
}

static int scroll_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    scroll *s = state;
    kiln_texture cur = s->page[f % 2], prev = s->page[(f + 1) % 2];
    uint32_t x_new = 0; /* first column to upload */

    if (f > 0 && d->w > SCROLL_STEP) {
        kiln_box keep = {SCROLL_STEP, 0, 0, d->w, d->h, 1};
        TRY(d, kiln_copy_subresource_region(d->ctx, demo_res(cur), 0, 0, 0, 0, demo_res(prev), 0,
                                            &keep));
        x_new = d->w - SCROLL_STEP;
    }
    uint32_t sw = d->w - x_new;
    for (uint32_t y = 0; y < d->h; y++)
        for (uint32_t x = x_new; x < d->w; x++)
            put(s->scratch + ((size_t)y * sw + (x - x_new)) * 4,
                scroll_texel(d, x + f * SCROLL_STEP, y));
    kiln_box box = {x_new, 0, 0, d->w, d->h, 1};
    TRY(d, kiln_update_subresource(d->ctx, demo_res(cur), 0, &box, s->scratch, 0, 0));
    TRY(d, kiln_copy_resource(d->ctx, demo_res(canvas), demo_res(cur)));
    (void)canvas_rtv;
    return 0;
}

static void scroll_expect(const demo *d, uint32_t f, uint8_t *img)
{
    for (uint32_t y = 0; y < d->h; y++)
        for (uint32_t x = 0; x < d->w; x++)
            put(img + ((size_t)y * d->w + x) * 4, scroll_texel(d, x + f * SCROLL_STEP, y));
}

/* ---------------------------------------------------------------------------
 * The scene table
 * ------------------------------------------------------------------------- */

static const scene scene_checker = {
    .name = "checker",
    .summary = "cleared tiles of an array texture assembled with CopySubresourceRegion",
    .state_size = sizeof(checker),
    .setup = checker_setup,
    .frame = checker_frame,
    .expect = checker_expect,
};
static const scene scene_gradient = {
    .name = "gradient",
    .summary = "rows uploaded in bands with UpdateSubresource (padded row pitch)",
    .state_size = sizeof(gradient),
    .setup = gradient_setup,
    .teardown = gradient_teardown,
    .frame = gradient_frame,
    .expect = gradient_expect,
};
static const scene scene_mosaic = {
    .name = "mosaic",
    .summary = "small cells: DYNAMIC WRITE_DISCARD maps, uploads, copies, in-canvas copies",
    .state_size = sizeof(mosaic),
    .setup = mosaic_setup,
    .teardown = mosaic_teardown,
    .frame = mosaic_frame,
    .expect = mosaic_expect,
};
static const scene scene_scroll = {
    .name = "scroll",
    .summary = "ping-pong copies shift the image, a strip upload, CopyResource to the canvas",
    .state_size = sizeof(scroll),
    .setup = scroll_setup,
    .teardown = scroll_teardown,
    .frame = scroll_frame,
    .expect = scroll_expect,
};

const scene *const demo_scenes[] = {
    &scene_checker,      &scene_gradient,       &scene_mosaic,
    &scene_scroll,       &demo_scene_triangle,  &demo_scene_cube,
    &demo_scene_objects, &demo_scene_particles, &demo_scene_rtt,
    &demo_scene_occlusion,
    &demo_scene_swirl,
    &demo_scene_sprites, &demo_scene_skybox,
    &demo_scene_srgb,     &demo_scene_msaa,      &demo_scene_shadow,
};
const size_t demo_num_scenes = sizeof demo_scenes / sizeof demo_scenes[0];
