#if defined(__linux__)
#define _GNU_SOURCE /* sched_setaffinity: the scaling section's per-CPU frames */
#endif
/*
 * bench_raster - what the soft rasterizer costs per frame, and beside it
 * Mesa's llvmpipe through kiln's osmesa backend and in raw GL.
 *
 * Every frame is: clear color + depth, the scene's draws, then kiln_finish
 * (no readback), all timed, so the figure is the whole frame's execution
 * including the producer's API calls. Scenes (default 1920x1080, RGBA8
 * target, D32_FLOAT depth, culling off, identity world_view_proj):
 *
 *  (a)  100,000 small vertex-colored triangles (KILN_EFFECT_VERTEX_COLOR,
 *       ~5 px each, random positions, per-triangle depth) in ONE draw, depth
 *       test LESS with writes.
 *  (b)  10,000 mid-sized vertex-colored triangles (20-40 px on a side),
 *       one draw, depth test as (a).
 *  (c)  16 full-screen layers of KILN_EFFECT_TEXTURE: a 512x512 RGBA8
 *       texture, bilinear (LINEAR/LINEAR, CLAMP), each layer one 2-triangle
 *       quad. Blending OFF, depth test off (depth still cleared).
 *  (c/ps) as (c) with the pixel shader an application would write for it
 *       (kiln_ps_sample into the color): the general pixel pipeline, which
 *       (c)'s built-in effect skips (its fused path, docs/raster.md).
 *  (c/pt) as (c/ps) with a POINT sampler (min and mag; CLAMP): nearest
 *       texels, as pixel art, a UI or an emulator's screen is drawn.
 *  (c+) as (c) with blending ON (additive ONE/ONE), for the cost of blending.
 *  (c/bc1) as (c) with a 512x512 BC1 texture (8x8 flat cells of their own
 *       colors, every block in 4-color mode): the cost of decoding a block
 *       per texel read. The osmesa backend refuses BC formats, so its
 *       columns read n/a; raw GL uploads the same blocks as S3TC DXT1.
 *  (c+a) as (c) with alpha blending (SRC_ALPHA / INV_SRC_ALPHA for color
 *       and alpha); the texture is opaque, so the image is (c)'s.
 *  (d)  100,000 one-triangle draw calls: the triangles of (a), each
 *       kiln_draw(3, 3 * i) with the same state as (a).
 *  (e)  a perspective mesh: 1,500 quads (3,000 triangles) in view space at
 *       depths 3 to 12, 0.3 to 0.9 units, leaning in depth, in random
 *       order (about 4x overdraw), KILN_EFFECT_TEXTURE through a
 *       perspective matrix, the 512x512 texture with its mip chain (made
 *       by kiln_generate_mips) sampled trilinearly with WRAP (1 to 4
 *       repeats per quad), depth LESS with writes. One draw.
 *  (g)  50,000 particles: 3 to 8 px square sprites (a 32x32 texture with a
 *       round alpha falloff), alpha blending, depth test LESS with writes
 *       off, random depths. One draw, as particle systems batch them.
 *  (g/sb) (g) as a sprite batch writes it (DirectXTK's SpriteBatch, D3D10
 *       samples): one DYNAMIC vertex buffer of 2,048 sprites; per batch of
 *       256, a WRITE_NO_OVERWRITE Map (WRITE_DISCARD when the buffer is
 *       full and starts over), the batch's vertices copied in, Unmap, one
 *       draw of the batch: 196 Maps and draws a frame. The same vertices
 *       in the same order as (g): the image is (g)'s, bit for bit.
 *  (a/4x), (e/4x) the cost of multisampling: (a) and (e) drawn into a 4x
 *       RGBA8 target with a 4x D32_FLOAT depth buffer (sample_count 4),
 *       cleared as the 1x ones, the frame ending with
 *       kiln_resolve_subresource into the 1x target, which is timed: a 4x
 *       frame includes its resolve, as an application's would. Beside each
 *       row, the 4x frame's median over the 1x scene's when both ran (the
 *       MSAA cost). The osmesa backend refuses 4x textures: its columns
 *       read n/a; raw GL draws the same into 4x renderbuffers.
 *
 * Rates: (a)/(b)/(d) triangles/s, (c) Mpixels/s = 16 * W * H / time,
 * (d) draw calls/s. Thread scaling on (c), (c/ps) and (e): two more
 * devices, one thread (SERIAL) and two (ASYNC with one worker plus the
 * application's thread, which helps while it waits in kiln_finish), frames
 * interleaved; ratio = time(1 thread) / time(2 threads). On Linux with two
 * CPUs or more, the 1-thread frames also run pinned to each of the first
 * two CPUs in turn: on a shared host the two are not equally fast (seen
 * here: one 20-45% slower than the other for minutes at a time), which caps the
 * ratio below 2 whatever kiln does, so a last row gives the 2-thread time
 * against the two CPUs' combined rate (1 = both fully used).
 *
 * Sanity checks (read back through a STAGING copy after the timed frames,
 * never timed) so that a broken renderer cannot report good numbers:
 *  (a),(b),(d)  four "probe" triangles (the last ones, nearest depth, flat
 *               colors) read back exactly at their centers; the share of
 *               covered pixels is within 20% of what the triangles' total
 *               area predicts; (d)'s image is bit-identical to (a)'s.
 *  (c)          the center pixel of each of the texture's 8x8 flat-colored
 *               cells reads back exactly that cell's texel;
 *  (c/ps)       the same, and the image is bit-identical to (c)'s;
 *  (c/pt)       as (c): a cell's center is its texel under POINT too;
 *  (c+)         ... exactly the clear color + 16 x the texel (all 16
 *               layers were blended); (c+a) as (c);
 *  (c/bc1)      each cell's center reads its BC1 color exactly (D3D10's
 *               5:6:5 to float, then to UNORM8); raw GL within 1 per
 *               channel (llvmpipe widens 5:6:5 by bit replication, which
 *               differs by 1 from that rounding on a few codes);
 *  (g/sb)       (g)'s checks, and the image is bit-identical to (g)'s;
 *  (e), (g)     at least 50% (e) / 20% (g) of the pixels drawn and at
 *               least 200 / 50 distinct colors (a blank, flat or
 *               half-drawn image fails);
 *  (a/4x)       on the resolved image, (a)'s checks: the probes' centers
 *               have all four samples inside the probe, so they read
 *               exactly its color; the covered share is the mean alpha /
 *               255 (the share of covered samples, which is what (a)'s
 *               count of alpha-255 pixels is at one sample); and enough
 *               partly covered edge pixels (alpha strictly between 0 and
 *               255, at least 2 a triangle times exp(-area / screen); about
 *               24% of the target at 1080p), which a 1x image or a resolve
 *               that took one sample does not have;
 *  (e/4x)       (e)'s checks on the resolved image, and at least (W + H) / 2
 *               partly covered edge pixels (the mesh's outline; about
 *               0.27% of the target at 1080p);
 *  scaling      the 1-thread and 2-thread images of each scene are
 *               identical (and pass the scene's own check).
 * A failed check prints CHECK FAILED, marks the row and makes the exit
 * status 1.
 *
 * Each figure is the median over --frames frames after warm-up frames
 * (min and max shown). Timing uses clock_gettime(CLOCK_MONOTONIC). The
 * 'cpu' column is the process's CPU time over wall time per frame: below
 * the worker count, workers sat idle (serial phases) or other processes
 * took the CPUs; the 1-minute load average is printed for the same reason.
 *
 * soft, osmesa and raw GL: after these, the selected scenes run on three
 * sides, frames interleaved soft, osmesa, raw GL, soft, ... so that the
 * machine's drift hits all three, each frame timed as above:
 *   soft     a soft device (KILN_BACKEND_SOFT)
 *   osmesa   an osmesa device (KILN_BACKEND_OSMESA): the same kiln calls,
 *            executed by Mesa's llvmpipe through src/gl
 *   raw GL   the anchor, bench/anchor_gl.c: the same scenes, vertex data,
 *            texture bytes and states written directly in GL on llvmpipe,
 *            through a context of its own (src/gl/provider.h) and no kiln:
 *            the built-in effects' GLSL, one FBO (RGBA8 + DEPTH32F),
 *            buffers uploaded once; a frame is ClearBuffer color and depth,
 *            the draws ((d): 100,000 glDrawArrays of 3 vertices), glFinish.
 *            (c/ps) is (c) there: raw GL has one shader for both. (e):
 *            the same mesh and matrix (u_cb0), the texture's mip levels
 *            read back from the soft device after kiln_generate_mips (the
 *            same bytes), LINEAR_MIPMAP_LINEAR with REPEAT, depth LESS +
 *            write. The 4x scenes: a second FBO with 4x GL_RGBA8 and
 *            GL_DEPTH_COMPONENT32F renderbuffers, resolved in the timed
 *            frame by glBlitNamedFramebuffer into the 1x texture.
 *            (g) and (f) are not in the anchor: they compare with osmesa
 *            only, and the raw GL columns read n/a.
 * All three use the same thread count; llvmpipe takes its count from the
 * process's first GL context (an osmesa device, created before the anchor),
 * and the anchor shares it. Columns: soft, osmesa and raw GL ms (median),
 * then medians of per-frame ratios: osm/soft (with min and max), raw/soft,
 * and osm/raw, the osmesa backend's own overhead over the same GL work.
 * The osmesa and raw GL images pass their scene's check above (probes and
 * coverage, or cell centers; a failure counts as any other), and whether
 * the two are bit-identical is shown, or the share of pixels that differ
 * (information, not a check; raw GL against soft where osmesa has no
 * image: (c/bc1), (a/4x), (e/4x)). After the table, the MSAA cost on soft
 * and on raw GL: median 4x frame / median 1x frame, from the same
 * interleaved run. Without the osmesa backend in the build (CMake's
 * KILN_HAVE_GL off) the anchor is not built and its columns read n/a;
 * without the backend at run time the comparison is skipped.
 *
 * Usage: bench_raster [--quick] [--threads N] [--size WxH] [--frames N] [--soft-only]
 *                     [--scenes LIST]
 * LIST is a comma-separated subset of a,b,c,c/ps,c/pt,c+,c+a,d,e,f,g,g/sb,c/bc1,a/4x,e/4x,scaling
 * (default: all), e.g. to profile one scene with perf.
 *
 * What a run costs (1920x1080, the 2-core development machine shared with
 * other builds, load average 3-6): the default run (every scene, 10
 * frames after 2 warm-up, scaling and the llvmpipe comparison) about
 * 2 min 50 s, --quick about 70 s. Most of it is (c/bc1), 3.4 s a soft
 * frame; (a/4x) and (e/4x) add about 20 s to a default run (0.2-0.6 s a
 * frame on each side), so they are in the default set.
 */
#include "../examples/mat4.h" /* (f): the objects example's matrices and cube */
#include "../examples/mesh.h"
#include "host.h"
#include "kiln.h"

#ifdef KILN_HAVE_GL
#include "anchor_gl.h"
#else
typedef struct anchor_gl anchor_gl; /* no raw GL anchor without the osmesa backend */
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sched.h>
#endif

#define N_SMALL 100000u   /* (a), and (d)'s draw calls */
#define N_MID 10000u      /* (b) */
#define N_LAYERS 16u      /* (c) */
#define N_PROBES 4u       /* the last triangles of (a), (b), (d) */
#define TEX_SIZE 512u
#define TEX_CELL 64u      /* flat-colored cells of the texture */
#define N_MESH_QUADS 1500u /* (e): 3,000 triangles */
#define N_PARTICLES 50000u /* (g) */
#define SB_CAPACITY 2048u  /* (g/sb): sprites the dynamic buffer holds */
#define SB_BATCH 256u      /* and a batch's sprites (one Map, one draw) */
#define PART_TEX 32u       /* (g)'s particle texture */
#define OBJ_COLS 40u       /* (f): the objects example's 40 x 25 cubes */
#define OBJ_ROWS 25u
#define N_OBJECTS (OBJ_COLS * OBJ_ROWS)
#define MAX_FRAMES 1000
#define PI 3.14159265358979323846

/* Targets from the issue. */
#define TARGET_A_MTRIS 5.0
#define TARGET_C_MPIX 500.0
#define TARGET_SCALING 1.7

/* The clear color (alpha 0: every triangle writes alpha 255, so a pixel
 * is covered iff its alpha is 255). */
static const float clear_color[4] = {0.1f, 0.1f, 0.1f, 0.0f};

/* ---------------------------------------------------------------------------
 * Plumbing
 * ------------------------------------------------------------------------- */

