/*
 * test_raster_blend_exact: blending into 8-bit UNORM targets gives exactly
 * the bytes of the documented float formula (randomized; the exact
 * complement of test_raster_states' blend test, which allows a tolerance
 * at rounding ties).
 *
 * The formula, in float, each operation rounded once (no contraction: the
 * tests build as ISO C without -mfma, and the products below go through
 * volatile floats anyway):
 *   d[c] = byte / 255.0f (BGRA8 stores B, G, R, A; R8 gives (r, 0, 0, 1));
 *   blending on: s[c] = s < 0 ? 0 : s > 1 ? 1 : s (NaN stays NaN), then
 *     color c < 3: MIN/MAX: op(s[c], d[c]); else op(s[c] * factor(src, c),
 *     d[c] * factor(dst, c)); alpha the same with op_a, src_a, dst_a, c = 3;
 *   blending off: the source as is;
 *   to bytes: v = v > 0 ? v : 0 (NaN -> 0), v = v < 1 ? v : 1,
 *     (uint8_t)(int)(v * 255.0f + 0.5f); channels outside the write mask
 *     keep their byte.
 * DEFAULT factors are ONE (sources) and ZERO (destinations), DEFAULT ops
 * ADD, write mask DEFAULT (0) all channels, NONE nothing (kiln.h).
 *
 * For RGBA8, BGRA8 and R8_UNORM (R8 goes through the per-pixel scalar
 * loop, the other two through the four-lane path), random cases draw a
 * constant source color (ru_ps_cb) over random destination bytes:
 *   - rect batches: small rects inside 4x2 cells whose origin moves from
 *     batch to batch, so they straddle 4x4 blocks and reach the right and
 *     bottom edges of a 62x31 target (neither a multiple of 4); every
 *     (src, dst, op) and every (src_a, dst_a, op_a), DEFAULT values
 *     included, is drawn with blending on four times per format (a mask
 *     writing R and A), among random cases;
 *   - whole-block batches: every (src, dst, op) and (src_a, dst_a, op_a)
 *     once more, each on one whole 4x4 block (the only blocks the AVX2
 *     level blends two rows at a time);
 *   - triangle batches: small random triangles (vertices on a 1/16 pixel
 *     grid, no pixel center on an edge, so coverage is the strict inside
 *     test), many crossing the target's edges, overlapping in draw order.
 * The expected image is simulated draw by draw and compared byte for byte
 * after each batch, untouched pixels included.
 */
#define _POSIX_C_SOURCE 200809L
#include "raster_util.h"
#include "raster/effects.h"
#include "raster/prim.h"

#include <float.h>
#include <stdio.h>
#include <time.h>

static kiln_device *dev;
static kiln_context *ctx;
static ru_pipe PC; /* position only, PS target 0 = cb0 float4 0 */
static kiln_buffer CB;

enum { W = 62, H = 31 };
enum { NF = KILN_BLEND_INV_BLEND_FACTOR + 1, NOP = KILN_BLEND_OP_MAX + 1 };
enum { NCOMBO = NF * NF * NOP };
/* rect cases per format; the first NFORCED (shuffled) run the cross products */
enum { NRECT = 16384, NFORCED = 4 * NCOMBO };
enum { NTRI_BATCH = 16, NTRI = 200 };

static const char *const FNAME[NF] = {
    "DEFAULT",        "ZERO",          "ONE",        "SRC_COLOR",        "INV_SRC_COLOR",
    "SRC_ALPHA",      "INV_SRC_ALPHA", "DEST_ALPHA", "INV_DEST_ALPHA",   "DEST_COLOR",
    "INV_DEST_COLOR", "SRC_ALPHA_SAT", "BLEND_FACTOR", "INV_BLEND_FACTOR"};
static const char *const ONAME[NOP] = {"DEFAULT", "ADD", "SUBTRACT", "REV_SUBTRACT", "MIN", "MAX"};

typedef struct bcase {
    uint32_t enable;
    kiln_blend_factor src, dst, src_a, dst_a;
    kiln_blend_op op, op_a;
    uint32_t mask;  /* as in the desc: DEFAULT (0), 1..15 or NONE */
    float s[4];     /* source color */
    float k[4];     /* blend factor constant */
    int k_null;     /* passed as NULL: (1, 1, 1, 1) */
} bcase;

/* ---- the reference formula ---- */

static uint32_t resolved_mask(uint32_t m)
{
    return m == KILN_COLOR_WRITE_DEFAULT ? 15u : m == KILN_COLOR_WRITE_NONE ? 0u : m & 15u;
}

