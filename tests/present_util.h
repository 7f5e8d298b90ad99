/*
 * Helpers shared by the present tests (swapchain, png target, stress):
 *
 *  - frame content that encodes its index: a clear color derived from the
 *    index and, optionally, a small patch written with UpdateSubresource
 *    (no draw), so every delivered frame can be checked pixel by pixel;
 *  - a MEMORY-target recorder: its callback (on the swapchain's display
 *    thread) checks every pixel of each frame against the content its frame
 *    number should have, records what it saw, and can be held at a gate the
 *    test controls, so frames queue up behind it without any timing.
 *
 * The callback never calls kiln or the CHECK macros (the harness counters
 * are not thread-safe); the test reads the records after the fact.
 */
#ifndef KILN_TEST_PRESENT_UTIL_H
#define KILN_TEST_PRESENT_UTIL_H

#include "harness.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- frame content ---- */

/* The clear color of frame `index` (1-based), as RGBA bytes. Unique for
 * index < 65536; alpha is not 255 so that alpha is checked too. */
static inline void pu_clear_bytes(uint64_t index, uint8_t rgba[4])
{
    rgba[0] = (uint8_t)(index & 0xff);
    rgba[1] = (uint8_t)((index >> 8) & 0xff);
    rgba[2] = (uint8_t)(index * 37u + 11u);
    rgba[3] = (uint8_t)(index * 53u + 7u);
}

/* The patch: a PW x PH box whose place and texels depend on the index. */
enum { PU_PW = 3, PU_PH = 2 };

static inline void pu_patch_origin(uint64_t index, uint32_t w, uint32_t h, uint32_t *x0,
                                   uint32_t *y0)
{
    *x0 = w > PU_PW ? (uint32_t)((index * 7u) % (w - PU_PW + 1)) : 0;
    *y0 = h > PU_PH ? (uint32_t)((index * 3u) % (h - PU_PH + 1)) : 0;
}

static inline void pu_patch_texel(uint64_t index, uint32_t k, uint8_t rgba[4])
{
    rgba[0] = (uint8_t) ~(index & 0xff);
    rgba[1] = (uint8_t) ~((index >> 8) & 0xff);
    rgba[2] = (uint8_t)(40u * k + 1u);
    rgba[3] = (uint8_t)(0xf0u ^ k);
}

/* Logical RGBA of pixel (x, y) of frame `index` at size w x h. */
static inline void pu_expected_rgba(uint64_t index, int patch, uint32_t w, uint32_t h, uint32_t x,
                                    uint32_t y, uint8_t rgba[4])
{
    if (patch) {
        uint32_t x0, y0;
        pu_patch_origin(index, w, h, &x0, &y0);
        if (x >= x0 && x < x0 + PU_PW && x < w && y >= y0 && y < y0 + PU_PH && y < h) {
            pu_patch_texel(index, (y - y0) * PU_PW + (x - x0), rgba);
            return;
        }
    }
    pu_clear_bytes(index, rgba);
}

/* RGBA -> the byte order of `fmt` in memory. */
static inline void pu_to_format(const uint8_t rgba[4], kiln_format fmt, uint8_t out[4])
{
    if (fmt == KILN_FORMAT_B8G8R8A8_UNORM) {
        out[0] = rgba[2];
        out[1] = rgba[1];
        out[2] = rgba[0];
        out[3] = rgba[3];
    } else {
        memcpy(out, rgba, 4);
    }
}

/* Takes the back buffer, renders frame `index` into it (clear, and the
 * patch when asked) and presents it. *out_tex: the buffer used. */