#define CHECK(call)                                                                                \
    do {                                                                                           \
        kiln_result r_ = (call);                                                                   \
        if (r_ != KILN_OK) {                                                                       \
            fprintf(stderr, "bench_raster: %s failed: %s (raster.c:%d)\n", #call,                  \
                    kiln_result_string(r_), __LINE__);                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* CPU time of the whole process (all threads). */
static uint64_t cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

/* The 1-minute load average, or -1 where /proc/loadavg does not exist: the
 * machine's other load makes the figures noisy. */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct summary {
    double median, min, max;
} summary;

static summary summarize(const double *in, int n)
{
    double v[MAX_FRAMES];
    memcpy(v, in, sizeof(double) * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    summary s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "bench_raster: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* splitmix64: a fixed seed gives the same scene on every run. */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }
static double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_unit(); }

static int failures; /* sanity checks that failed */

#if defined(__GNUC__)
static void check_failed(const char *scene, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
static void check_failed(const char *scene, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "CHECK FAILED %s: ", scene);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    failures++;
}

/* ---------------------------------------------------------------------------
 * Geometry (built once on the CPU, uploaded to every device)
 * ------------------------------------------------------------------------- */

typedef struct vtx_color {
    float x, y, z;   /* NDC (the VS applies the identity matrix) */
    uint8_t rgba[4]; /* R8G8B8A8_UNORM */
} vtx_color;

typedef struct vtx_tex {
    float x, y, z;
    float u, v;
} vtx_tex;

typedef struct probe {
    uint32_t x, y;   /* the pixel at the probe's center */
    uint8_t rgba[4];
} probe;

typedef struct tri_set {
    vtx_color *v;     /* 3 per triangle */
    uint32_t ntris;
    double area;      /* total area in pixels (inside or not) */
    probe probes[N_PROBES];
} tri_set;

static uint32_t W = 1920, H = 1080;

static float ndc_x(double px) { return (float)(2.0 * px / W - 1.0); }
static float ndc_y(double py) { return (float)(1.0 - 2.0 * py / H); }

/* `n` triangles: n - N_PROBES random ones (center uniform on the target,
 * three corners at radius [rmin, rmax] px around it, 120 degrees apart with
 * some jitter, a random color per corner, one random depth in [0.1, 0.9]),
 * then N_PROBES flat-colored probes of radius 3 at depth 0.01, centered on
 * pixel centers along the middle row. */
static void make_tris(tri_set *t, uint32_t n, double rmin, double rmax)
{
    static const uint8_t probe_colors[N_PROBES][4] = {
        {255, 0, 255, 255}, {0, 255, 255, 255}, {255, 255, 0, 255}, {255, 255, 255, 255}};
    t->v = xmalloc(sizeof(vtx_color) * 3 * n);
    t->ntris = n;
    t->area = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool is_probe = i >= n - N_PROBES;
        double cx, cy, r, th, z;
        const uint8_t *flat = NULL;
        if (is_probe) {
            probe *p = &t->probes[i - (n - N_PROBES)];
            p->x = W * (i - (n - N_PROBES) + 1) / (N_PROBES + 1);
            p->y = H / 2;
            memcpy(p->rgba, probe_colors[i - (n - N_PROBES)], 4);
            cx = p->x + 0.5;
            cy = p->y + 0.5;
            r = 3.0;
            th = 0.3;
            z = 0.01;
            flat = p->rgba;
        } else {
            cx = rng_range(0, W);
            cy = rng_range(0, H);
            r = rng_range(rmin, rmax);
            th = rng_range(0, 2 * PI);
            z = rng_range(0.1, 0.9);
        }
        double px[3], py[3];
        for (int k = 0; k < 3; k++) {
            double a = th + k * (2 * PI / 3) + (is_probe ? 0 : rng_range(-0.25, 0.25));
            px[k] = cx + r * cos(a);
            py[k] = cy + r * sin(a);
            vtx_color *v = &t->v[3 * i + k];
            v->x = ndc_x(px[k]);
            v->y = ndc_y(py[k]);
            v->z = (float)z;
            for (int c = 0; c < 3; c++)
                v->rgba[c] = flat ? flat[c] : (uint8_t)(rng_next() >> 56);
            v->rgba[3] = 255;
        }
        t->area += fabs((px[1] - px[0]) * (py[2] - py[0]) - (px[2] - px[0]) * (py[1] - py[0])) / 2;
    }
}

/* The texture: 8x8 cells of 64x64 texels, each one flat color with
 * channels in 1..14 (so the clear color plus 16 additive layers stays
 * below 255), alpha 255. */
static void cell_color(uint32_t ci, uint32_t cj, uint8_t out[4])
{
    out[0] = (uint8_t)(1 + (ci * 5 + cj * 3) % 14);
    out[1] = (uint8_t)(1 + (ci * 2 + cj * 7) % 14);
    out[2] = (uint8_t)(1 + (ci + cj * 11) % 14);
    out[3] = 255;
}

/* (c/bc1): cell (ci, cj)'s 5:6:5 color, red never 0, so c0 > c1 = 0
 * (4-color mode) with every code 0: a flat cell of exactly c0. */
static uint32_t bc1_cell(uint32_t ci, uint32_t cj)
{
    uint32_t r = 1 + (ci * 4 + cj * 3) % 31, g = (ci * 9 + cj * 5) % 64, b = (ci * 3 + cj * 7) % 32;
    return r << 11 | g << 5 | b;
}

/* The cell's color as D3D10 decodes it, in UNORM8 (round(c / 31 * 255)). */
static void bc1_cell_rgba(uint32_t ci, uint32_t cj, int out[4])
{
    uint32_t c = bc1_cell(ci, cj);
    out[0] = (int)((c >> 11) * 255.0f / 31.0f + 0.5f);
    out[1] = (int)((c >> 5 & 63u) * 255.0f / 63.0f + 0.5f);
    out[2] = (int)((c & 31u) * 255.0f / 31.0f + 0.5f);
    out[3] = 255;
}

static uint8_t *make_bc1_data(void)
{
    uint32_t bw = TEX_SIZE / 4;
    uint8_t *d = xmalloc((size_t)bw * bw * 8);
    for (uint32_t by = 0; by < bw; by++)
        for (uint32_t bx = 0; bx < bw; bx++) {
            uint8_t *b = d + ((size_t)by * bw + bx) * 8;
            uint32_t c = bc1_cell(bx * 4 / TEX_CELL, by * 4 / TEX_CELL);
            memset(b, 0, 8);
            b[0] = (uint8_t)c;
            b[1] = (uint8_t)(c >> 8);
        }
    return d;
}
static uint8_t *bc1_blocks;

static uint8_t *make_texture_data(void)
{
    uint8_t *d = xmalloc(TEX_SIZE * TEX_SIZE * 4);
    for (uint32_t y = 0; y < TEX_SIZE; y++)
        for (uint32_t x = 0; x < TEX_SIZE; x++)
            cell_color(x / TEX_CELL, y / TEX_CELL, d + ((size_t)y * TEX_SIZE + x) * 4);
    return d;
}

/* (e): quads in view space (right-handed, z in [-12, -3]), 0.3 to 0.9
 * units on a side, leaning in depth, uv spanning 1 to 4 texture repeats
 * (WRAP): a perspective mesh whose texels per pixel vary across and
 * between triangles, drawn in random order (overdraw about 4x). */
static vtx_tex *mesh;
static float mesh_proj[16]; /* its matrix, row-major (kiln's constant buffer, u_cb0's rows) */
static vtx_tex *particles; /* (g): 6 vertices per particle, clip space */
static uint8_t part_texels[PART_TEX * PART_TEX * 4];

static void make_extra_scenes(void)
{
    /* (e): row-major perspective (60 degrees vertically, z 1..20) */
    float ys = (float)(1.0 / tan(PI / 6)), xs = ys * (float)H / (float)W;
    float pa = 20.0f / (1.0f - 20.0f), pb = 20.0f / (1.0f - 20.0f);
    const float proj[16] = {xs, 0, 0, 0, 0, ys, 0, 0, 0, 0, pa, pb, 0, 0, -1, 0};
    memcpy(mesh_proj, proj, sizeof proj);
    mesh = xmalloc(sizeof(vtx_tex) * 6 * N_MESH_QUADS);
    for (uint32_t i = 0; i < N_MESH_QUADS; i++) {
        double cx = rng_range(-6, 6), cy = rng_range(-3.6, 3.6), cz = rng_range(-12, -3);
        double sx = rng_range(0.3, 0.9), sy = rng_range(0.3, 0.9), lean = rng_range(-0.6, 0.6);
        double rep_u = rng_range(1, 4), rep_v = rng_range(1, 4);
        vtx_tex c[4];
        for (int k = 0; k < 4; k++) {
            double ex = (k & 1) ? 0.5 : -0.5, ey = (k & 2) ? 0.5 : -0.5;
            c[k] = (vtx_tex){(float)(cx + ex * sx), (float)(cy + ey * sy),
                             (float)(cz + ex * lean * sx), (float)((ex + 0.5) * rep_u),
                             (float)((0.5 - ey) * rep_v)};
        }
        vtx_tex *v = &mesh[6 * i];
        v[0] = c[0], v[1] = c[1], v[2] = c[2], v[3] = c[2], v[4] = c[1], v[5] = c[3];
    }
    particles = xmalloc(sizeof(vtx_tex) * 6 * N_PARTICLES);
    for (uint32_t i = 0; i < N_PARTICLES; i++) {
        double cx = rng_range(0, W), cy = rng_range(0, H), r = rng_range(1.5, 4.0);
        float z = (float)rng_range(0.05, 0.95);
        vtx_tex c[4];
        for (int k = 0; k < 4; k++) {
            double ex = (k & 1) ? 1 : -1, ey = (k & 2) ? 1 : -1;
            c[k] = (vtx_tex){ndc_x(cx + ex * r), ndc_y(cy + ey * r), z, (float)(k & 1),
                             (float)(k >> 1)};
        }
        vtx_tex *v = &particles[6 * i];
        v[0] = c[0], v[1] = c[1], v[2] = c[2], v[3] = c[2], v[4] = c[1], v[5] = c[3];
    }
    /* A soft round sprite: warm color, alpha falling off from the center. */
    for (uint32_t y = 0; y < PART_TEX; y++)
        for (uint32_t x = 0; x < PART_TEX; x++) {
            double dx = (x + 0.5) / PART_TEX - 0.5, dy = (y + 0.5) / PART_TEX - 0.5;
            double a = 1.0 - 2.0 * sqrt(dx * dx + dy * dy);
            uint8_t *t = &part_texels[(y * PART_TEX + x) * 4];
            t[0] = 255;
            t[1] = (uint8_t)(160 + 80 * (a > 0 ? a : 0));
            t[2] = 64;
            t[3] = (uint8_t)(a > 0 ? 255 * a : 0);
        }
}

/* Two clockwise triangles (screen space) covering the target, uv (0,0) at
 * the top left. */
static const vtx_tex quad[6] = {
    {-1, 1, 0.5f, 0, 0}, {1, 1, 0.5f, 1, 0},  {-1, -1, 0.5f, 0, 1},
    {1, 1, 0.5f, 1, 0},  {1, -1, 0.5f, 1, 1}, {-1, -1, 0.5f, 0, 1},
};

/* ---------------------------------------------------------------------------
 * One device with everything the scenes need
 * ------------------------------------------------------------------------- */

typedef struct rig {
    kiln_device *dev;
    kiln_context *ctx;
    uint32_t threads; /* workers actually running */
    kiln_texture target, depth, staging, tex, tex_mips, tex_part, tex_bc1;
    kiln_rtv rtv;
    kiln_dsv dsv;
    /* (a/4x), (e/4x): 4x color and depth, resolved into `target`; 0 on
     * osmesa, which refuses multisampling */
    kiln_texture target_ms, depth_ms;
    kiln_rtv rtv_ms;
    kiln_dsv dsv_ms;
    kiln_srv srv, srv_mips, srv_part, srv_bc1; /* bc1: 0 where the backend refuses BC */
    kiln_buffer identity, proj, vb_small, vb_mid, vb_quad, vb_mesh, vb_part, vb_sprites;
    kiln_vertex_shader vs_color, vs_tex;
    kiln_pixel_shader ps_color, ps_tex, ps_user;
    kiln_input_layout layout_color, layout_tex;
    kiln_rasterizer_state rs;
    kiln_depth_stencil_state dss_less, dss_off, dss_test_only;
    kiln_blend_state blend_off, blend_add, blend_alpha;
    kiln_sampler sampler, sampler_tri, sampler_part, sampler_point;
    /* (f) */
    kiln_vertex_shader vs_lit;
    kiln_pixel_shader ps_lit;
    kiln_input_layout layout_lit;
    kiln_buffer vb_cube, vb_obj_colors, ib_cube, cb_object, cb_light;
    kiln_rasterizer_state rs_back;
} rig;

/* (f): what the objects example maps per draw (KILN_EFFECT_LIT's VS cb0). */
typedef struct object_constants {
    mat4 world_view_proj;
    mat4 world;
} object_constants;
static object_constants objects[N_OBJECTS];

/* The objects example's frame 0, 1080p: a 40 x 25 grid of small cubes,
 * each turned about its own axis, seen from above at an angle. */
static void make_objects(void)
{
    mat4 vp = mat4_mul(mat4_perspective(55.0f * (float)PI / 180.0f, (float)W / (float)H, 1.0f, 80.0f),
                       mat4_look_at(v3(0, 16.0f, 22.0f), v3(0, 0, -2.0f), v3(0, 1, 0)));
    for (uint32_t i = 0; i < N_OBJECTS; i++) {
        uint32_t c = i % OBJ_COLS, r = i / OBJ_COLS;
        vec3 axis = v3_normalize(v3((float)rng_range(-0.5, 0.5), 1.0f, (float)rng_range(-0.5, 0.5)));
        float x = (float)c - (OBJ_COLS - 1) * 0.5f, z = (float)r - (OBJ_ROWS - 1) * 0.5f;
        float y = 0.3f * sinf((float)c * 0.45f + (float)r * 0.3f);
        objects[i].world = mat4_mul(mat4_translate(x, y, z),
                                    mat4_mul(mat4_rotate(axis, (float)rng_range(0, 2 * PI)),
                                             mat4_scale(0.32f, 0.32f, 0.32f)));
        objects[i].world_view_proj = mat4_mul(vp, objects[i].world);
    }
}

/* What KILN_EFFECT_TEXTURE's pixel shader computes, as an application
 * would write it: kiln's fused path for the built-in effect does not apply
 * to it, so (c/ps) measures the general pixel pipeline. */
static void ps_user_texture(kiln_ps_args *a)
{
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1),
                   KILN_PS_COLOR(a, 0, 0));
}