static float ref_factor(kiln_blend_factor f, int c, const float s[4], const float d[4],
                        const float k[4])
{
    volatile float t;
    switch (f) {
    case KILN_BLEND_ZERO: return 0.0f;
    case KILN_BLEND_ONE: return 1.0f;
    case KILN_BLEND_SRC_COLOR: return s[c];
    case KILN_BLEND_INV_SRC_COLOR: t = 1.0f - s[c]; return t;
    case KILN_BLEND_SRC_ALPHA: return s[3];
    case KILN_BLEND_INV_SRC_ALPHA: t = 1.0f - s[3]; return t;
    case KILN_BLEND_DEST_ALPHA: return d[3];
    case KILN_BLEND_INV_DEST_ALPHA: t = 1.0f - d[3]; return t;
    case KILN_BLEND_DEST_COLOR: return d[c];
    case KILN_BLEND_INV_DEST_COLOR: t = 1.0f - d[c]; return t;
    case KILN_BLEND_SRC_ALPHA_SAT:
        if (c == 3)
            return 1.0f;
        t = 1.0f - d[3];
        return s[3] < t ? s[3] : t;
    case KILN_BLEND_BLEND_FACTOR: return k[c];
    case KILN_BLEND_INV_BLEND_FACTOR: t = 1.0f - k[c]; return t;
    default: break;
    }
    fprintf(stderr, "ref_factor: unresolved factor %d\n", (int)f);
    abort();
}

static float ref_op(kiln_blend_op op, float a, float b)
{
    volatile float t;
    switch (op) {
    case KILN_BLEND_OP_ADD: t = a + b; return t;
    case KILN_BLEND_OP_SUBTRACT: t = a - b; return t;
    case KILN_BLEND_OP_REV_SUBTRACT: t = b - a; return t;
    case KILN_BLEND_OP_MIN: return a < b ? a : b;
    case KILN_BLEND_OP_MAX: return a > b ? a : b;
    default: break;
    }
    fprintf(stderr, "ref_op: unresolved op %d\n", (int)op);
    abort();
}

static uint8_t ref_unorm8(float v)
{
    volatile float t = v > 0.0f ? v : 0.0f; /* NaN -> 0 */
    t = t < 1.0f ? t : 1.0f;
    volatile float m = t * 255.0f;
    volatile float a = m + 0.5f;
    return (uint8_t)(int)a;
}

/* One channel of the blend (c < 3 color, c == 3 alpha); s already clamped. */
static float ref_channel(kiln_blend_factor fs, kiln_blend_factor fd, kiln_blend_op op, int c,
                         const float s[4], const float d[4], const float k[4])
{
    if (op == KILN_BLEND_OP_MIN || op == KILN_BLEND_OP_MAX)
        return ref_op(op, s[c], d[c]);
    volatile float a = s[c] * ref_factor(fs, c, s, d, k);
    volatile float b = d[c] * ref_factor(fd, c, s, d, k);
    return ref_op(op, a, b);
}

/* Byte of channel c in a pixel, number of channels. */
static int fmt_channels(kiln_format f) { return f == KILN_FORMAT_R8_UNORM ? 1 : 4; }
static int fmt_pos(kiln_format f, int c)
{
    static const int bgra[4] = {2, 1, 0, 3};
    return f == KILN_FORMAT_B8G8R8A8_UNORM ? bgra[c] : c;
}

