/*
 * Captures of what the example scenes do not do, replayed to the same
 * bytes: two contexts ordered by a timeline signal and a server wait;
 * sync tokens, fences (merged, polled, waited on), an event query; a
 * STAGING texture written through Map WRITE (every row recorded); one
 * written and destroyed while mapped, and one mapped by a context that is
 * then destroyed (both unmap implicitly, after copies that wait for them);
 * and a swapchain on the MEMORY target, presented three times with a
 * resize between, whose frames the replay gives back (also as a frame
 * range). Replayed ASYNC with 3 threads and SERIAL.
 */
#include "capture_util.h"
#include "raster_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { W = 16, H = 8 };

static kiln_texture staging(kiln_device *dev)
{
    kiln_texture2d_desc d = {W, H, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_STAGING, 0, 0, 0};
    kiln_texture t = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &t), KILN_OK);
    return t;
}

/* Maps `t` for writing and fills it with a pattern of `seed`. */
static void write_pattern(kiln_context *ctx, kiln_texture t, uint8_t seed, bool unmap)
{
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(t), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    for (uint32_t y = 0; y < H && m.data; y++)
        for (uint32_t x = 0; x < W * 4; x++)
            ((uint8_t *)m.data)[y * m.row_pitch + x] = (uint8_t)(seed + 7 * x + 31 * y);
    if (unmap)
        CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(t), 0), KILN_OK);
}

static void copy_box(kiln_context *ctx, kiln_texture dst, uint32_t x, uint32_t y, kiln_texture src,
                     uint32_t w, uint32_t h)
{
    kiln_box b = {0, 0, 0, w, h, 1};
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(dst), 0, x, y, 0,
                                              kiln_texture_resource(src), 0, &b),
                 KILN_OK);
}

static void streams_live(uint8_t *pixels)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *imm = kiln_device_immediate_context(dev);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_streams.kcap"), KILN_OK);
    kiln_context *b = NULL, *c = NULL;
    CHECK_RESULT(kiln_context_create(dev, &b), KILN_OK);
    CHECK_RESULT(kiln_context_create(dev, &c), KILN_OK);
    ru_tex x = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);

    /* B clears, then signals; the immediate context waits on the GPU side. */
    kiln_timeline t;
    kiln_fence f, f2, merged;
    CHECK_RESULT(kiln_create_timeline(dev, 0, &t), KILN_OK);
    const float red[4] = {1, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(b, x.rtv, red), KILN_OK);
    CHECK_RESULT(kiln_context_signal(b, t, 1), KILN_OK);
    CHECK_RESULT(kiln_create_fence(dev, t, 1, &f), KILN_OK);
    CHECK_RESULT(kiln_context_wait(imm, f), KILN_OK);

    /* STAGING written by the CPU, copied in. */
    kiln_texture s1 = staging(dev), s2 = staging(dev), s3 = staging(dev);
    write_pattern(imm, s1, 3, true);
    copy_box(imm, x.tex, 0, 0, s1, 8, 4);
    /* Written and destroyed while mapped: the copy waits for the unmap. */
    write_pattern(imm, s2, 90, false);
    copy_box(imm, x.tex, 8, 4, s2, 8, 4);
    CHECK_RESULT(kiln_destroy_texture(dev, s2), KILN_OK);
    /* Mapped by context C, which goes away. */
    write_pattern(c, s3, 200, false);
    copy_box(imm, x.tex, 8, 0, s3, 4, 4);
    CHECK_RESULT(kiln_context_destroy(c), KILN_OK);

    /* Tokens, fences, a query. */
    kiln_sync_token tok;
    CHECK_RESULT(kiln_context_sync_token(b, &tok), KILN_OK);
    CHECK_RESULT(kiln_context_wait_sync_token(imm, tok), KILN_OK);
    CHECK_RESULT(kiln_wait_sync_token(dev, tok, UINT64_MAX), KILN_OK);
    CHECK_RESULT(kiln_context_insert_fence(imm, &f2), KILN_OK);
    CHECK_RESULT(kiln_fence_merge(dev, f, f2, &merged), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, merged, UINT64_MAX), KILN_OK);
    kiln_fence_status st;
    uint64_t value;
    CHECK_RESULT(kiln_fence_poll(dev, f, &st), KILN_OK);
    CHECK_RESULT(kiln_timeline_get_value(dev, t, &value), KILN_OK);
    kiln_query q;
    uint32_t done = 0;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_EVENT, &q), KILN_OK);
    CHECK_RESULT(kiln_query_end(imm, q), KILN_OK);
    while (kiln_query_get_data(imm, q, &done, sizeof done, 0) == KILN_E_WAS_STILL_DRAWING)
        ;
    CHECK_RESULT(kiln_timeline_signal(dev, t, 5), KILN_OK);

    CHECK(ru_read(dev, x.tex, 0, pixels));
    kiln_destroy_query(dev, q);
    kiln_destroy_fence(dev, merged);
    kiln_destroy_fence(dev, f2);
    kiln_destroy_fence(dev, f);
    kiln_destroy_timeline(dev, t);
    kiln_destroy_texture(dev, s1);
    kiln_destroy_texture(dev, s3);
    kiln_context_destroy(b);
    ru_free_tex(dev, &x);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);
}