static kiln_buffer make_buffer(kiln_device *dev, uint32_t bind, const void *data, uint32_t size)
{
    kiln_buffer b;
    kiln_buffer_desc d = {.size = size, .usage = KILN_USAGE_IMMUTABLE, .bind_flags = bind};
    kiln_subresource_data init = {data, 0};
    CHECK(kiln_create_buffer(dev, &d, &init, &b));
    return b;
}

static void rig_init_backend(rig *r, kiln_backend backend, kiln_exec_mode mode, uint32_t threads,
                             const tri_set *small,
                             const tri_set *mid, const uint8_t *texels)
{
    memset(r, 0, sizeof *r);
    kiln_device_desc dd = {.backend = backend, .exec_mode = mode, .num_threads = threads};
    CHECK(kiln_device_create(&dd, &r->dev));
    r->ctx = kiln_device_immediate_context(r->dev);
    r->threads = kiln_device_num_threads(r->dev);
    kiln_device *dev = r->dev;

    kiln_texture2d_desc td = {.width = W, .height = H, .mip_levels = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_RENDER_TARGET};
    CHECK(kiln_create_texture2d(dev, &td, NULL, &r->target));
    CHECK(kiln_create_rtv(dev, r->target, NULL, &r->rtv));
    td.usage = KILN_USAGE_STAGING;
    td.bind_flags = 0;
    td.cpu_access = KILN_CPU_ACCESS_READ;
    CHECK(kiln_create_texture2d(dev, &td, NULL, &r->staging));
    kiln_texture2d_desc dsd = {.width = W, .height = H, .mip_levels = 1,
                               .format = KILN_FORMAT_D32_FLOAT,
                               .bind_flags = KILN_BIND_DEPTH_STENCIL};
    CHECK(kiln_create_texture2d(dev, &dsd, NULL, &r->depth));
    CHECK(kiln_create_dsv(dev, r->depth, NULL, &r->dsv));
    if (backend == KILN_BACKEND_SOFT) { /* osmesa refuses 4x (BACKEND_FEATURE) */
        td = (kiln_texture2d_desc){.width = W,
                                   .height = H,
                                   .mip_levels = 1,
                                   .format = KILN_FORMAT_R8G8B8A8_UNORM,
                                   .bind_flags = KILN_BIND_RENDER_TARGET,
                                   .sample_count = 4};
        CHECK(kiln_create_texture2d(dev, &td, NULL, &r->target_ms));
        CHECK(kiln_create_rtv(dev, r->target_ms, NULL, &r->rtv_ms));
        dsd.sample_count = 4;
        CHECK(kiln_create_texture2d(dev, &dsd, NULL, &r->depth_ms));
        CHECK(kiln_create_dsv(dev, r->depth_ms, NULL, &r->dsv_ms));
    }
    kiln_texture2d_desc txd = {.width = TEX_SIZE, .height = TEX_SIZE, .mip_levels = 1,
                               .format = KILN_FORMAT_R8G8B8A8_UNORM,
                               .usage = KILN_USAGE_IMMUTABLE,
                               .bind_flags = KILN_BIND_SHADER_RESOURCE};
    kiln_subresource_data tinit = {texels, TEX_SIZE * 4};
    CHECK(kiln_create_texture2d(dev, &txd, &tinit, &r->tex));
    CHECK(kiln_create_srv(dev, r->tex, NULL, &r->srv));

    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    r->identity = make_buffer(dev, KILN_BIND_CONSTANT_BUFFER, identity, sizeof identity);
    r->proj = make_buffer(dev, KILN_BIND_CONSTANT_BUFFER, mesh_proj, sizeof mesh_proj);
    /* (e): the texture with its whole mip chain, made by kiln */
    kiln_texture2d_desc tmd = {.width = TEX_SIZE, .height = TEX_SIZE, .mip_levels = 0,
                               .format = KILN_FORMAT_R8G8B8A8_UNORM,
                               .bind_flags = KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET};
    CHECK(kiln_create_texture2d(dev, &tmd, NULL, &r->tex_mips));
    CHECK(kiln_create_srv(dev, r->tex_mips, NULL, &r->srv_mips));
    kiln_box top = {0, 0, 0, TEX_SIZE, TEX_SIZE, 1};
    CHECK(kiln_update_subresource(r->ctx, kiln_texture_resource(r->tex_mips), 0, &top, texels,
                                  TEX_SIZE * 4, 0));
    CHECK(kiln_generate_mips(r->ctx, r->srv_mips));
    kiln_texture2d_desc tpd = {.width = PART_TEX, .height = PART_TEX, .mip_levels = 1,
                               .format = KILN_FORMAT_R8G8B8A8_UNORM,
                               .usage = KILN_USAGE_IMMUTABLE,
                               .bind_flags = KILN_BIND_SHADER_RESOURCE};
    kiln_subresource_data pinit = {part_texels, PART_TEX * 4};
    CHECK(kiln_create_texture2d(dev, &tpd, &pinit, &r->tex_part));
    kiln_texture2d_desc tbd = {.width = TEX_SIZE, .height = TEX_SIZE, .mip_levels = 1,
                               .format = KILN_FORMAT_BC1_UNORM, .usage = KILN_USAGE_IMMUTABLE,
                               .bind_flags = KILN_BIND_SHADER_RESOURCE};
    kiln_subresource_data binit = {bc1_blocks, TEX_SIZE / 4 * 8};
    if (backend == KILN_BACKEND_SOFT) { /* osmesa refuses BC (BACKEND_FEATURE) */
        CHECK(kiln_create_texture2d(dev, &tbd, &binit, &r->tex_bc1));
        CHECK(kiln_create_srv(dev, r->tex_bc1, NULL, &r->srv_bc1));
    }
    CHECK(kiln_create_srv(dev, r->tex_part, NULL, &r->srv_part));
    r->vb_mesh = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, mesh,
                             (uint32_t)(sizeof(vtx_tex) * 6 * N_MESH_QUADS));
    r->vb_part = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, particles,
                             (uint32_t)(sizeof(vtx_tex) * 6 * N_PARTICLES));
    kiln_buffer_desc sbd = {.size = (uint32_t)(sizeof(vtx_tex) * 6 * SB_CAPACITY),
                            .usage = KILN_USAGE_DYNAMIC,
                            .bind_flags = KILN_BIND_VERTEX_BUFFER,
                            .cpu_access = KILN_CPU_ACCESS_WRITE};
    CHECK(kiln_create_buffer(dev, &sbd, NULL, &r->vb_sprites));
    /* (f): the objects example's buffers and states */
    {
        demo_cube_vertex m[DEMO_CUBE_VERTICES];
        uint16_t idx[DEMO_CUBE_INDICES];
        float cube[DEMO_CUBE_VERTICES][6];
        static uint8_t colors[N_OBJECTS][4];
        demo_cube_mesh(m, idx);
        for (int i = 0; i < DEMO_CUBE_VERTICES; i++)
            for (int c = 0; c < 3; c++) {
                cube[i][c] = m[i].pos[c];
                cube[i][3 + c] = m[i].normal[c];
            }
        for (uint32_t i = 0; i < N_OBJECTS; i++) {
            for (int c = 0; c < 3; c++)
                colors[i][c] = (uint8_t)(64 + (i * (37u + 61u * (uint32_t)c)) % 192u);
            colors[i][3] = 255;
        }
        const float light[12] = {0.41f, -0.82f, -0.29f, 0, 1.0f, 0.96f, 0.88f, 0,
                                 0.16f, 0.18f, 0.24f, 0};
        r->vb_cube = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, cube, sizeof cube);
        r->vb_obj_colors = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, colors, sizeof colors);
        r->ib_cube = make_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
        r->cb_light = make_buffer(dev, KILN_BIND_CONSTANT_BUFFER, light, sizeof light);
        kiln_buffer_desc cbd = {.size = sizeof(object_constants), .usage = KILN_USAGE_DYNAMIC,
                                .bind_flags = KILN_BIND_CONSTANT_BUFFER,
                                .cpu_access = KILN_CPU_ACCESS_WRITE};
        CHECK(kiln_create_buffer(dev, &cbd, NULL, &r->cb_object));
        kiln_vertex_shader_desc lvs;
        kiln_pixel_shader_desc lps;
        CHECK(kiln_effect_get(KILN_EFFECT_LIT, &lvs, &lps));
        CHECK(kiln_create_vertex_shader(dev, &lvs, &r->vs_lit));
        CHECK(kiln_create_pixel_shader(dev, &lps, &r->ps_lit));
        kiln_input_layout_desc ll = {
            .num_elements = 3,
            .elements = {{.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = 0},
                         {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = 12},
                         {.format = KILN_FORMAT_R8G8B8A8_UNORM, .slot = 1, .per_instance = 1}}};
        CHECK(kiln_create_input_layout(dev, &ll, r->vs_lit, &r->layout_lit));
        kiln_rasterizer_desc rb = {.cull = KILN_CULL_BACK, .front_ccw = 1};
        CHECK(kiln_create_rasterizer_state(dev, &rb, &r->rs_back));
    }
    r->vb_small = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, small->v,
                              (uint32_t)(sizeof(vtx_color) * 3 * small->ntris));
    r->vb_mid = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, mid->v,
                            (uint32_t)(sizeof(vtx_color) * 3 * mid->ntris));
    r->vb_quad = make_buffer(dev, KILN_BIND_VERTEX_BUFFER, quad, sizeof quad);

    kiln_vertex_shader_desc vsd;
    kiln_pixel_shader_desc psd;
    CHECK(kiln_effect_get(KILN_EFFECT_VERTEX_COLOR, &vsd, &psd));
    CHECK(kiln_create_vertex_shader(dev, &vsd, &r->vs_color));
    CHECK(kiln_create_pixel_shader(dev, &psd, &r->ps_color));
    kiln_input_layout_desc ld = {
        .num_elements = 2,
        .elements = {{.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = 0},
                     {.format = KILN_FORMAT_R8G8B8A8_UNORM, .offset = offsetof(vtx_color, rgba)}}};
    CHECK(kiln_create_input_layout(dev, &ld, r->vs_color, &r->layout_color));
    CHECK(kiln_effect_get(KILN_EFFECT_TEXTURE, &vsd, &psd));
    CHECK(kiln_create_vertex_shader(dev, &vsd, &r->vs_tex));
    CHECK(kiln_create_pixel_shader(dev, &psd, &r->ps_tex));
    psd.fn = ps_user_texture;
    psd.read_mask = 0x3u; /* it reads varying 0's u and v, as the effect does */
    psd.flags = KILN_PS_NO_Z; /* and not the depth (kiln_effect_get says so too) */
    CHECK(kiln_create_pixel_shader(dev, &psd, &r->ps_user));
    kiln_input_layout_desc lt = {
        .num_elements = 2,
        .elements = {{.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = 0},
                     {.format = KILN_FORMAT_R32G32_FLOAT, .offset = offsetof(vtx_tex, u)}}};
    CHECK(kiln_create_input_layout(dev, &lt, r->vs_tex, &r->layout_tex));

    kiln_rasterizer_desc rsd = {.cull = KILN_CULL_NONE};
    CHECK(kiln_create_rasterizer_state(dev, &rsd, &r->rs));
    kiln_depth_stencil_desc dless = {.depth_func = KILN_COMPARE_LESS};
    CHECK(kiln_create_depth_stencil_state(dev, &dless, &r->dss_less));
    kiln_depth_stencil_desc doff = {.depth_disable = 1, .depth_write_disable = 1};
    CHECK(kiln_create_depth_stencil_state(dev, &doff, &r->dss_off));
    kiln_depth_stencil_desc dtest = {.depth_func = KILN_COMPARE_LESS, .depth_write_disable = 1};
    CHECK(kiln_create_depth_stencil_state(dev, &dtest, &r->dss_test_only));
    kiln_blend_desc boff = {0};
    CHECK(kiln_create_blend_state(dev, &boff, &r->blend_off));
    kiln_blend_desc badd = {.rt = {{.enable = 1,
                                    .src = KILN_BLEND_ONE,
                                    .dst = KILN_BLEND_ONE,
                                    .op = KILN_BLEND_OP_ADD,
                                    .src_alpha = KILN_BLEND_ONE,
                                    .dst_alpha = KILN_BLEND_ONE,
                                    .op_alpha = KILN_BLEND_OP_ADD}}};
    CHECK(kiln_create_blend_state(dev, &badd, &r->blend_add));
    /* Alpha blending as applications set it; the texture is opaque, so the
     * image is (c)'s while every pixel still reads, blends and writes. */
    kiln_blend_desc balpha = {.rt = {{.enable = 1,
                                      .src = KILN_BLEND_SRC_ALPHA,
                                      .dst = KILN_BLEND_INV_SRC_ALPHA,
                                      .op = KILN_BLEND_OP_ADD,
                                      .src_alpha = KILN_BLEND_SRC_ALPHA,
                                      .dst_alpha = KILN_BLEND_INV_SRC_ALPHA,
                                      .op_alpha = KILN_BLEND_OP_ADD}}};
    CHECK(kiln_create_blend_state(dev, &balpha, &r->blend_alpha));
    kiln_sampler_desc sd = {.min_filter = KILN_FILTER_LINEAR,
                            .mag_filter = KILN_FILTER_LINEAR,
                            .mip_filter = KILN_FILTER_POINT,
                            .address_u = KILN_ADDRESS_CLAMP,
                            .address_v = KILN_ADDRESS_CLAMP};
    CHECK(kiln_create_sampler(dev, &sd, &r->sampler));
    kiln_sampler_desc tri = {.min_filter = KILN_FILTER_LINEAR,
                             .mag_filter = KILN_FILTER_LINEAR,
                             .mip_filter = KILN_FILTER_LINEAR,
                             .address_u = KILN_ADDRESS_WRAP,
                             .address_v = KILN_ADDRESS_WRAP};
    CHECK(kiln_create_sampler(dev, &tri, &r->sampler_tri));
    CHECK(kiln_create_sampler(dev, &sd, &r->sampler_part));
    kiln_sampler_desc pt = sd;
    pt.min_filter = pt.mag_filter = KILN_FILTER_POINT;
    CHECK(kiln_create_sampler(dev, &pt, &r->sampler_point));

    /* Pipeline state common to all scenes. */
    kiln_context *ctx = r->ctx;
    CHECK(kiln_om_set_render_targets(ctx, 1, &r->rtv, r->dsv));
    kiln_viewport vp = {0, 0, (float)W, (float)H, 0, 1};
    CHECK(kiln_rs_set_viewport(ctx, &vp));
    CHECK(kiln_rs_set_state(ctx, r->rs));
    CHECK(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    CHECK(kiln_vs_set_constant_buffers(ctx, 0, 1, &r->identity));
}