/* Applies case bc to the pixel bytes p (format f), as kiln should. */
static void ref_pixel(kiln_format f, const bcase *bc, uint8_t *p)
{
    uint32_t wm = resolved_mask(bc->mask);
    if (!wm)
        return;
    int nch = fmt_channels(f);
    float d[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    for (int c = 0; c < nch; c++) {
        volatile float t = (float)p[fmt_pos(f, c)] / 255.0f;
        d[c] = t;
    }
    float s[4], out[4];
    memcpy(s, bc->s, sizeof s);
    if (bc->enable) {
        static const float ones[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        const float *k = bc->k_null ? ones : bc->k;
        for (int c = 0; c < 4; c++)
            s[c] = s[c] < 0.0f ? 0.0f : s[c] > 1.0f ? 1.0f : s[c];
        kiln_blend_factor src = bc->src ? bc->src : KILN_BLEND_ONE;
        kiln_blend_factor dst = bc->dst ? bc->dst : KILN_BLEND_ZERO;
        kiln_blend_factor src_a = bc->src_a ? bc->src_a : KILN_BLEND_ONE;
        kiln_blend_factor dst_a = bc->dst_a ? bc->dst_a : KILN_BLEND_ZERO;
        kiln_blend_op op = bc->op ? bc->op : KILN_BLEND_OP_ADD;
        kiln_blend_op op_a = bc->op_a ? bc->op_a : KILN_BLEND_OP_ADD;
        for (int c = 0; c < 3; c++)
            out[c] = ref_channel(src, dst, op, c, s, d, k);
        out[3] = ref_channel(src_a, dst_a, op_a, 3, s, d, k);
    } else {
        memcpy(out, s, sizeof out);
    }
    for (int c = 0; c < nch; c++)
        if (wm >> c & 1)
            p[fmt_pos(f, c)] = ref_unorm8(out[c]);
}

/* ---- random cases ---- */

static float frand(th_rng *r) /* [0, 1) */
{
    return (float)((double)(th_next(r) >> 40) / 16777216.0);
}

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Source channels: mostly in [-0.25, 1.25], sometimes special values. */
static float gen_src(th_rng *r)
{
    uint32_t u = th_below(r, 100);
    if (u < 66)
        return (float)(-0.25 + 1.5 * (double)frand(r));
    switch (u) {
    case 66: case 67: return bits_f(0x7fc00000u);  /* NaN */
    case 68: return bits_f(0xffc00000u);           /* -NaN */
    case 69: return bits_f(0x7fa12345u);           /* NaN with payload (signaling) */
    case 70: case 71: return INFINITY;
    case 72: case 73: return -INFINITY;
    case 74: case 75: case 76: return -0.0f;
    case 77: case 78: case 79: return 0.0f;
    case 80: case 81: case 82: return 1.0f;
    case 83: return bits_f(0x3f7fffffu);           /* just below 1 */
    case 84: return bits_f(0x3f800001u);           /* just above 1 */
    case 85: return bits_f(0x00000100u);           /* subnormal */
    case 86: return -FLT_MIN;
    case 87: return 1e30f;
    case 88: return -1e30f;
    default: break;
    }
    /* near a rounding tie of the UNORM conversion, or an exact n / 255 */
    float n = (float)th_below(r, 256);
    if (u < 95) {
        float t = (n + 0.5f) / 255.0f;
        uint32_t b = ru_fbits(t);
        int32_t delta = (int32_t)th_below(r, 5) - 2;
        return bits_f(b + (uint32_t)delta);
    }
    return n / 255.0f;
}

static float gen_k(th_rng *r)
{
    uint32_t u = th_below(r, 100);
    if (u < 75)
        return frand(r);
    if (u < 90)
        return (float)(-0.5 + 2.0 * (double)frand(r));
    static const float sp[] = {0.0f, 1.0f, 0.5f, -0.0f, 2.0f, -1.0f};
    if (u < 98)
        return sp[th_below(r, sizeof sp / sizeof sp[0])];
    return u == 98 ? NAN : INFINITY;
}

static uint32_t gen_mask(th_rng *r)
{
    uint32_t u = th_below(r, 100);
    if (u < 30)
        return KILN_COLOR_WRITE_DEFAULT;
    if (u < 40)
        return 15u;
    if (u < 46)
        return KILN_COLOR_WRITE_NONE;
    return 1u + th_below(r, 15);
}

/* A random case; combo >= 0 forces (src, dst, op) = combo, alpha_combo
 * likewise, blending on and a mask writing R and A. */
static bcase gen_case(th_rng *r, int combo, int alpha_combo)
{
    bcase c;
    memset(&c, 0, sizeof c);
    c.enable = combo >= 0 || th_below(r, 100) < 78;
    if (combo >= 0) {
        c.src = (kiln_blend_factor)(combo / (NF * NOP));
        c.dst = (kiln_blend_factor)(combo / NOP % NF);
        c.op = (kiln_blend_op)(combo % NOP);
        c.src_a = (kiln_blend_factor)(alpha_combo / (NF * NOP));
        c.dst_a = (kiln_blend_factor)(alpha_combo / NOP % NF);
        c.op_a = (kiln_blend_op)(alpha_combo % NOP);
        uint32_t u = th_below(r, 4);
        c.mask = u == 0 ? KILN_COLOR_WRITE_DEFAULT
                 : u == 1 ? 15u
                          : (th_below(r, 16) | KILN_COLOR_WRITE_R | KILN_COLOR_WRITE_A);
    } else {
        c.src = (kiln_blend_factor)th_below(r, NF);
        c.dst = (kiln_blend_factor)th_below(r, NF);
        c.op = (kiln_blend_op)th_below(r, NOP);
        c.src_a = (kiln_blend_factor)th_below(r, NF);
        c.dst_a = (kiln_blend_factor)th_below(r, NF);
        c.op_a = (kiln_blend_op)th_below(r, NOP);
        c.mask = gen_mask(r);
        /* one case in four: both parts ADD of (ONE, ONE) or of (SRC_ALPHA,
         * INV_SRC_ALPHA), the states the vector levels have copies of
         * their own for (pixel_avx2.c, pixel_avx512.c: kinds 1 and 2) */
        uint32_t u = th_below(r, 8);
        if (u < 2) {
            c.src = c.src_a = u ? KILN_BLEND_SRC_ALPHA : KILN_BLEND_ONE;
            c.dst = c.dst_a = u ? KILN_BLEND_INV_SRC_ALPHA : KILN_BLEND_ONE;
            c.op = c.op_a = KILN_BLEND_OP_ADD;
        }
    }
    for (int ch = 0; ch < 4; ch++)
        c.s[ch] = gen_src(r);
    c.k_null = th_below(r, 100) < 12;
    for (int ch = 0; ch < 4; ch++)
        c.k[ch] = gen_k(r);
    return c;
}

static void print_case(const bcase *c)
{
    fprintf(stderr,
            "      blending %s; color: src %s, dst %s, op %s (%d, %d, %d); alpha: src %s, dst %s, "
            "op %s (%d, %d, %d); write mask 0x%x\n",
            c->enable ? "on" : "off", FNAME[c->src], FNAME[c->dst], ONAME[c->op], (int)c->src,
            (int)c->dst, (int)c->op, FNAME[c->src_a], FNAME[c->dst_a], ONAME[c->op_a],
            (int)c->src_a, (int)c->dst_a, (int)c->op_a, c->mask);
    fprintf(stderr, "      src (%.9g, %.9g, %.9g, %.9g) = bits (%08x, %08x, %08x, %08x)\n",
            (double)c->s[0], (double)c->s[1], (double)c->s[2], (double)c->s[3], ru_fbits(c->s[0]),
            ru_fbits(c->s[1]), ru_fbits(c->s[2]), ru_fbits(c->s[3]));
    if (c->k_null)
        fprintf(stderr, "      blend factor NULL (1, 1, 1, 1)\n");
    else
        fprintf(stderr, "      blend factor (%.9g, %.9g, %.9g, %.9g) = bits (%08x, %08x, %08x, %08x)\n",
                (double)c->k[0], (double)c->k[1], (double)c->k[2], (double)c->k[3],
                ru_fbits(c->k[0]), ru_fbits(c->k[1]), ru_fbits(c->k[2]), ru_fbits(c->k[3]));
}

/* ---- drawing ---- */

static void set_cb(const float *f)
{
    if (CB.id)
        kiln_destroy_buffer(dev, CB);
    CB = ru_cbuffer(dev, f, 4);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &CB), KILN_OK);
}

