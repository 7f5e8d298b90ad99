/*
 * Tile buffers (geom.h, kr_tile_planes; docs/raster.md "Tile buffers").
 *
 * A clear of a plane that something follows in the tile stores into the
 * plane's lines, and a line not in the cache is read in before its first
 * store: at 1080p a frame's color and depth (16.6 MB) came back from
 * memory only to be overwritten. When such a clear writes every bit of the
 * tile's texels, the tile moves that plane to a buffer of its own, reused
 * tile after tile and so in the cache: the clear, and every draw and clear
 * after it in the tile, read and write the buffer through the same kr_fb
 * fields (the plane pointer moved so that the tile's pixels land in the
 * buffer, the pitch and the sample planes' stride the buffer's), and when
 * the tile is done the buffer is written to the plane with non-temporal
 * stores, which take no line in. The plane's old texels are never read,
 * every texel of the tile is written once, and the bytes are those drawing
 * into the plane would leave.
 */
#include "geom.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static _Atomic int tilebuf_mode = -1;
static _Atomic uint64_t tilebuf_planes;

int kr_tilebuf_mode(void)
{
    int m = atomic_load_explicit(&tilebuf_mode, memory_order_relaxed);
    if (m >= 0)
        return m;
    const char *env = getenv("KILN_TILEBUF");
    int want = env && (!strcmp(env, "0") || !strcmp(env, "off")) ? 0 : 1;
    atomic_compare_exchange_strong(&tilebuf_mode, &m, want); /* kr_tilebuf_force may have won */
    return atomic_load_explicit(&tilebuf_mode, memory_order_relaxed);
}

void kr_tilebuf_force(int mode) { atomic_store(&tilebuf_mode, mode); }

uint64_t kr_tilebuf_count(void) { return atomic_load(&tilebuf_planes); }

/* Plane k of fb (render target k, or the depth-stencil at
 * KILN_MAX_RENDER_TARGETS): its bytes, its row pitch, the stride of its
 * samples. */
static uint8_t *plane_bytes(const kr_fb *fb, uint32_t k)
{
    return k < KILN_MAX_RENDER_TARGETS ? fb->rt[k] : fb->ds;
}

static size_t plane_pitch(const kr_fb *fb, uint32_t k)
{
    return k < KILN_MAX_RENDER_TARGETS ? fb->rt_pitch[k] : fb->ds_pitch;
}

static size_t plane_stride(const kr_fb *fb, uint32_t k)
{
    return k < KILN_MAX_RENDER_TARGETS ? fb->rt_plane[k] : fb->ds_plane;
}

/* Whether plane k of the scene's targets may be held: bound, 4-byte
 * texels (RGBA8, BGRA8 and the other 4-byte colors, D32_FLOAT,
 * D24_UNORM_S8_UINT), and no other slot on the same bytes (one
 * subresource bound twice would have two copies that part). */
static bool fits(const kr_fb *home, uint32_t k)
{
    const uint8_t *bytes = plane_bytes(home, k);
    kiln_format f = k < KILN_MAX_RENDER_TARGETS ? home->rt_format[k] : home->ds_format;
    if (!bytes || kres_format(f)->size != 4)
        return false;
    for (uint32_t i = 0; i <= KILN_MAX_RENDER_TARGETS; i++)
        if (i != k && plane_bytes(home, i) == bytes)
            return false;
    return true;
}

const kr_fb *kr_tilebuf_clear(kr_tile_planes *tp, const kr_fb *fb, uint32_t k, bool full, int x0,
                              int y0)
{
    if (!tp->pool || !full || (tp->held >> k & 1u) || !fits(tp->home, k))
        return fb;
    if (!tp->slot && !(tp->slot = kr_pool_tilebuf_get(tp->pool)))
        return fb; /* every slot taken: into the plane, the same bytes */
    const uint32_t samples = tp->home->samples;
    uint8_t *buf = kr_tilebuf_plane(tp->pool, tp->slot, k, samples);
    if (!buf)
        return fb;
    if (!tp->held)
        tp->fb = *fb;
    tp->buf[k] = buf;
    tp->held |= 1u << k;
    /* The tile's first pixel at the buffer's first byte: the pointer is
     * formed as an integer and lies before the buffer, but every texel
     * addressed through it is inside the tile, so inside the buffer. */
    uint8_t *at =
        (uint8_t *)((uintptr_t)buf - (uintptr_t)y0 * KR_TILEBUF_PITCH - (uintptr_t)x0 * 4u);
    if (k < KILN_MAX_RENDER_TARGETS) {
        tp->fb.rt[k] = at;
        tp->fb.rt_pitch[k] = KR_TILEBUF_PITCH;
        tp->fb.rt_plane[k] = KR_TILEBUF_SAMPLE;
    } else {
        tp->fb.ds = at;
        tp->fb.ds_pitch = KR_TILEBUF_PITCH;
        tp->fb.ds_plane = KR_TILEBUF_SAMPLE;
    }
    return &tp->fb;
}

/* The tile [x0, x1) x [y0, y1) of one sample plane (pitch bytes a row)
 * from its buffer, past the cache (fenced by the caller), but for the last
 * 4 to 12 bytes of a row whose length is not a multiple of 16. */
static void write_back(uint8_t *plane, size_t pitch, const uint8_t *buf, int x0, int y0, int x1,
                       int y1)
{
    const size_t n = (size_t)(x1 - x0) * 4;
    for (int y = y0; y < y1; y++) {
        uint8_t *d = plane + (size_t)y * pitch + (size_t)x0 * 4;
        const uint8_t *b = buf + (size_t)(y - y0) * KR_TILEBUF_PITCH;
        size_t i = 0;
#if defined(__SSE2__)
        /* kiln's planes and pitches are multiples of 16 bytes (resource.c):
         * the first loop is for a storage that is not */
        for (; i < n && ((uintptr_t)(d + i) & 15u); i += 4)
            memcpy(d + i, b + i, 4);
        for (; i + 16 <= n; i += 16)
            _mm_stream_si128((__m128i *)(void *)(d + i),
                             _mm_loadu_si128((const __m128i *)(const void *)(b + i)));
#endif
        memcpy(d + i, b + i, n - i);
    }
}

void kr_tilebuf_finish(kr_tile_planes *tp, int x0, int y0, int x1, int y1)
{
    if (!tp->slot)
        return;
    const kr_fb *home = tp->home;
    for (uint32_t k = 0; k <= KILN_MAX_RENDER_TARGETS; k++)
        if (tp->held >> k & 1u)
            for (uint32_t s = 0; s < home->samples; s++)
                write_back(plane_bytes(home, k) + s * plane_stride(home, k), plane_pitch(home, k),
                           tp->buf[k] + s * KR_TILEBUF_SAMPLE, x0, y0, x1, y1);
    if (tp->held) {
#if defined(__SSE2__)
        _mm_sfence(); /* the stores visible before whatever marks the tile done */
#endif
        atomic_fetch_add_explicit(&tilebuf_planes, (uint64_t)__builtin_popcount(tp->held),
                                  memory_order_relaxed);
    }
    kr_pool_tilebuf_put(tp->pool, tp->slot);
    tp->slot = NULL;
    tp->held = 0;
}