static inline kiln_result pu_render_present(kiln_device *dev, kiln_context *ctx, kiln_swapchain *sc,
                                            uint64_t index, int patch, kiln_texture *out_tex)
{
    kiln_texture tex;
    kiln_rtv rtv;
    kiln_result r = kiln_swapchain_get_back_buffer(sc, &tex, &rtv);
    if (r != KILN_OK)
        return r;
    if (out_tex)
        *out_tex = tex;
    uint8_t c[4];
    pu_clear_bytes(index, c);
    float color[4] = {c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f};
    if ((r = kiln_clear_rtv(ctx, rtv, color)) != KILN_OK)
        return r;
    if (patch) {
        kiln_texture2d_desc td;
        if ((r = kiln_texture_get_desc(dev, tex, &td)) != KILN_OK)
            return r;
        uint32_t x0, y0;
        pu_patch_origin(index, td.width, td.height, &x0, &y0);
        uint32_t pw = td.width < PU_PW ? td.width : PU_PW,
                 ph = td.height < PU_PH ? td.height : PU_PH;
        uint8_t texels[PU_PW * PU_PH * 4];
        for (uint32_t k = 0; k < PU_PW * PU_PH; k++) {
            uint8_t rgba[4];
            pu_patch_texel(index, k, rgba);
            pu_to_format(rgba, td.format, texels + 4 * k);
        }
        kiln_box box = {x0, y0, 0, x0 + pw, y0 + ph, 1};
        if ((r = kiln_update_subresource(ctx, kiln_texture_resource(tex), 0, &box, texels,
                                         PU_PW * 4, 0)) != KILN_OK)
            return r;
    }
    return kiln_swapchain_present(sc);
}

/* ---- the recorder ---- */

typedef struct pu_record {
    uint64_t number; /* frame_number */
    uint32_t w, h, pitch;
    kiln_format format;
    uint32_t bad_pixels; /* pixels that differ from frame `number`'s content */
} pu_record;

typedef struct pu_recorder {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int patch; /* frames carry the patch */
    pu_record *recs;
    uint32_t cap, count; /* frames beyond cap are counted, not stored */
    /* The gate: with `gated`, the callback of the k-th frame (1-based, in
     * delivery order) returns only once k <= allowed or the gate is open. */
    int gated, open;
    uint32_t allowed;
    uint32_t entered; /* callbacks that have started */
} pu_recorder;

static inline void pu_recorder_init(pu_recorder *r, uint32_t cap, int patch, int gated)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->recs = calloc(cap, sizeof *r->recs);
    r->cap = cap;
    r->patch = patch;
    r->gated = gated;
}

static inline void pu_recorder_free(pu_recorder *r)
{
    free(r->recs);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

static inline void pu_frame_cb(const kiln_frame *f, void *user)
{
    pu_recorder *r = user;
    pu_record rec = {f->frame_number, f->width, f->height, f->row_pitch, f->format, 0};
    for (uint32_t y = 0; y < f->height; y++) {
        const uint8_t *row = (const uint8_t *)f->pixels + (size_t)y * f->row_pitch;
        for (uint32_t x = 0; x < f->width; x++) {
            uint8_t rgba[4], want[4];
            pu_expected_rgba(f->frame_number, r->patch, f->width, f->height, x, y, rgba);
            pu_to_format(rgba, f->format, want);
            if (memcmp(row + 4 * x, want, 4) != 0)
                rec.bad_pixels++;
        }
    }
    pthread_mutex_lock(&r->mu);
    if (r->count < r->cap)
        r->recs[r->count] = rec;
    r->count++;
    uint32_t k = ++r->entered;
    pthread_cond_broadcast(&r->cv);
    while (r->gated && !r->open && k > r->allowed)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

/* Blocks until `n` callbacks have started (the n-th frame is ACQUIRED and
 * held at the gate, if gated). */
static inline void pu_wait_entered(pu_recorder *r, uint32_t n)
{
    pthread_mutex_lock(&r->mu);
    while (r->entered < n)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

/* Lets `n` more held frames through the gate. */
static inline void pu_allow(pu_recorder *r, uint32_t n)
{
    pthread_mutex_lock(&r->mu);
    r->allowed += n;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static inline void pu_open(pu_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    r->open = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static inline uint32_t pu_count(pu_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    uint32_t n = r->count;
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* A copy of record i (taken under the lock). */
static inline pu_record pu_get(pu_recorder *r, uint32_t i)
{
    pu_record rec = {0};
    pthread_mutex_lock(&r->mu);
    if (i < r->count && i < r->cap)
        rec = r->recs[i];
    pthread_mutex_unlock(&r->mu);
    return rec;
}

/* ---- misc ---- */

static inline kiln_swapchain_stats pu_stats(kiln_swapchain *sc)
{
    kiln_swapchain_stats s;
    memset(&s, 0, sizeof s);
    CHECK_RESULT(kiln_swapchain_get_stats(sc, &s), KILN_OK);
    return s;
}

/* Gives other threads a chance while the test polls a condition (never a
 * timing assertion: the loop ends on the condition, ctest's timeout
 * catches a hang). */
static inline void pu_pause(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

#endif