static void apply_case(const bcase *c, kiln_blend_state *bs)
{
    set_cb(c->s);
    kiln_blend_desc bd;
    memset(&bd, 0, sizeof bd);
    bd.rt[0] = (kiln_blend_target){c->enable, c->src,  c->dst,  c->op,
                                   c->src_a,  c->dst_a, c->op_a, c->mask};
    *bs = ru_bs(dev, &bd);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, *bs, c->k_null ? NULL : c->k), KILN_OK);
}

static void draw_tri(const double v[3][2])
{
    float vt[3 * 4], *o = vt;
    for (int i = 0; i < 3; i++)
        o = ru_vtx(o, W, H, v[i][0], v[i][1], 0.5f);
    ru_draw(dev, ctx, vt, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

static void draw_rect(int x0, int y0, int x1, int y1)
{
    float vt[6 * 4], *o = vt;
    const double p[6][2] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y0}, {x1, y1}, {x0, y1}};
    for (int i = 0; i < 6; i++)
        o = ru_vtx(o, W, H, p[i][0], p[i][1], 0.5f);
    ru_draw(dev, ctx, vt, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* ---- one batch: a target with random bytes, cases drawn, compared ---- */

typedef struct batch {
    kiln_format fmt;
    uint32_t bpp;
    uint8_t exp[W * H * 4];
    uint8_t pre[W * H * 4]; /* bytes before the last case that covered the pixel */
    int who[W * H];         /* that case (index into cases), -1 none */
    bcase *cases;
    int ncases, cap;
    ru_tex rt;
} batch;

static void batch_begin(batch *b, kiln_format fmt, th_rng *r)
{
    b->fmt = fmt;
    b->bpp = kiln_format_size(fmt);
    b->ncases = 0;
    for (int i = 0; i < W * H; i++)
        b->who[i] = -1;
    static const uint8_t sp[] = {0, 255, 1, 254, 127, 128};
    for (uint32_t i = 0; i < W * H * b->bpp; i++)
        b->exp[i] = th_below(r, 100) < 80 ? (uint8_t)th_below(r, 256)
                                           : sp[th_below(r, sizeof sp / sizeof sp[0])];
    memset(&b->rt, 0, sizeof b->rt);
    b->rt.w = W;
    b->rt.h = H;
    b->rt.fmt = fmt;
    kiln_texture2d_desc d = {W, H, 1, 1, fmt, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0, 0};
    kiln_subresource_data init = {b->exp, W * b->bpp};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, &init, &b->rt.tex), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, b->rt.tex, NULL, &b->rt.rtv), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &b->rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
}