static void rig_init(rig *r, kiln_exec_mode mode, uint32_t threads, const tri_set *small,
                     const tri_set *mid, const uint8_t *texels)
{
    rig_init_backend(r, KILN_BACKEND_SOFT, mode, threads, small, mid, texels);
}

static void rig_fini(rig *r)
{
    CHECK(kiln_finish(r->ctx));
    /* Destroying the device releases everything it owns. */
    kiln_device_destroy(r->dev);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------
 * Scenes
 * ------------------------------------------------------------------------- */

typedef enum scene_id {
    SC_SMALL,
    SC_MID,
    SC_LAYERS,
    SC_LAYERS_PS,
    SC_LAYERS_POINT,
    SC_LAYERS_BLEND,
    SC_LAYERS_ALPHA,
    SC_DRAWS,
    SC_MESH,
    SC_PARTICLES,
    SC_OBJECTS,
    SC_LAYERS_BC1,
    SC_SMALL_MS,
    SC_MESH_MS,
    SC_SPRITES,
    SC_COUNT
} scene_id;

static const char *const scene_names[SC_COUNT] = {
    "(a) 100k small tris, 1 draw",          "(b) 10k mid tris (20-40px), 1 draw",
    "(c) 16 textured layers, blend off",    "(c/ps) as (c), user pixel shader",
    "(c/pt) as (c/ps), POINT sampler",      "(c+) 16 textured layers, blend add",
    "(c+a) 16 layers, SRC_ALPHA/INV_SRC_A", "(d) 100k draw calls, 1 tri each",
    "(e) 3k tris, persp, depth, trilinear", "(g) 50k particles, alpha, depth test",
    "(f) 1k lit cubes, 1 map+draw each",    "(c/bc1) as (c), BC1 texture",
    "(a/4x) as (a), 4x MSAA + resolve",     "(e/4x) as (e), 4x MSAA + resolve",
    "(g/sb) as (g), NO_OVERWRITE batches",
};

/* (a/4x) and (e/4x) are (a) and (e) drawn into the 4x target. */
static bool scene_ms(scene_id sc) { return sc == SC_SMALL_MS || sc == SC_MESH_MS; }
static scene_id scene_base(scene_id sc)
{
    return sc == SC_SMALL_MS ? SC_SMALL : sc == SC_MESH_MS ? SC_MESH : sc;
}

/* Binds what the scene needs (setters only: never queued, not timed). */
static void scene_bind(rig *r, scene_id sc)
{
    kiln_context *ctx = r->ctx;
    if (scene_ms(sc))
        CHECK(kiln_om_set_render_targets(ctx, 1, &r->rtv_ms, r->dsv_ms));
    else
        CHECK(kiln_om_set_render_targets(ctx, 1, &r->rtv, r->dsv));
    sc = scene_base(sc);
    CHECK(kiln_rs_set_state(ctx, sc == SC_OBJECTS ? r->rs_back : r->rs));
    if (sc == SC_OBJECTS) {
        const kiln_buffer vbs[2] = {r->vb_cube, r->vb_obj_colors};
        const uint32_t strides[2] = {24, 4}, offsets[2] = {0, 0};
        kiln_srv none = {0};
        CHECK(kiln_ia_set_input_layout(ctx, r->layout_lit));
        CHECK(kiln_ia_set_vertex_buffers(ctx, 0, 2, vbs, strides, offsets));
        CHECK(kiln_ia_set_index_buffer(ctx, r->ib_cube, KILN_INDEX_UINT16, 0));
        CHECK(kiln_vs_set_shader(ctx, r->vs_lit));
        CHECK(kiln_ps_set_shader(ctx, r->ps_lit));
        CHECK(kiln_vs_set_constant_buffers(ctx, 0, 1, &r->cb_object));
        CHECK(kiln_ps_set_constant_buffers(ctx, 0, 1, &r->cb_light));
        CHECK(kiln_ps_set_shader_resources(ctx, 0, 1, &none));
        CHECK(kiln_om_set_depth_stencil_state(ctx, r->dss_less, 0));
        CHECK(kiln_om_set_blend_state(ctx, r->blend_off, NULL));
        return;
    }
    if (sc == SC_MESH || sc == SC_PARTICLES || sc == SC_SPRITES) {
        uint32_t stride = sizeof(vtx_tex), zero = 0;
        bool mesh_sc = sc == SC_MESH;
        CHECK(kiln_ia_set_input_layout(ctx, r->layout_tex));
        CHECK(kiln_ia_set_vertex_buffers(ctx, 0, 1,
                                         mesh_sc            ? &r->vb_mesh
                                         : sc == SC_SPRITES ? &r->vb_sprites
                                                            : &r->vb_part,
                                         &stride, &zero));
        CHECK(kiln_vs_set_shader(ctx, r->vs_tex));
        CHECK(kiln_ps_set_shader(ctx, r->ps_tex));
        CHECK(kiln_vs_set_constant_buffers(ctx, 0, 1, mesh_sc ? &r->proj : &r->identity));
        CHECK(kiln_ps_set_shader_resources(ctx, 0, 1, mesh_sc ? &r->srv_mips : &r->srv_part));
        CHECK(kiln_ps_set_samplers(ctx, 0, 1, mesh_sc ? &r->sampler_tri : &r->sampler_part));
        CHECK(kiln_om_set_depth_stencil_state(ctx, mesh_sc ? r->dss_less : r->dss_test_only, 0));
        CHECK(kiln_om_set_blend_state(ctx, mesh_sc ? r->blend_off : r->blend_alpha, NULL));
        return;
    }
    CHECK(kiln_vs_set_constant_buffers(ctx, 0, 1, &r->identity));
    bool tex = sc == SC_LAYERS || sc == SC_LAYERS_PS || sc == SC_LAYERS_POINT ||
               sc == SC_LAYERS_BLEND || sc == SC_LAYERS_ALPHA || sc == SC_LAYERS_BC1;
    uint32_t zero = 0;
    if (tex) {
        uint32_t stride = sizeof(vtx_tex);
        CHECK(kiln_ia_set_input_layout(ctx, r->layout_tex));
        CHECK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &r->vb_quad, &stride, &zero));
        CHECK(kiln_vs_set_shader(ctx, r->vs_tex));
        CHECK(kiln_ps_set_shader(ctx, sc == SC_LAYERS_PS || sc == SC_LAYERS_POINT ? r->ps_user
                                                                                  : r->ps_tex));
        CHECK(kiln_ps_set_shader_resources(ctx, 0, 1, sc == SC_LAYERS_BC1 ? &r->srv_bc1 : &r->srv));
        CHECK(kiln_ps_set_samplers(ctx, 0, 1,
                                   sc == SC_LAYERS_POINT ? &r->sampler_point : &r->sampler));
        CHECK(kiln_om_set_depth_stencil_state(ctx, r->dss_off, 0));
        CHECK(kiln_om_set_blend_state(ctx,
                                      sc == SC_LAYERS_BLEND   ? r->blend_add
                                      : sc == SC_LAYERS_ALPHA ? r->blend_alpha
                                                              : r->blend_off,
                                      NULL));
    } else {
        uint32_t stride = sizeof(vtx_color);
        kiln_buffer vb = sc == SC_MID ? r->vb_mid : r->vb_small;
        kiln_srv none = {0};
        CHECK(kiln_ia_set_input_layout(ctx, r->layout_color));
        CHECK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &zero));
        CHECK(kiln_vs_set_shader(ctx, r->vs_color));
        CHECK(kiln_ps_set_shader(ctx, r->ps_color));
        CHECK(kiln_ps_set_shader_resources(ctx, 0, 1, &none));
        CHECK(kiln_om_set_depth_stencil_state(ctx, r->dss_less, 0));
        CHECK(kiln_om_set_blend_state(ctx, r->blend_off, NULL));
    }
}

/* The scene's work per frame (after the clears). */
static uint64_t scene_items(scene_id sc)
{
    switch (scene_base(sc)) {
    case SC_SMALL:
    case SC_DRAWS: return N_SMALL;
    case SC_MID: return N_MID;
    case SC_MESH: return 2 * N_MESH_QUADS;
    case SC_PARTICLES:
    case SC_SPRITES:
        return N_PARTICLES;
    case SC_OBJECTS: return N_OBJECTS;
    default: return N_LAYERS;
    }
}

/* One frame; returns ms, the ms spent issuing (before kiln_finish) and
 * the CPU time the process got per wall-clock time (~ busy threads). */