static void test_streams(void)
{
    static uint8_t live[W * H * 4];
    streams_live(live);
    size_t len;
    uint8_t *bytes = cu_read("capture_streams.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    for (int m = 0; m < 2; m++) {
        cu_images img = {0};
        kcap_replay_report rep;
        kiln_exec_mode mode = m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC;
        CHECK_RESULT(cu_replay(bytes, len, mode, 3, NULL, &img, &rep), KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        if (rep.mismatches)
            fprintf(stderr, "    %s\n", rep.first_mismatch);
        const cu_image *t = cu_target(&img, 0);
        CHECK(t && t->width == W && memcmp(t->pixels, live, sizeof live) == 0);
        cu_free(&img);
    }
    free(bytes);
}

/* ---- a swapchain ---- */

typedef struct frames {
    pthread_mutex_t mu;
    uint32_t n, w[4], h[4];
    uint8_t px[4][W * H * 4];
} frames;

static void keep_frame(const kiln_frame *f, void *user)
{
    frames *fr = user;
    pthread_mutex_lock(&fr->mu);
    uint32_t i = fr->n++;
    if (i < 4) {
        fr->w[i] = f->width;
        fr->h[i] = f->height;
        for (uint32_t y = 0; y < f->height; y++)
            memcpy(fr->px[i] + y * f->width * 4, (const uint8_t *)f->pixels + y * f->row_pitch,
                   f->width * 4);
    }
    pthread_mutex_unlock(&fr->mu);
}

static void swapchain_live(frames *fr)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *imm = kiln_device_immediate_context(dev);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_swapchain.kcap"), KILN_OK);
    kiln_swapchain_desc d = {.width = W,
                             .height = H,
                             .buffer_count = 2,
                             .mode = KILN_PRESENT_MAILBOX, /* replayed in FIFO */
                             .winsys = KILN_WINSYS_MEMORY,
                             .frame_fn = keep_frame,
                             .frame_user = fr};
    kiln_swapchain *sc = NULL;
    CHECK_RESULT(kiln_swapchain_create(imm, &d, &sc), KILN_OK);
    for (uint32_t f = 0; f < 3 && sc; f++) {
        if (f == 2)
            CHECK_RESULT(kiln_swapchain_resize(sc, W / 2, H), KILN_OK);
        kiln_texture tex;
        kiln_rtv rtv;
        CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &tex, &rtv), KILN_OK);
        const float color[4] = {0.2f * (float)f, 0.5f, 1.0f - 0.3f * (float)f, 1};
        CHECK_RESULT(kiln_clear_rtv(imm, rtv, color), KILN_OK);
        uint8_t patch[4 * 3 * 4];
        for (uint32_t i = 0; i < sizeof patch; i++)
            patch[i] = (uint8_t)(i * 13 + f * 50);
        kiln_box box = {1 + f, 2, 0, 5 + f, 5, 1};
        CHECK_RESULT(
            kiln_update_subresource(imm, kiln_texture_resource(tex), 0, &box, patch, 16, 0),
            KILN_OK);
        CHECK_RESULT(kiln_swapchain_present(sc), KILN_OK);
        /* MAILBOX may drop frames; waiting keeps every frame for the check. */
        CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    }
    kiln_swapchain_stats stats;
    CHECK_RESULT(kiln_swapchain_get_stats(sc, &stats), KILN_OK);
    kiln_swapchain_destroy(sc);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);
}

static void test_swapchain(void)
{
    static frames live;
    pthread_mutex_init(&live.mu, NULL);
    swapchain_live(&live);
    CHECK_EQ_INT(live.n, 3);
    size_t len;
    uint8_t *bytes = cu_read("capture_swapchain.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    for (int m = 0; m < 2; m++) {
        cu_images img = {0};
        kcap_replay_report rep;
        kiln_exec_mode mode = m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC;
        CHECK_RESULT(cu_replay(bytes, len, mode, 3, NULL, &img, &rep), KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        CHECK_EQ_INT(img.n, 3);
        for (uint32_t f = 0; f < 3; f++) {
            const cu_image *i = cu_frame(&img, f);
            CHECK(i && i->width == live.w[f] && i->height == live.h[f] &&
                  memcmp(i->pixels, live.px[f], (size_t)live.w[f] * live.h[f] * 4) == 0);
        }
        cu_free(&img);
    }
    /* Frames 1..1 only: one image, one frame reported, the replay stops. */
    cu_images img = {0};
    kcap_replay_report rep;
    kcap_replay_desc d = {.exec_mode = KILN_EXEC_SERIAL,
                          .frame_range = true,
                          .first_frame = 1,
                          .last_frame = 1,
                          .image_fn = cu_collect,
                          .frame_fn = cu_count_frame,
                          .user = &img,
                          .log_fn = cu_quiet};
    CHECK_RESULT(kcap_replay(bytes, len, &d, &rep), KILN_OK);
    CHECK_EQ_INT(img.n, 1);
    CHECK_EQ_INT(img.frames_reported, 1);
    const cu_image *one = cu_frame(&img, 1);
    CHECK(one && memcmp(one->pixels, live.px[1], W * H * 4) == 0);
    cu_free(&img);
    free(bytes);
    pthread_mutex_destroy(&live.mu);
}

int main(void)
{
    test_streams();
    test_swapchain();
    return th_exit();
}