static int batch_add(batch *b, const bcase *c)
{
    if (b->ncases == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 256;
        b->cases = realloc(b->cases, sizeof(bcase) * (size_t)b->cap);
    }
    b->cases[b->ncases] = *c;
    return b->ncases++;
}

static void batch_cover(batch *b, int ci, int x, int y)
{
    size_t i = (size_t)y * W + (size_t)x;
    memcpy(b->pre + i * b->bpp, b->exp + i * b->bpp, b->bpp);
    b->who[i] = ci;
    ref_pixel(b->fmt, &b->cases[ci], b->exp + i * b->bpp);
}

static const char *fmt_name(kiln_format f)
{
    return f == KILN_FORMAT_R8G8B8A8_UNORM   ? "R8G8B8A8_UNORM"
           : f == KILN_FORMAT_B8G8R8A8_UNORM ? "B8G8R8A8_UNORM"
                                             : "R8_UNORM";
}

static long g_pixels_checked, g_mismatches;

/* Reads back and compares; returns the number of mismatching pixels. */
static int batch_end(batch *b, const char *what)
{
    uint8_t *got = ru_read_bytes(dev, &b->rt);
    int bad = 0, shown = 0;
    for (int i = 0; i < W * H; i++) {
        const uint8_t *g = got + (size_t)i * b->bpp, *e = b->exp + (size_t)i * b->bpp;
        g_pixels_checked++;
        if (!memcmp(g, e, b->bpp))
            continue;
        bad++;
        if (shown++ >= 8)
            continue;
        fprintf(stderr, "    %s %s: pixel (%d, %d): got", fmt_name(b->fmt), what, i % W, i / W);
        for (uint32_t c = 0; c < b->bpp; c++)
            fprintf(stderr, " %u", g[c]);
        fprintf(stderr, ", expected");
        for (uint32_t c = 0; c < b->bpp; c++)
            fprintf(stderr, " %u", e[c]);
        fprintf(stderr, " (bytes in memory order)\n");
        if (b->who[i] < 0) {
            fprintf(stderr, "      no draw covers this pixel: it must keep its bytes\n");
            continue;
        }
        const uint8_t *p = b->pre + (size_t)i * b->bpp;
        fprintf(stderr, "      case %d, dst bytes before it:", b->who[i]);
        for (uint32_t c = 0; c < b->bpp; c++)
            fprintf(stderr, " %u", p[c]);
        fprintf(stderr, "\n");
        print_case(&b->cases[b->who[i]]);
    }
    if (bad > shown)
        fprintf(stderr, "    ... %d mismatching pixels in all\n", bad);
    char msg[160];
    snprintf(msg, sizeof msg, "%s %s: every byte as the float formula gives", fmt_name(b->fmt),
             what);
    th_check(bad == 0, msg, __FILE__, __LINE__);
    g_mismatches += bad;
    free(got);
    ru_free_tex(dev, &b->rt);
    return bad;
}

/* ---- coverage bookkeeping ---- */

typedef struct cover {
    uint8_t color[NCOMBO], alpha[NCOMBO];
    long enabled, disabled, nan_src, inf_src, out_of_range_src, partial_mask, none_mask;
    long cases, pixels_blended;
} cover;

static void cover_case(cover *cv, kiln_format f, const bcase *c, long pixels)
{
    cv->cases++;
    if (!pixels)
        return;
    uint32_t wm = resolved_mask(c->mask);
    if (f == KILN_FORMAT_R8_UNORM)
        wm &= 1u;
    if (c->mask == KILN_COLOR_WRITE_NONE)
        cv->none_mask++;
    else if (wm != 15u && f != KILN_FORMAT_R8_UNORM)
        cv->partial_mask++;
    if (!c->enable) {
        cv->disabled++;
        return;
    }
    cv->enabled++;
    cv->pixels_blended += pixels;
    for (int ch = 0; ch < 4; ch++) {
        cv->nan_src += isnan(c->s[ch]) != 0;
        cv->inf_src += isinf(c->s[ch]) != 0;
        cv->out_of_range_src += !isnan(c->s[ch]) && (c->s[ch] < 0.0f || c->s[ch] > 1.0f);
    }
    if (wm & 7u)
        cv->color[(c->src * NF + c->dst) * NOP + c->op] = 1;
    if (wm & 8u)
        cv->alpha[(c->src_a * NF + c->dst_a) * NOP + c->op_a] = 1;
}

static int count_ones(const uint8_t *a, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += a[i];
    return k;
}

/* ---- rect batches ---- */