static double frame(rig *r, scene_id sc, double *issue_ms, double *cpu)
{
    kiln_context *ctx = r->ctx;
    bool ms = scene_ms(sc);
    uint64_t c0 = cpu_ns();
    uint64_t t0 = now_ns();
    CHECK(kiln_clear_rtv(ctx, ms ? r->rtv_ms : r->rtv, clear_color));
    CHECK(kiln_clear_dsv(ctx, ms ? r->dsv_ms : r->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    switch (scene_base(sc)) {
    case SC_SMALL: CHECK(kiln_draw(ctx, 3 * N_SMALL, 0)); break;
    case SC_MID: CHECK(kiln_draw(ctx, 3 * N_MID, 0)); break;
    case SC_LAYERS:
    case SC_LAYERS_PS:
    case SC_LAYERS_POINT:
    case SC_LAYERS_BLEND:
    case SC_LAYERS_ALPHA:
    case SC_LAYERS_BC1:
        for (uint32_t l = 0; l < N_LAYERS; l++)
            CHECK(kiln_draw(ctx, 6, 0));
        break;
    case SC_DRAWS:
        for (uint32_t i = 0; i < N_SMALL; i++)
            CHECK(kiln_draw(ctx, 3, 3 * i));
        break;
    case SC_MESH: CHECK(kiln_draw(ctx, 6 * N_MESH_QUADS, 0)); break;
    case SC_PARTICLES: CHECK(kiln_draw(ctx, 6 * N_PARTICLES, 0)); break;
    case SC_SPRITES: /* appended batch by batch, each drawn after its Unmap */
        for (uint32_t i = 0, at = 0; i < N_PARTICLES; i += SB_BATCH) {
            uint32_t n = N_PARTICLES - i < SB_BATCH ? N_PARTICLES - i : SB_BATCH;
            if (at + n > SB_CAPACITY)
                at = 0;
            kiln_mapped_subresource m;
            CHECK(kiln_map(ctx, kiln_buffer_resource(r->vb_sprites), 0,
                           at ? KILN_MAP_WRITE_NO_OVERWRITE : KILN_MAP_WRITE_DISCARD, 0, &m));
            memcpy((vtx_tex *)m.data + 6 * (size_t)at, particles + 6 * (size_t)i,
                   sizeof(vtx_tex) * 6 * n);
            CHECK(kiln_unmap(ctx, kiln_buffer_resource(r->vb_sprites), 0));
            CHECK(kiln_draw(ctx, 6 * n, 6 * at));
            at += n;
        }
        break;
    case SC_OBJECTS: /* as the objects example: per-draw constants, WRITE_DISCARD */
        for (uint32_t i = 0; i < N_OBJECTS; i++) {
            kiln_mapped_subresource m;
            CHECK(kiln_map(ctx, kiln_buffer_resource(r->cb_object), 0, KILN_MAP_WRITE_DISCARD, 0,
                           &m));
            memcpy(m.data, &objects[i], sizeof objects[i]);
            CHECK(kiln_unmap(ctx, kiln_buffer_resource(r->cb_object), 0));
            CHECK(kiln_draw_indexed_instanced(ctx, DEMO_CUBE_INDICES, 1, 0, 0, i));
        }
        break;
    default: break;
    }
    /* A 4x frame ends with its resolve, as an application's would. */
    if (ms)
        CHECK(kiln_resolve_subresource(ctx, kiln_texture_resource(r->target), 0,
                                       kiln_texture_resource(r->target_ms), 0,
                                       KILN_FORMAT_R8G8B8A8_UNORM));
    uint64_t t1 = now_ns();
    CHECK(kiln_finish(ctx));
    uint64_t t2 = now_ns();
    uint64_t c2 = cpu_ns();
    if (issue_ms)
        *issue_ms = (double)(t1 - t0) / 1e6;
    if (cpu)
        *cpu = (double)(c2 - c0) / (double)(t2 - t0);
    return (double)(t2 - t0) / 1e6;
}

/* The target, tightly packed (W * H * 4 bytes), through a STAGING copy. */
static void readback(rig *r, uint8_t *img)
{
    CHECK(kiln_copy_resource(r->ctx, kiln_texture_resource(r->staging),
                             kiln_texture_resource(r->target)));
    kiln_mapped_subresource m;
    CHECK(kiln_map(r->ctx, kiln_texture_resource(r->staging), 0, KILN_MAP_READ, 0, &m));
    for (uint32_t y = 0; y < H; y++)
        memcpy(img + (size_t)y * W * 4, (const uint8_t *)m.data + (size_t)y * m.row_pitch,
               (size_t)W * 4);
    CHECK(kiln_unmap(r->ctx, kiln_texture_resource(r->staging), 0));
}

static const uint8_t *pixel(const uint8_t *img, uint32_t x, uint32_t y)
{
    return img + ((size_t)y * W + x) * 4;
}

/* ---------------------------------------------------------------------------
 * Sanity checks
 * ------------------------------------------------------------------------- */

/* Probes exact; covered share within 20% of the prediction
 * 1 - exp(-area / screen) for randomly placed triangles. The share is the
 * mean alpha / 255: every triangle writes alpha 255 over the clear's 0, so
 * at one sample it is the share of covered pixels, and in a resolved 4x
 * image that of covered samples (a pixel with k of its 4 samples covered
 * resolves to alpha k / 4). A probe's center pixel has all four samples
 * inside it (they lie within 0.4 px of the center, the probe's inscribed
 * circle has radius 1.5), so it reads exactly its color at 4x too. */
static bool check_tris(const char *name, const tri_set *t, const uint8_t *img, double *covered)
{
    bool ok = true;
    for (uint32_t k = 0; k < N_PROBES; k++) {
        const probe *p = &t->probes[k];
        const uint8_t *px = pixel(img, p->x, p->y);
        if (memcmp(px, p->rgba, 4)) {
            check_failed(name, "probe %u at (%u,%u) is %u,%u,%u,%u, want %u,%u,%u,%u", k, p->x, p->y,
                         px[0], px[1], px[2], px[3], p->rgba[0], p->rgba[1], p->rgba[2],
                         p->rgba[3]);
            ok = false;
        }
    }
    uint64_t n = 0;
    for (size_t i = 0; i < (size_t)W * H; i++)
        n += img[i * 4 + 3];
    double share = (double)n / 255.0 / ((double)W * H);
    double want = 1.0 - exp(-t->area / ((double)W * H));
    *covered = share;
    if (share < 0.8 * want || share > 1.2 * want) {
        check_failed(name, "%.1f%% of the pixels covered, the triangles' area predicts %.1f%%",
                     100 * share, 100 * want);
        ok = false;
    }
    return ok;
}

/* Center pixel of each texture cell: the texel (blending off), or the
 * clear color plus `layers` x the texel (additive; saturated). */
static bool check_layers(const char *name, const uint8_t *img, uint32_t layers)
{
    uint32_t base[4] = {0, 0, 0, 0};
    if (layers > 1)
        for (int c = 0; c < 4; c++)
            base[c] = (uint32_t)(clear_color[c] * 255.0f + 0.5f);
    uint32_t bad = 0;
    for (uint32_t cj = 0; cj < TEX_SIZE / TEX_CELL; cj++) {
        for (uint32_t ci = 0; ci < TEX_SIZE / TEX_CELL; ci++) {
            uint32_t x = (uint32_t)((ci * TEX_CELL + TEX_CELL / 2) * (uint64_t)W / TEX_SIZE);
            uint32_t y = (uint32_t)((cj * TEX_CELL + TEX_CELL / 2) * (uint64_t)H / TEX_SIZE);
            uint8_t want[4];
            cell_color(ci, cj, want);
            for (int c = 0; c < 4; c++)
                want[c] = (uint8_t)(base[c] + want[c] * layers > 255 ? 255
                                                                    : base[c] + want[c] * layers);
            const uint8_t *px = pixel(img, x, y);
            if (memcmp(px, want, 4) && bad++ < 3)
                check_failed(name, "pixel (%u,%u) is %u,%u,%u,%u, want %u,%u,%u,%u (cell %u,%u)", x,
                             y, px[0], px[1], px[2], px[3], want[0], want[1], want[2], want[3], ci,
                             cj);
        }
    }
    if (bad > 3)
        check_failed(name, "... %u cell centers wrong in all", bad);
    return bad == 0;
}

/* (c/bc1): the center pixel of each cell within `tol` of its color. */
static bool check_bc1(const char *name, const uint8_t *img, int tol)
{
    uint32_t bad = 0;
    for (uint32_t cj = 0; cj < TEX_SIZE / TEX_CELL; cj++)
        for (uint32_t ci = 0; ci < TEX_SIZE / TEX_CELL; ci++) {
            uint32_t x = (uint32_t)((ci * TEX_CELL + TEX_CELL / 2) * (uint64_t)W / TEX_SIZE);
            uint32_t y = (uint32_t)((cj * TEX_CELL + TEX_CELL / 2) * (uint64_t)H / TEX_SIZE);
            int want[4];
            bc1_cell_rgba(ci, cj, want);
            const uint8_t *px = pixel(img, x, y);
            int off = 0;
            for (int c = 0; c < 4; c++)
                off |= abs(px[c] - want[c]) > tol;
            if (off && bad++ < 3)
                check_failed(name, "pixel (%u,%u) is %u,%u,%u,%u, want %d,%d,%d,%d (cell %u,%u)", x, y,
                             px[0], px[1], px[2], px[3], want[0], want[1], want[2], want[3], ci, cj);
        }
    if (bad > 3)
        check_failed(name, "... %u cell centers wrong in all", bad);
    return bad == 0;
}

/* (a/4x), (e/4x): enough partly covered edge pixels in the resolved image,
 * alpha strictly between the clear's 0 and the geometry's 255, which only
 * a resolve of samples that differ produces: an image rendered with one
 * sample a pixel, or a resolve that took one sample, has none. How many:
 * (a/4x) at least 2 a triangle times the uncovered share exp(-area /
 * screen) (an edge pixel must show the clear color in some sample; about
 * 6.4 were measured at 1920x1080, 24% of the target), (e/4x) at least
 * (W + H) / 2, the mesh's outline against the clear color growing with
 * the target's side (about 1.9 (W + H) measured, 0.27% at 1080p). */
static bool check_edges(const char *name, scene_id sc, const tri_set *small, const uint8_t *img,
                        double *share_out)
{
    double screen = (double)W * H;
    double want =
        sc == SC_SMALL_MS ? 2.0 * small->ntris * exp(-small->area / screen) : 0.5 * ((double)W + H);
    uint64_t n = 0;
    for (size_t i = 0; i < (size_t)W * H; i++)
        n += img[i * 4 + 3] > 0 && img[i * 4 + 3] < 255;
    if (share_out)
        *share_out = (double)n / screen;
    if ((double)n < want) {
        check_failed(name, "%llu partly covered edge pixels (want >= %.0f): not a 4x resolve",
                     (unsigned long long)n, want);
        return false;
    }
    return true;
}

/* (e) and (g), whose exact pixels only a second renderer could give: the
 * share of pixels the scene changed from the clear color, and the number
 * of distinct colors, must reach what the geometry surely produces (a
 * blank, flat or half-drawn image fails). */
static bool check_cover(const char *name, const uint8_t *img, double min_share,
                        uint32_t min_colors, double *share_out)
{
    uint8_t clear[4];
    for (int c = 0; c < 4; c++)
        clear[c] = (uint8_t)(clear_color[c] * 255.0f + 0.5f);
    uint64_t changed = 0;
    static uint8_t seen[1u << 21]; /* one bit per 24-bit RGB color */
    memset(seen, 0, sizeof seen);
    uint32_t colors = 0;
    for (size_t i = 0; i < (size_t)W * H; i++) {
        const uint8_t *px = img + 4 * i;
        if (memcmp(px, clear, 3))
            changed++;
        uint32_t key = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
        if (!(seen[key >> 3] >> (key & 7) & 1)) {
            seen[key >> 3] |= (uint8_t)(1u << (key & 7));
            colors++;
        }
    }
    double share = (double)changed / ((double)W * H);
    if (share_out)
        *share_out = share;
    bool ok = share >= min_share && colors >= min_colors;
    if (!ok)
        check_failed(name, "%.1f%% of the pixels drawn (want >= %.0f%%), %u colors (want >= %u)",
                     100 * share, 100 * min_share, colors, min_colors);
    return ok;
}

/* ---------------------------------------------------------------------------
 * Measurements
 * ------------------------------------------------------------------------- */

typedef struct config {
    int frames, warmup;
    uint32_t threads;
    bool scene[SC_COUNT], scaling;
    bool soft_only;
} config;

typedef struct result {
    summary ms, issue, cpu;
    double rate;      /* in `unit` */
    const char *unit;
    const char *target;
    int meets;        /* 1 yes, 0 no, -1 no target */
    bool ok;          /* sanity check */
} result;

static void run_frames(rig *r, scene_id sc, const config *c, double *ms, double *issue,
                       double *cpu)
{
    scene_bind(r, sc);
    for (int f = 0; f < c->warmup; f++)
        frame(r, sc, NULL, NULL);
    for (int f = 0; f < c->frames; f++)
        ms[f] = frame(r, sc, &issue[f], &cpu[f]);
}

static void header(void)
{
    printf("\n%-36s %3s %7s %9s %9s %9s %9s %4s %10s %-8s %-7s %-5s %s\n", "scene", "thr",
           "n/frame", "median", "min", "max", "issue", "cpu", "rate", "unit", "target", "met",
           "check");
    printf("%-36s %3s %7s %9s %9s %9s %9s %4s %10s %-8s %-7s %-5s %s\n", "", "", "", "ms", "ms",
           "ms", "ms", "", "(median)", "", "", "", "");
}

static void row(const char *name, uint32_t threads, uint64_t n, const result *res)
{
    printf("%-36s %3u %7llu %9.2f %9.2f %9.2f %9.2f %4.2f %10.2f %-8s %-7s %-5s %s\n", name,
           threads, (unsigned long long)n, res->ms.median, res->ms.min, res->ms.max,
           res->issue.median, res->cpu.median, res->rate, res->unit, res->target,
           res->meets < 0 ? "-" : res->meets ? "yes" : "NO", res->ok ? "ok" : "FAILED");
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    errno = 0;
    if (s[0] < '0' || s[0] > '9')
        return false;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (uint32_t)v;
    return true;
}

static void silent_log(kiln_log_level l, kiln_log_id id, const char *m, void *u)
{
    (void)l, (void)id, (void)m, (void)u;
}

static int usage(FILE *f)
{
    fprintf(f, "usage: bench_raster [--quick] [--threads N] [--size WxH] [--frames N] "
               "[--scenes LIST]\n"
               "  --threads N    workers of the main device (0: kiln's default)\n"
               "  --size WxH     target size (64..8192 each; default 1920x1080)\n"
               "  --frames N     measured frames per scene (default 10; --quick: 3)\n"
               "  --scenes LIST  comma-separated subset of "
               "a,b,c,c/ps,c/pt,c+,c+a,d,e,f,g,g/sb,c/bc1,a/4x,e/4x,scaling (default: all)\n"
               "  --soft-only    skip the llvmpipe comparison (for profiling kiln alone)\n");
    return f == stdout ? 0 : 2;
}

static bool parse_scenes(const char *list, config *c)
{
    static const char *const keys[SC_COUNT] = {"a", "b", "c", "c/ps",  "c/pt", "c+",   "c+a", "d",
                                               "e", "g", "f", "c/bc1", "a/4x", "e/4x", "g/sb"};
    memset(c->scene, 0, sizeof c->scene);
    c->scaling = false;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        bool found = false;
        for (int i = 0; i < SC_COUNT; i++)
            if (!strcmp(tok, keys[i]))
                c->scene[i] = found = true;
        if (!strcmp(tok, "scaling"))
            c->scaling = found = true;
        if (!found)
            return false;
    }
    return true;
}

static void scaling(const config *cp, const tri_set *small, const tri_set *mid,
                    const uint8_t *texels, uint8_t *img, uint8_t *img_1, size_t img_size);
static void llvmpipe(const config *cp, const tri_set *small, const tri_set *mid, const uint8_t *texels,
                     uint8_t *img);

int main(int argc, char **argv)
{
    config c = {.frames = 10, .warmup = 2, .threads = 0, .scaling = true};
    for (int i = 0; i < SC_COUNT; i++)
        c.scene[i] = true;
    int frames_set = 0;
    for (int i = 1; i < argc; i++) {
        uint32_t v;
        if (!strcmp(argv[i], "--quick")) {
            if (!frames_set)
                c.frames = 3;
            c.warmup = 1;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if (!parse_u32(argv[++i], 0, 256, &c.threads)) {
                fprintf(stderr, "bench_raster: --threads wants 0..256, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--frames") && i + 1 < argc) {
            if (!parse_u32(argv[++i], 1, MAX_FRAMES, &v)) {
                fprintf(stderr, "bench_raster: --frames wants 1..%d, not '%s'\n", MAX_FRAMES,
                        argv[i]);
                return 2;
            }
            c.frames = (int)v;
            frames_set = 1;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            char buf[32], *x;
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            x = strchr(buf, 'x');
            if (x)
                *x = 0;
            if (!x || !parse_u32(buf, 64, 8192, &W) || !parse_u32(x + 1, 64, 8192, &H)) {
                fprintf(stderr, "bench_raster: --size wants WxH with 64..8192 each, not '%s'\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--scenes") && i + 1 < argc) {
            if (!parse_scenes(argv[++i], &c)) {
                fprintf(stderr,
                        "bench_raster: --scenes wants a list of "
                        "a,b,c,c/ps,c/pt,c+,c+a,d,e,f,g,g/sb,c/bc1,a/4x,e/4x,scaling, "
                        "not '%s'\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--soft-only")) {
            c.soft_only = true;
        } else if (!strcmp(argv[i], "--help")) {
            return usage(stdout);
        } else {
            fprintf(stderr, "bench_raster: unknown argument '%s'\n", argv[i]);
            return usage(stderr);
        }
    }

    /* The scenes' data, from a fixed seed. */
    rng_state = 0x6b696c6e; /* "kiln" */
    tri_set small, mid;
    make_tris(&small, N_SMALL, 1.5, 2.5);
    make_tris(&mid, N_MID, 20.0 / sqrt(3.0), 40.0 / sqrt(3.0));
    make_extra_scenes();
    make_objects();
    uint8_t *texels = make_texture_data();
    bc1_blocks = make_bc1_data();
    size_t img_size = (size_t)W * H * 4;
    uint8_t *img = xmalloc(img_size), *img_a = xmalloc(img_size), *img_1 = xmalloc(img_size);
    uint8_t *img_c = xmalloc(img_size), *img_g = xmalloc(img_size);

    rig main_rig;
    rig_init(&main_rig, KILN_EXEC_ASYNC, c.threads, &small, &mid, texels);
    char cpu_name[192];
    printf("bench_raster: %ux%u RGBA8 + D32_FLOAT, culling off; device with %u worker threads "
           "(requested %u), SIMD %s (CPU: %s); %d frames after %d warm-up, median shown%s\n",
           W, H, main_rig.threads, c.threads, kiln_effect_simd_level(),
           bench_cpu_model(cpu_name, sizeof cpu_name), c.frames, c.warmup,
           c.frames < 10 ? " (few frames)" : "");
    printf("frame = clear color + clear depth + the draws + kiln_finish (no readback), all "
           "timed; 'issue' = the part before kiln_finish; 'cpu' = process CPU time / wall time "
           "(below the thread count: workers idle or starved by other load)\n");
    printf("(a),(b),(d): vertex color, depth LESS + write, mean triangle area (a)/(d) %.1f px, "
           "(b) %.1f px\n",
           small.area / small.ntris, mid.area / mid.ntris);
    printf("(c),(c+): 512x512 RGBA8 bilinear, magnified to the target, depth test off; "
           "(c) blending off (built-in effect), (c/ps) the same through a user pixel shader, "
           "(c+) blending ONE + ONE\n");

    double ms[MAX_FRAMES], issue[MAX_FRAMES], cpu[MAX_FRAMES];
    double load0 = loadavg();
    result res[SC_COUNT];
    double covered[SC_COUNT] = {0}, edges[SC_COUNT] = {0}; /* edges: 4x scenes */
    double pixels = (double)W * H;
    if (c.scene[SC_DRAWS] && !c.scene[SC_SMALL]) {
        /* (d) is checked against (a)'s image: render one, untimed. */
        scene_bind(&main_rig, SC_SMALL);
        frame(&main_rig, SC_SMALL, NULL, NULL);
        readback(&main_rig, img_a);
    }
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (!c.scene[sc])
            continue;
        run_frames(&main_rig, (scene_id)sc, &c, ms, issue, cpu);
        result *r = &res[sc];
        r->ms = summarize(ms, c.frames);
        r->issue = summarize(issue, c.frames);
        r->cpu = summarize(cpu, c.frames);
        double sec = r->ms.median / 1e3;
        r->meets = -1;
        r->target = "-";
        readback(&main_rig, img);
        switch ((scene_id)sc) {
        case SC_SMALL:
            r->rate = N_SMALL / sec / 1e6;
            r->unit = "Mtri/s";
            r->target = ">= 5";
            r->meets = r->rate >= TARGET_A_MTRIS;
            r->ok = check_tris(scene_names[sc], &small, img, &covered[sc]);
            memcpy(img_a, img, img_size);
            break;
        case SC_MID:
            r->rate = N_MID / sec / 1e6;
            r->unit = "Mtri/s";
            r->ok = check_tris(scene_names[sc], &mid, img, &covered[sc]);
            break;
        case SC_LAYERS:
        case SC_LAYERS_PS:
        case SC_LAYERS_POINT:
        case SC_LAYERS_BLEND:
        case SC_LAYERS_ALPHA:
            r->rate = N_LAYERS * pixels / sec / 1e6;
            r->unit = "Mpix/s";
            if (sc == SC_LAYERS) {
                r->target = ">= 500";
                r->meets = r->rate >= TARGET_C_MPIX;
            }
            r->ok = check_layers(scene_names[sc], img, sc == SC_LAYERS_BLEND ? N_LAYERS : 1);
            if (sc == SC_LAYERS)
                memcpy(img_c, img, img_size);
            if ((sc == SC_LAYERS_PS || sc == SC_LAYERS_ALPHA) && c.scene[SC_LAYERS] &&
                memcmp(img, img_c, img_size)) {
                check_failed(scene_names[sc], "the image differs from (c)'s");
                r->ok = false;
            }
            break;
        case SC_MESH:
            r->rate = 2 * N_MESH_QUADS / sec / 1e6;
            r->unit = "Mtri/s";
            r->ok = check_cover(scene_names[sc], img, 0.5, 200, &covered[sc]);
            break;
        case SC_PARTICLES:
        case SC_SPRITES:
            r->rate = N_PARTICLES / sec / 1e6;
            r->unit = "Mquad/s";
            r->ok = check_cover(scene_names[sc], img, 0.2, 50, &covered[sc]);
            if (sc == SC_PARTICLES)
                memcpy(img_g, img, img_size);
            if (sc == SC_SPRITES && c.scene[SC_PARTICLES] && memcmp(img, img_g, img_size)) {
                check_failed(scene_names[sc], "the image differs from (g)'s");
                r->ok = false;
            }
            break;
        case SC_LAYERS_BC1:
            r->rate = N_LAYERS * pixels / sec / 1e6;
            r->unit = "Mpix/s";
            r->ok = check_bc1(scene_names[sc], img, 0);
            break;
        case SC_SMALL_MS:
            r->rate = N_SMALL / sec / 1e6;
            r->unit = "Mtri/s";
            r->ok = check_tris(scene_names[sc], &small, img, &covered[sc]);
            r->ok = check_edges(scene_names[sc], SC_SMALL_MS, &small, img, &edges[sc]) && r->ok;
            break;
        case SC_MESH_MS:
            r->rate = 2 * N_MESH_QUADS / sec / 1e6;
            r->unit = "Mtri/s";
            r->ok = check_cover(scene_names[sc], img, 0.5, 200, &covered[sc]);
            r->ok = check_edges(scene_names[sc], SC_MESH_MS, &small, img, &edges[sc]) && r->ok;
            break;
        case SC_OBJECTS:
            r->rate = N_OBJECTS / sec / 1e3;
            r->unit = "Kobj/s";
            r->ok = check_cover(scene_names[sc], img, 0.1, 500, &covered[sc]);
            break;
        case SC_DRAWS:
            r->rate = N_SMALL / sec / 1e6;
            r->unit = "Mdraw/s";
            r->ok = check_tris(scene_names[sc], &small, img, &covered[sc]);
            if (memcmp(img, img_a, img_size)) {
                check_failed(scene_names[sc], "the image differs from (a)'s (same triangles, "
                                              "one draw each)");
                r->ok = false;
            }
            break;
        default: break;
        }
    }
    header();
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (!c.scene[sc])
            continue;
        row(scene_names[sc], main_rig.threads, scene_items((scene_id)sc), &res[sc]);
        scene_id base = scene_base((scene_id)sc);
        if (scene_ms((scene_id)sc) && c.scene[base]) { /* the MSAA cost */
            char name[64];
            snprintf(name, sizeof name, "  4x frame / %.3s frame (medians)", scene_names[base]);
            printf("%-36s %3s %7s %9s %9s %9s %9s %4s %10.2f %-8s\n", name, "", "", "", "", "", "",
                   "", res[sc].ms.median / res[base].ms.median, "x");
        }
        if (sc == SC_DRAWS) {
            printf("%-36s %3s %7s %9s %9s %9s %9s %4s %10.2f %-8s\n", "  (d) as triangles", "",
                   "", "", "", "", "", "", res[sc].rate, "Mtri/s");
            /* The producer's share: what kiln_draw costs the application's
             * thread (the issue column spread over the draw calls). */
            printf("%-36s %3s %7s %9.0f %9.0f %9.0f %9s %4s %10s %-8s\n",
                   "  (d) producer cost per kiln_draw", "", "", res[sc].issue.median * 1e6 / N_SMALL,
                   res[sc].issue.min * 1e6 / N_SMALL, res[sc].issue.max * 1e6 / N_SMALL, "", "", "",
                   "ns/draw");
        }
    }
    printf("pixels covered (share of the target):");
    for (int sc = 0; sc < SC_COUNT; sc++)
        if (c.scene[sc] && (sc == SC_SMALL || sc == SC_MID || sc == SC_DRAWS || sc == SC_MESH ||
                            sc == SC_PARTICLES || sc == SC_SPRITES || sc == SC_OBJECTS ||
                            scene_ms((scene_id)sc))) {
            printf(" %.*s %.1f%%", (int)(strchr(scene_names[sc], ')') - scene_names[sc] + 1),
                   scene_names[sc], 100 * covered[sc]);
            if (scene_ms((scene_id)sc))
                printf(" (partly covered edge pixels %.2f%%)", 100 * edges[sc]);
        }
    printf("; (c) shades %.1f Mpixels per frame (16 x %ux%u)\n", N_LAYERS * pixels / 1e6, W, H);
    if (load0 >= 0)
        printf("machine load average (1 min) before / after these scenes: %.2f / %.2f "
               "(%u CPUs' worth of workers here; other load makes the figures noisy)\n",
               load0, loadavg(), main_rig.threads);
    rig_fini(&main_rig);
    if (c.scaling)
        scaling(&c, &small, &mid, texels, img, img_1, img_size);
    else
        printf("\nthread scaling on (c): not run (--scenes)\n");
    if (!c.soft_only)
        llvmpipe(&c, &small, &mid, texels, img);

    if (failures)
        printf("\n%d sanity check(s) FAILED: the figures above are not valid\n", failures);
    else
        printf("\nall sanity checks passed\n");
    free(small.v);
    free(mid.v);
    free(texels);
    free(bc1_blocks);
    free(img);
    free(img_a);
    free(img_c);
    free(img_g);
    free(img_1);
    return failures ? 1 : 0;
}

/* The first two CPUs the process may run on, for 1-thread frames pinned
 * to each (Linux; elsewhere, or with one CPU, n is 0 and they are not
 * run). */
typedef struct {
    int n, id[2];
#if defined(__linux__)
    cpu_set_t all;
#endif
} cpu_pins;

static void pins_init(cpu_pins *p)
{
    p->n = 0;
#if defined(__linux__)
    if (sched_getaffinity(0, sizeof p->all, &p->all))
        return;
    for (int i = 0; i < CPU_SETSIZE && p->n < 2; i++)
        if (CPU_ISSET(i, &p->all))
            p->id[p->n++] = i;
    if (p->n < 2)
        p->n = 0;
#endif
}

/* The calling thread on CPU p->id[k] alone, or (k < 0) back on all of
 * them; false when the system refuses. */
static bool pin(const cpu_pins *p, int k)
{
#if defined(__linux__)
    cpu_set_t one;
    CPU_ZERO(&one);
    if (k >= 0)
        CPU_SET(p->id[k], &one);
    return sched_setaffinity(0, sizeof(cpu_set_t), k >= 0 ? &one : &p->all) == 0;
#else
    (void)p;
    (void)k;
    return false;
#endif
}

/* One timed row of the scaling section: its frames' median, min and max,
 * the CPU column (cpu < 0: left blank) and the rate. */
static void scaling_row(const char *name, unsigned thr, double items, summary s, double cpu,
                        bool layers)
{
    char c[8] = "";
    if (cpu >= 0)
        snprintf(c, sizeof c, "%4.2f", cpu);
    printf("%-36s %3u %7u %9.2f %9.2f %9.2f %9s %4s %10.2f %-8s\n", name, thr, (unsigned)items,
           s.median, s.min, s.max, "", c,
           (layers ? items * (double)W * H : items) / (s.median / 1e3) / 1e6,
           layers ? "Mpix/s" : "Mtri/s");
}

/* Thread scaling on (c), (c/ps) and (e): 1 executing thread vs 2, frames
 * interleaved so drift hits both. The target (>= 1.7 then 1.8) is on (c);
 * issue 11 asks the same of (c/ps) and (e). */
static void scaling(const config *cp, const tri_set *small, const tri_set *mid,
                    const uint8_t *texels, uint8_t *img, uint8_t *img_1, size_t img_size)
{
    config c = *cp;
    rig one, two;
    /* One executing thread: SERIAL (the calling thread runs everything).
     * Two: ASYNC with one worker, and the application's thread helping
     * while it waits in kiln_finish (docs/queue.md "Worker placement"):
     * a device with one worker no longer means one thread. */
    rig_init(&one, KILN_EXEC_SERIAL, 0, small, mid, texels);
    rig_init(&two, KILN_EXEC_ASYNC, 1, small, mid, texels);
    cpu_pins pins;
    pins_init(&pins);
    printf("\nthread scaling (two more devices, frames interleaved): 1 thread = SERIAL, "
           "2 threads = 1 worker + the application thread helping in kiln_finish\n");
    printf("%-36s %3s %7s %9s %9s %9s %9s %4s %10s %-8s\n", "", "thr", "", "median", "min", "max",
           "", "cpu", "rate", "unit");
    static const scene_id scenes[3] = {SC_LAYERS, SC_LAYERS_PS, SC_MESH};
    for (int k = 0; k < 3; k++) {
        scene_id sc = scenes[k];
        scene_bind(&one, sc);
        scene_bind(&two, sc);
        for (int f = 0; f < c.warmup; f++) {
            frame(&one, sc, NULL, NULL);
            frame(&two, sc, NULL, NULL);
        }
        double ms1[MAX_FRAMES], ms2[MAX_FRAMES], ratio[MAX_FRAMES], cpu1[MAX_FRAMES],
            cpu2[MAX_FRAMES], on[2][MAX_FRAMES], use[MAX_FRAMES];
        int pinned = pins.n;
        for (int f = 0; f < c.frames; f++) {
            ms1[f] = frame(&one, sc, NULL, &cpu1[f]);
            /* the same SERIAL device on each CPU alone, then back on all
             * of them for the 2-thread frame (its worker was never pinned) */
            for (int i = 0; i < pinned; i++) {
                if (!pin(&pins, i)) {
                    pinned = 0;
                    break;
                }
                on[i][f] = frame(&one, sc, NULL, NULL);
            }
            if (pins.n && !pin(&pins, -1)) {
                /* once: no more pinning in this run */
                check_failed("scaling", "could not give the thread back its CPUs");
                pins.n = 0;
                pinned = 0;
            }
            ms2[f] = frame(&two, sc, NULL, &cpu2[f]);
            ratio[f] = ms1[f] / ms2[f];
            /* what both CPUs at their pinned rates would take, over what
             * two threads took */
            if (pinned)
                use[f] = 1.0 / (1.0 / on[0][f] + 1.0 / on[1][f]) / ms2[f];
        }
        summary s1 = summarize(ms1, c.frames), s2 = summarize(ms2, c.frames);
        double u1 = summarize(cpu1, c.frames).median, u2 = summarize(cpu2, c.frames).median;
        summary sr = summarize(ratio, c.frames);
        readback(&one, img_1);
        readback(&two, img);
        bool scale_ok = sc == SC_MESH ? check_cover("scaling (e), 1 thread", img_1, 0.5, 200, NULL)
                                      : check_layers("scaling, 1 thread", img_1, 1);
        if (memcmp(img, img_1, img_size)) {
            check_failed("scaling", "the 2-thread image of %s differs from the 1-thread one",
                         scene_names[sc]);
            scale_ok = false;
        }
        const char *tag = sc == SC_LAYERS ? "(c)" : sc == SC_LAYERS_PS ? "(c/ps)" : "(e)";
        double items = (double)scene_items(sc);
        bool layers = sc != SC_MESH;
        char name[64];
        snprintf(name, sizeof name, "%s 1 thread (SERIAL)", tag);
        scaling_row(name, 1, items, s1, u1, layers);
        snprintf(name, sizeof name, "%s 2 threads (1 worker + app)", tag);
        scaling_row(name, 2, items, s2, u2, layers);
        snprintf(name, sizeof name, "%s scaling 1->2 threads", tag);
        printf("%-36s %3s %7s %9.2f %9.2f %9.2f %9s %4s %10s %-8s %-7s %-5s %s\n", name, "", "",
               sr.median, sr.min, sr.max, "", "", "", "x", sc == SC_LAYERS ? ">= 1.7" : ">= 1.8",
               sr.median >= (sc == SC_LAYERS ? TARGET_SCALING : 1.8) ? "yes" : "NO",
               scale_ok ? "ok" : "FAILED");
        if (!pinned)
            continue;
        for (int i = 0; i < 2; i++) {
            snprintf(name, sizeof name, "%s 1 thread on cpu %d alone", tag, pins.id[i]);
            scaling_row(name, 1, items, summarize(on[i], c.frames), -1.0, layers);
        }
        summary su = summarize(use, c.frames);
        snprintf(name, sizeof name, "%s 2 threads vs both CPUs' rate", tag);
        printf("%-36s %3s %7s %9.2f %9.2f %9.2f %9s %4s %10s %-8s\n", name, "", "", su.median,
               su.min, su.max, "", "", "", "of 1");
    }
    if (loadavg() >= 0)
        printf("machine load average (1 min) after the scaling runs: %.2f\n", loadavg());
    rig_fini(&one);
    rig_fini(&two);
}

/* ---------------------------------------------------------------------------
 * soft, osmesa and raw GL
 * ------------------------------------------------------------------------- */

/* (e)'s texture as kiln_generate_mips made it on `r`: every level read
 * back through a STAGING copy with the same chain, for the anchor to
 * upload the same bytes. Returns one allocation holding the levels one
 * after the other, tightly packed, level k at levels[k]; *count levels. */
#define MAX_MIPS 14u
static uint8_t *read_mips(rig *r, const uint8_t *levels[MAX_MIPS], uint32_t *count)
{
    kiln_texture2d_desc d;
    CHECK(kiln_texture_get_desc(r->dev, r->tex_mips, &d));
    d.usage = KILN_USAGE_STAGING;
    d.bind_flags = 0;
    d.cpu_access = KILN_CPU_ACCESS_READ;
    kiln_texture st;
    CHECK(kiln_create_texture2d(r->dev, &d, NULL, &st));
    kiln_resource src = kiln_texture_resource(r->tex_mips), dst = kiln_texture_resource(st);
    CHECK(kiln_copy_resource(r->ctx, dst, src));
    size_t total = 0;
    for (uint32_t k = 0; k < d.mip_levels && k < MAX_MIPS; k++) {
        size_t n = TEX_SIZE >> k ? TEX_SIZE >> k : 1;
        total += n * n * 4;
    }
    uint8_t *all = xmalloc(total), *at = all;
    *count = d.mip_levels < MAX_MIPS ? d.mip_levels : MAX_MIPS;
    for (uint32_t k = 0; k < *count; k++) {
        uint32_t n = TEX_SIZE >> k ? TEX_SIZE >> k : 1;
        kiln_mapped_subresource m;
        CHECK(kiln_map(r->ctx, kiln_texture_resource(st), k, KILN_MAP_READ, 0, &m));
        for (uint32_t y = 0; y < n; y++)
            memcpy(at + (size_t)y * n * 4, (const uint8_t *)m.data + (size_t)y * m.row_pitch,
                   (size_t)n * 4);
        CHECK(kiln_unmap(r->ctx, kiln_texture_resource(st), k));
        levels[k] = at;
        at += (size_t)n * n * 4;
    }
    CHECK(kiln_destroy_texture(r->dev, st));
    return all;
}

/* The raw GL anchor (anchor_gl.h): built with kiln's osmesa backend only;
 * without it raw_create says why and the anchor's columns read n/a. The
 * anchor gets the 4x framebuffer and (e) with the mip chain `levels`. */
static anchor_gl *raw_create(uint32_t threads, const tri_set *small, const tri_set *mid,
                             const uint8_t *texels, const uint8_t *const *levels,
                             uint32_t mip_count, char *why, size_t n)
{
#ifdef KILN_HAVE_GL
    anchor_gl_desc d = {
        .width = W,
        .height = H,
        .threads = threads,
        .clear_color = {clear_color[0], clear_color[1], clear_color[2], clear_color[3]},
        .small = small->v,
        .small_tris = small->ntris,
        .mid = mid->v,
        .mid_tris = mid->ntris,
        .color_stride = sizeof(vtx_color),
        .color_offset = offsetof(vtx_color, rgba),
        .quad = quad,
        .quad_vertices = sizeof quad / sizeof *quad,
        .quad_stride = sizeof(vtx_tex),
        .uv_offset = offsetof(vtx_tex, u),
        .layers = N_LAYERS,
        .texels = texels,
        .tex_size = TEX_SIZE,
        .bc1 = bc1_blocks,
        .mesh = mesh,
        .mesh_vertices = 6 * N_MESH_QUADS,
        .proj = mesh_proj,
        .mips = levels,
        .mip_count = mip_count,
        .samples = 4};
    anchor_gl *a = NULL;
    if (anchor_gl_create(&d, &a, why, n) != KILN_OK)
        return NULL;
    return a;
#else
    (void)threads, (void)small, (void)mid, (void)texels, (void)levels, (void)mip_count;
    snprintf(why, n, "not built (kiln has no osmesa backend here: CMake's KILN_HAVE_GL is off)");
    return NULL;
#endif
}

/* Binds the scene in the anchor; false when the anchor does not have it
 * ((g), (f); a 4x scene without its 4x framebuffer). */
static bool raw_bind(anchor_gl *a, scene_id sc)
{
#ifdef KILN_HAVE_GL
    anchor_gl_scene as;
    switch (scene_base(sc)) {
    case SC_SMALL:
        as = ANCHOR_GL_SMALL;
        break;
    case SC_MID:
        as = ANCHOR_GL_MID;
        break;
    case SC_LAYERS:
    case SC_LAYERS_PS: /* raw GL has one shader for both */
        as = ANCHOR_GL_LAYERS;
        break;
    case SC_LAYERS_POINT:
        as = ANCHOR_GL_LAYERS_POINT;
        break;
    case SC_LAYERS_BLEND:
        as = ANCHOR_GL_LAYERS_BLEND;
        break;
    case SC_LAYERS_ALPHA:
        as = ANCHOR_GL_LAYERS_ALPHA;
        break;
    case SC_DRAWS:
        as = ANCHOR_GL_DRAWS;
        break;
    case SC_LAYERS_BC1:
        as = ANCHOR_GL_LAYERS_BC1;
        break;
    case SC_MESH:
        as = ANCHOR_GL_MESH;
        break;
    default: /* (g), (f): not in the anchor */
        return false;
    }
    return anchor_gl_bind(a, as, scene_ms(sc) ? 4 : 1);
#else
    (void)a, (void)sc;
    return false;
#endif
}

/* One raw GL frame, timed as frame() times kiln's: from before the clears
 * to after glFinish. */
static double raw_frame(anchor_gl *a)
{
#ifdef KILN_HAVE_GL
    uint64_t t0 = now_ns();
    anchor_gl_draw_frame(a);
    anchor_gl_finish(a);
    return (double)(now_ns() - t0) / 1e6;
#else
    (void)a;
    return 0;
#endif
}

static bool raw_readback(anchor_gl *a, uint8_t *img)
{
#ifdef KILN_HAVE_GL
    return anchor_gl_readback(a, img);
#else
    (void)a, (void)img;
    return false;
#endif
}

static void raw_destroy(anchor_gl *a)
{
#ifdef KILN_HAVE_GL
    anchor_gl_destroy(a);
#else
    (void)a;
#endif
}

/* A figure, or n/a when the anchor did not run. */
static void cell(double v, bool have)
{
    if (have)
        printf(" %9.2f", v);
    else
        printf(" %9s", "n/a");
}

/* The sanity check of one side's image: check_tris or check_layers. */
static bool check_side(const char *side, scene_id sc, const tri_set *small, const tri_set *mid,
                       const uint8_t *img)
{
    char name[64];
    snprintf(name, sizeof name, "%s %s", side, scene_names[sc]);
    if (sc == SC_SMALL_MS) {
        double covered;
        bool ok = check_tris(name, small, img, &covered);
        return check_edges(name, sc, small, img, NULL) && ok;
    }
    if (sc == SC_MESH_MS) {
        bool ok = check_cover(name, img, 0.5, 200, NULL);
        return check_edges(name, sc, small, img, NULL) && ok;
    }
    if (sc == SC_SMALL || sc == SC_MID || sc == SC_DRAWS) {
        double covered;
        return check_tris(name, sc == SC_MID ? mid : small, img, &covered);
    }
    if (sc == SC_MESH)
        return check_cover(name, img, 0.5, 200, NULL);
    if (sc == SC_PARTICLES || sc == SC_SPRITES)
        return check_cover(name, img, 0.2, 50, NULL);
    if (sc == SC_OBJECTS)
        return check_cover(name, img, 0.1, 500, NULL);
    if (sc == SC_LAYERS_BC1) /* soft exact; llvmpipe's 5:6:5 widening within 1 */
        return check_bc1(name, img, strcmp(side, "soft") ? 1 : 0);
    return check_layers(name, img, sc == SC_LAYERS_BLEND ? N_LAYERS : 1);
}

/* The same scenes on the osmesa backend (Mesa's llvmpipe) beside soft, and
 * in raw GL on llvmpipe without kiln (the anchor): three sides with the
 * same thread count (llvmpipe gets it as LP_NUM_THREADS), frames
 * interleaved soft, osmesa, raw GL, soft, ... so that the machine's drift
 * hits all three; each ratio is taken per frame, then its median. Every
 * osmesa and raw GL image passes the same sanity checks. */
static void llvmpipe(const config *cp, const tri_set *small, const tri_set *mid,
                     const uint8_t *texels, uint8_t *img)
{
    /* The probe is the process's first GL context: it fixes llvmpipe's
     * thread count, so it asks for what the devices below ask for. */
    kiln_device *gl_dev = NULL;
    kiln_device_desc gd = {
        .backend = KILN_BACKEND_OSMESA, .num_threads = cp->threads, .log_fn = silent_log};
    kiln_result gr = kiln_device_create(&gd, &gl_dev);
    if (gr != KILN_OK) {
        printf("\nllvmpipe comparison: not run - the osmesa backend is not available "
               "(kiln_device_create with KILN_BACKEND_OSMESA: %s)\n",
               kiln_result_string(gr));
        return;
    }
    kiln_device_destroy(gl_dev);
    const config *c = cp;
    rig soft, gl;
    rig_init_backend(&soft, KILN_BACKEND_SOFT, KILN_EXEC_ASYNC, c->threads, small, mid, texels);
    rig_init_backend(&gl, KILN_BACKEND_OSMESA, KILN_EXEC_ASYNC, soft.threads, small, mid, texels);
    char why[512];
    const uint8_t *levels[MAX_MIPS];
    uint32_t mip_count = 0;
    uint8_t *mips = read_mips(&soft, levels, &mip_count);
    anchor_gl *raw =
        raw_create(soft.threads, small, mid, texels, levels, mip_count, why, sizeof why);
    free(mips); /* the anchor has its copy */
    uint8_t *raw_img = raw ? xmalloc((size_t)W * H * 4) : NULL;

    printf("\nkiln soft beside llvmpipe through kiln (the osmesa backend) and llvmpipe in raw GL "
           "(no kiln), same scenes, same data, frames interleaved soft, osmesa, raw GL; "
           "ratios per frame, median shown:\n"
           "  osm/soft = osmesa ms / soft ms (above 1: soft is faster; min and max beside it), "
           "raw/soft = raw GL ms / soft ms, osm/raw = osmesa ms / raw GL ms (the osmesa "
           "backend's own overhead over the same GL work)\n");
#ifdef KILN_HAVE_GL
    if (raw)
        printf("raw GL: bench/anchor_gl.c, its own GL context on this thread (provider %s, %s), "
               "the built-in effects' GLSL, the same states; llvmpipe's rasterizer thread count "
               "is fixed by the process's first GL context, an osmesa device's (created first, "
               "asking for %u), so the anchor shares that count (its own request for %u: %s)\n",
               anchor_gl_provider(raw), anchor_gl_renderer(raw), soft.threads, soft.threads,
               anchor_gl_threads_ignored(raw) ? "ignored, as expected" : "applied");
    if (raw && anchor_gl_multisample_missing(raw))
        printf("raw GL: no 4x framebuffer (%s): the 4x scenes' raw GL columns read n/a\n",
               anchor_gl_multisample_missing(raw));
    else if (raw)
        printf("raw GL 4x: GL_RGBA8 + GL_DEPTH_COMPONENT32F renderbuffers of 4 samples, resolved "
               "by glBlitNamedFramebuffer into the 1x texture in the timed frame; the osmesa "
               "backend refuses 4x textures, so its columns read n/a there\n");
#endif
    if (!raw)
        printf("raw GL: not run - %s; its columns read n/a\n", why);
    double soft_ms[SC_COUNT] = {0}, raw_ms[SC_COUNT] = {0}; /* medians, for the MSAA cost */
    printf("%-36s %3s %9s %9s %9s %9s %9s %9s %9s %9s %-7s %-7s %s\n", "scene", "thr", "soft ms",
           "osmesa ms", "rawGL ms", "osm/soft", "min", "max", "raw/soft", "osm/raw", "osmesa",
           "raw GL", "raw=osmesa");
    for (int sc = 0; sc < SC_COUNT; sc++) {
        if (!c->scene[sc])
            continue;
        /* (c/bc1), (a/4x), (e/4x): the osmesa backend refuses BC and 4x
         * textures; soft and raw GL */
        bool osm = sc != SC_LAYERS_BC1 && !scene_ms((scene_id)sc);
        scene_bind(&soft, (scene_id)sc);
        if (osm)
            scene_bind(&gl, (scene_id)sc);
        /* The anchor draws (a) to (e) and the 4x scenes; (g), (f)
         * compare with osmesa only. */
        anchor_gl *rw = raw && raw_bind(raw, (scene_id)sc) ? raw : NULL;
        for (int f = 0; f < c->warmup; f++) {
            frame(&soft, (scene_id)sc, NULL, NULL);
            if (osm)
                frame(&gl, (scene_id)sc, NULL, NULL);
            if (rw)
                raw_frame(rw);
        }
        double a[MAX_FRAMES], b[MAX_FRAMES], g[MAX_FRAMES];
        double r_os[MAX_FRAMES], r_gs[MAX_FRAMES], r_og[MAX_FRAMES];
        soft_ms[sc] = raw_ms[sc] = 0;
        for (int f = 0; f < c->frames; f++) {
            a[f] = frame(&soft, (scene_id)sc, NULL, NULL);
            b[f] = osm ? frame(&gl, (scene_id)sc, NULL, NULL) : 0;
            g[f] = rw ? raw_frame(rw) : 0;
            r_os[f] = b[f] / a[f];
            r_gs[f] = g[f] / a[f];
            r_og[f] = rw && osm ? b[f] / g[f] : 0;
        }
        bool ok = true;
        if (osm) {
            readback(&gl, img);
            ok = check_side("osmesa", (scene_id)sc, small, mid, img);
        } else {
            readback(&soft, img); /* raw=osmesa compares with soft's image here */
        }
        const char *raw_check = "n/a", *same = "n/a";
        char same_buf[48];
        if (rw) {
            if (!raw_readback(rw, raw_img)) {
                check_failed(scene_names[sc], "raw GL reported a GL error");
                raw_check = "FAILED";
            } else {
                raw_check =
                    check_side("raw GL", (scene_id)sc, small, mid, raw_img) ? "ok" : "FAILED";
                size_t ndiff = 0;
                for (size_t i = 0; i < (size_t)W * H; i++)
                    ndiff += memcmp(img + 4 * i, raw_img + 4 * i, 4) != 0;
                snprintf(same_buf, sizeof same_buf, "differs (%.2f%% of pixels)",
                         100.0 * (double)ndiff / ((double)W * H));
                same = ndiff ? same_buf : "same";
            }
        }
        summary sa = summarize(a, c->frames), sb = summarize(b, c->frames),
                sg = summarize(g, c->frames), sos = summarize(r_os, c->frames),
                sgs = summarize(r_gs, c->frames), sog = summarize(r_og, c->frames);
        printf("%-36s %3u %9.2f", scene_names[sc], soft.threads, sa.median);
        cell(sb.median, osm);
        cell(sg.median, rw);
        cell(sos.median, osm);
        cell(sos.min, osm);
        cell(sos.max, osm);
        cell(sgs.median, rw);
        cell(sog.median, rw && osm);
        printf(" %-7s %-7s %s%s\n", osm ? ok ? "ok" : "FAILED" : "n/a", raw_check, same,
               osm || !rw ? "" : " (raw GL against soft)");
        soft_ms[sc] = sa.median;
        raw_ms[sc] = rw ? sg.median : 0;
    }
    /* The MSAA cost on each side: the 4x scene's median frame over the
     * 1x scene's, both from the interleaved run above. */
    static const scene_id ms_scenes[2] = {SC_SMALL_MS, SC_MESH_MS};
    for (int k = 0; k < 2; k++) {
        scene_id m = ms_scenes[k], b = scene_base(m);
        if (!c->scene[m] || !c->scene[b])
            continue;
        printf("MSAA cost %.3s: 4x frame / 1x frame (medians): soft %.2f", scene_names[b],
               soft_ms[m] / soft_ms[b]);
        if (raw_ms[m] > 0 && raw_ms[b] > 0)
            printf(", raw GL %.2f\n", raw_ms[m] / raw_ms[b]);
        else
            printf(", raw GL n/a\n");
    }
    printf("(raw=osmesa: whether the two llvmpipe images are bit-identical; information, not a "
           "check)\n");
    raw_destroy(raw);
    free(raw_img);
    rig_fini(&soft);
    rig_fini(&gl);
}