static void run_rects(kiln_format fmt, th_rng *r, batch *b, cover *cv)
{
    /* NRECT cases: the full color and alpha cross products (blending on)
     * four times over, then random ones, shuffled. */
    bcase *all = malloc(sizeof(bcase) * NRECT);
    int perm[NCOMBO];
    for (int i = 0; i < NCOMBO; i++)
        perm[i] = i;
    for (int i = NCOMBO - 1; i > 0; i--) {
        int j = (int)th_below(r, (uint32_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < NRECT; i++)
        all[i] = i < NFORCED ? gen_case(r, i % NCOMBO, perm[(i + i / NCOMBO) % NCOMBO])
                             : gen_case(r, -1, -1);
    for (int i = NRECT - 1; i > 0; i--) {
        int j = (int)th_below(r, (uint32_t)i + 1);
        bcase t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    int next = 0, nb = 0;
    while (next < NRECT) {
        /* 4x2 cells from (ox, oy): ox = 2, oy = 1 ends exactly at the
         * target's right and bottom edges, inside a block */
        int ox = (int)((nb + 2) % 4), oy = (nb + 1) % 2;
        batch_begin(b, fmt, r);
        for (int cy = oy; cy + 2 <= H && next < NRECT; cy += 2)
            for (int cx = ox; cx + 4 <= W && next < NRECT; cx += 4) {
                const bcase *c = &all[next++];
                int x0 = cx + (int)th_below(r, 4), y0 = cy + (int)th_below(r, 2);
                int x1 = x0 + 1 + (int)th_below(r, (uint32_t)(cx + 4 - x0));
                int y1 = y0 + 1 + (int)th_below(r, (uint32_t)(cy + 2 - y0));
                int ci = batch_add(b, c);
                kiln_blend_state bs;
                apply_case(c, &bs);
                draw_rect(x0, y0, x1, y1);
                kiln_destroy_blend_state(dev, bs);
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++)
                        batch_cover(b, ci, x, y);
                cover_case(cv, fmt, c, (long)(x1 - x0) * (y1 - y0));
            }
        char what[64];
        snprintf(what, sizeof what, "rect batch %d (cells from (%d, %d))", nb, ox, oy);
        batch_end(b, what);
        nb++;
    }
    free(all);
}

/* Whole 4x4 blocks, one case each (the color and alpha cross products
 * once more): at the AVX2 level only whole blocks blend two rows per
 * vector (pixel_avx2.c). */
static void run_blocks(kiln_format fmt, th_rng *r, batch *b, cover *cv)
{
    int next = 0, nb = 0;
    while (next < NCOMBO) {
        batch_begin(b, fmt, r);
        for (int by = 0; by + 4 <= H && next < NCOMBO; by += 4)
            for (int bx = 0; bx + 4 <= W && next < NCOMBO; bx += 4) {
                bcase c = gen_case(r, next, (next * 7 + nb) % NCOMBO);
                next++;
                int ci = batch_add(b, &c);
                kiln_blend_state bs;
                apply_case(&c, &bs);
                draw_rect(bx, by, bx + 4, by + 4);
                kiln_destroy_blend_state(dev, bs);
                for (int y = by; y < by + 4; y++)
                    for (int x = bx; x < bx + 4; x++)
                        batch_cover(b, ci, x, y);
                cover_case(cv, fmt, &c, 16);
            }
        char what[64];
        snprintf(what, sizeof what, "whole-block batch %d", nb);
        batch_end(b, what);
        nb++;
    }
}

/* ---- triangle batches ---- */

/* Edge function of (a, b) at p, exact for coordinates on a 1/16 grid. */
static double edge(const double a[2], const double b[2], double px, double py)
{
    return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
}

static double grid16(th_rng *r, double lo, double hi)
{
    uint32_t n = (uint32_t)((hi - lo) * 16.0);
    return lo + th_below(r, n + 1) / 16.0;
}

/* A random small triangle, many crossing the right or bottom edge; its
 * covered pixels (strictly inside: no pixel center of the target lies on
 * an edge line within the bounding box) in cov. Returns the count. */
static int gen_tri(th_rng *r, double v[3][2], uint8_t *cov)
{
    for (;;) {
        double cx, cy;
        uint32_t u = th_below(r, 4);
        if (u == 0) { /* bottom-right corner */
            cx = grid16(r, W - 6, W + 2);
            cy = grid16(r, H - 6, H + 2);
        } else if (u == 1) { /* right edge */
            cx = grid16(r, W - 5, W + 2);
            cy = grid16(r, -2, H + 2);
        } else if (u == 2) { /* bottom edge */
            cx = grid16(r, -2, W + 2);
            cy = grid16(r, H - 5, H + 2);
        } else {
            cx = grid16(r, -2, W + 2);
            cy = grid16(r, -2, H + 2);
        }
        double size = th_below(r, 3) == 0 ? 10.0 : 4.0;
        for (int i = 0; i < 3; i++) {
            v[i][0] = cx + grid16(r, -size, size);
            v[i][1] = cy + grid16(r, -size, size);
        }
        double area = edge(v[0], v[1], v[2][0], v[2][1]);
        if (area == 0.0)
            continue;
        int bx0 = (int)floor(fmin(fmin(v[0][0], v[1][0]), v[2][0])) - 1;
        int by0 = (int)floor(fmin(fmin(v[0][1], v[1][1]), v[2][1])) - 1;
        int bx1 = (int)ceil(fmax(fmax(v[0][0], v[1][0]), v[2][0])) + 1;
        int by1 = (int)ceil(fmax(fmax(v[0][1], v[1][1]), v[2][1])) + 1;
        bx0 = bx0 < 0 ? 0 : bx0;
        by0 = by0 < 0 ? 0 : by0;
        bx1 = bx1 > W ? W : bx1;
        by1 = by1 > H ? H : by1;
        int tie = 0, n = 0;
        memset(cov, 0, W * H);
        for (int y = by0; y < by1 && !tie; y++)
            for (int x = bx0; x < bx1; x++) {
                double px = x + 0.5, py = y + 0.5;
                double e0 = edge(v[0], v[1], px, py), e1 = edge(v[1], v[2], px, py),
                       e2 = edge(v[2], v[0], px, py);
                if (e0 == 0.0 || e1 == 0.0 || e2 == 0.0) {
                    tie = 1;
                    break;
                }
                int in = area > 0 ? (e0 > 0 && e1 > 0 && e2 > 0) : (e0 < 0 && e1 < 0 && e2 < 0);
                cov[y * W + x] = (uint8_t)in;
                n += in;
            }
        if (!tie && n > 0)
            return n;
    }
}

static void run_tris(kiln_format fmt, th_rng *r, batch *b, cover *cv, long *partial_blocks)
{
    static uint8_t cov[W * H];
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    for (int nb = 0; nb < NTRI_BATCH; nb++) {
        batch_begin(b, fmt, r);
        CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
        for (int t = 0; t < NTRI; t++) {
            double v[3][2];
            int n = gen_tri(r, v, cov);
            bcase c = gen_case(r, -1, -1);
            int ci = batch_add(b, &c);
            kiln_blend_state bs;
            apply_case(&c, &bs);
            draw_tri(v);
            kiln_destroy_blend_state(dev, bs);
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    if (cov[y * W + x])
                        batch_cover(b, ci, x, y);
            cover_case(cv, fmt, &c, n);
            /* blocks this triangle covers only in part */
            for (int by = 0; by < H; by += 4)
                for (int bx = 0; bx < W; bx += 4) {
                    int k = 0, tot = 0;
                    for (int y = by; y < by + 4; y++)
                        for (int x = bx; x < bx + 4; x++) {
                            tot++;
                            k += x < W && y < H && cov[y * W + x];
                        }
                    *partial_blocks += k > 0 && k < tot;
                }
        }
        char what[64];
        snprintf(what, sizeof what, "triangle batch %d", nb);
        batch_end(b, what);
    }
    CHECK_RESULT(kiln_rs_set_state(ctx, (kiln_rasterizer_state){0}), KILN_OK);
    kiln_destroy_rasterizer_state(dev, rs);
}

/* ---- a self-check of the reference on hand-computed values ---- */

static void test_reference(void)
{
    /* ONE, ZERO: plain source, clamped; 0.5 * 255 + 0.5 = 128 */
    bcase c;
    memset(&c, 0, sizeof c);
    c.enable = 1;
    c.s[0] = 0.5f;
    c.s[1] = 1.5f;
    c.s[2] = -1.0f;
    c.s[3] = NAN;
    uint8_t p[4] = {10, 20, 30, 40};
    ref_pixel(KILN_FORMAT_R8G8B8A8_UNORM, &c, p);
    CHECK(p[0] == 128 && p[1] == 255 && p[2] == 0 && p[3] == 0);
    /* SRC_ALPHA, INV_SRC_ALPHA on BGRA: R = 1 * 0.25 + (204 / 255) * 0.75 */
    memset(&c, 0, sizeof c);
    c.enable = 1;
    c.src = KILN_BLEND_SRC_ALPHA;
    c.dst = KILN_BLEND_INV_SRC_ALPHA;
    c.s[0] = 1.0f;
    c.s[3] = 0.25f;
    c.mask = KILN_COLOR_WRITE_R;
    uint8_t q[4] = {1, 2, 204, 4}; /* B G R A */
    ref_pixel(KILN_FORMAT_B8G8R8A8_UNORM, &c, q);
    CHECK(q[0] == 1 && q[1] == 2 && q[3] == 4);
    CHECK_EQ_INT(q[2], 217); /* (0.25 + 0.8 * 0.75) * 255 = 216.75 -> 217 */
}

/* The AVX2 blend's byte / 255.0f (a reciprocal product and one corrected
 * step, no divide) is the table's division for every byte. */
static void test_unorm8_avx2(void)
{
#if KR_EFFECTS_X86
    if (!kr_effects_kernels(KR_SIMD_AVX2)) {
        printf("byte / 255 at the AVX2 level: no AVX2 + FMA here, not run\n");
        return;
    }
    int bad = 0;
    for (int i = 0; i < 256; i += 8) {
        uint8_t in[8];
        float out[8];
        for (int k = 0; k < 8; k++)
            in[k] = (uint8_t)(i + k);
        kr_unorm8_avx2(in, out);
        for (int k = 0; k < 8; k++) {
            volatile float want = (float)(i + k) / 255.0f;
            bad += memcmp(&out[k], (const void *)&want, 4) != 0;
            bad += memcmp(&out[k], &kr_unorm8_float[i + k], 4) != 0;
        }
    }
    CHECK_EQ_INT(bad, 0);
    printf("byte / 255 at the AVX2 level: 256 bytes, %d differ\n", bad);
    if (!kr_effects_kernels(KR_SIMD_AVX512)) {
        printf("byte / 255 at the AVX-512 level: no AVX-512 here, not run\n");
        return;
    }
    bad = 0;
    for (int i = 0; i < 256; i += 16) {
        uint8_t in[16];
        float out[16];
        for (int k = 0; k < 16; k++)
            in[k] = (uint8_t)(i + k);
        kr_unorm8_avx512(in, out);
        for (int k = 0; k < 16; k++)
            bad += memcmp(&out[k], &kr_unorm8_float[i + k], 4) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    printf("byte / 255 at the AVX-512 level: 256 bytes, %d differ\n", bad);
#endif
}

int main(void)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    test_reference();
    dev = th_device(KILN_EXEC_ASYNC, 0);
    ctx = kiln_device_immediate_context(dev);
    PC = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ru_bind_pipe(ctx, &PC);
    CHECK_RESULT(kiln_rs_set_state(ctx, (kiln_rasterizer_state){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);

    static batch b;
    static const kiln_format fmts[3] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM,
                                        KILN_FORMAT_R8_UNORM};
    /* RGBA8 and BGRA8 blend four lanes at a time at the SSE2 level and
     * eight (pixel_avx2.c) at the AVX2 level: every case at each level
     * this CPU has (R8 takes the scalar loop at any level). */
    test_unorm8_avx2();
    kr_simd lv[3];
    int nlv = kr_effects_vector_levels(lv);
    int runs = nlv ? 2 * nlv + 1 : 3;
    for (int run = 0; run < runs; run++) {
        int f = nlv ? (run < 2 * nlv ? run / nlv : 2) : run;
        if (nlv) {
            kr_simd level = run < 2 * nlv ? lv[run % nlv] : lv[nlv - 1];
            CHECK_RESULT(kr_effects_force_level(level), KILN_OK);
            printf("[%s] ", kr_simd_name(level));
        }
        th_rng r = {0x9e3779b97f4a7c15ull ^ (uint64_t)(f + 1) * 0x100000001b3ull};
        cover cv;
        memset(&cv, 0, sizeof cv);
        long partial_blocks = 0;
        long before = g_mismatches;
        run_rects(fmts[f], &r, &b, &cv);
        run_blocks(fmts[f], &r, &b, &cv);
        run_tris(fmts[f], &r, &b, &cv, &partial_blocks);
        int nc = count_ones(cv.color, NCOMBO), na = count_ones(cv.alpha, NCOMBO);
        char msg[128];
        snprintf(msg, sizeof msg, "%s: every (src, dst, op) blended at least once",
                 fmt_name(fmts[f]));
        th_check(nc == NCOMBO, msg, __FILE__, __LINE__);
        if (fmts[f] != KILN_FORMAT_R8_UNORM) {
            snprintf(msg, sizeof msg, "%s: every (src_a, dst_a, op_a) blended at least once",
                     fmt_name(fmts[f]));
            th_check(na == NCOMBO, msg, __FILE__, __LINE__);
        }
        printf("%s: %ld cases (%ld blending on, %ld off; %ld partial masks, %ld NONE), "
               "%ld pixels blended, color combos %d/%d, alpha combos %d/%d; sources blended: "
               "%ld NaN, %ld inf, %ld out of [0, 1] channels; %ld partially covered blocks; "
               "%ld mismatching pixels\n",
               fmt_name(fmts[f]), cv.cases, cv.enabled, cv.disabled, cv.partial_mask,
               cv.none_mask, cv.pixels_blended, nc, NCOMBO, na, NCOMBO, cv.nan_src, cv.inf_src,
               cv.out_of_range_src, partial_blocks, g_mismatches - before);
    }
    free(b.cases);
    if (CB.id)
        kiln_destroy_buffer(dev, CB);
    ru_free_pipe(dev, &PC);
    kiln_device_destroy(dev);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%ld pixels compared, %ld mismatches, %.2f s\n", g_pixels_checked, g_mismatches,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    return th_exit();
}
