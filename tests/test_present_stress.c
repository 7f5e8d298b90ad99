/*
 * Present under load: a producer presents 1,000 frames (FIFO, MEMORY
 * target, 2 and 3 buffers) while the display thread consumes them. Each
 * frame is a clear whose color encodes its index plus a small
 * UpdateSubresource patch (no draw) whose place and texels encode it too;
 * the callback checks every pixel of every frame against its number and
 * records the sequence. No frame may be lost, duplicated, reordered or
 * carry another frame's pixels (a buffer reused before the display read
 * it, or displayed before its rendering completed).
 *
 * The consumer's speed varies (it sometimes yields, sometimes repeats its
 * check), so the producer meets both a free buffer and back-pressure. A
 * MAILBOX run checks its invariants under the same load. Meant to be
 * clean under ThreadSanitizer (-DKILN_SANITIZE=thread).
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "present_util.h"

#include <stdio.h>
#include <string.h>

#define W 32
#define H 16
#define FRAMES 1000

static void step(const char *name)
{
    printf("-- %s\n", name);
    fflush(stdout);
}

/* The callback varies its pace (decided by the frame number, so what the
 * consumer does is reproducible): it yields on some frames and checks
 * others twice (the second check goes to a scratch recorder). */
static pu_recorder g_scratch;

static void slow_cb(const kiln_frame *f, void *user)
{
    uint64_t n = f->frame_number;
    if (n % 7 == 0)
        sched_yield();
    if (n % 13 == 0)
        pu_frame_cb(f, &g_scratch);
    pu_frame_cb(f, user);
}

static kiln_swapchain *make(kiln_context *ctx, uint32_t nbuf, kiln_present_mode mode,
                            pu_recorder *rec)
{
    kiln_swapchain_desc d = {0};
    d.width = W;
    d.height = H;
    d.buffer_count = nbuf;
    d.mode = mode;
    d.winsys = KILN_WINSYS_MEMORY;
    d.frame_fn = slow_cb;
    d.frame_user = rec;
    kiln_swapchain *sc = NULL;
    CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
    return sc;
}

static void run_fifo(uint32_t nbuf, uint32_t threads)
{
    char name[96];
    snprintf(name, sizeof name, "FIFO, %u buffers, %u frames, %s workers", nbuf, FRAMES,
             threads ? "1" : "default");
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, FRAMES + 16, 1, 0);
    kiln_swapchain *sc = make(ctx, nbuf, KILN_PRESENT_FIFO, &rec);
    uint32_t failed_presents = 0;
    for (uint64_t i = 1; i <= FRAMES; i++)
        failed_presents += pu_render_present(dev, ctx, sc, i, 1, NULL) != KILN_OK;
    CHECK_EQ_INT(failed_presents, 0);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);

    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, FRAMES);
    CHECK_EQ_INT(s.displayed, FRAMES);
    CHECK_EQ_INT(s.dropped, 0);
    CHECK_EQ_INT(s.display_errors, 0);
    CHECK_EQ_INT(pu_count(&rec), FRAMES);
    /* The sequence: 1..FRAMES, each once, in order, with its own pixels. */
    uint32_t out_of_place = 0, bad_frames = 0, bad_size = 0;
    for (uint32_t i = 0; i < pu_count(&rec) && i < FRAMES + 16; i++) {
        pu_record r = pu_get(&rec, i);
        if (r.number != i + 1u) {
            if (out_of_place < 5)
                fprintf(stderr, "    delivery %u was frame %llu\n", i,
                        (unsigned long long)r.number);
            out_of_place++;
        }
        if (r.bad_pixels) {
            if (bad_frames < 5)
                fprintf(stderr, "    frame %llu: %u pixels differ\n", (unsigned long long)r.number,
                        r.bad_pixels);
            bad_frames++;
        }
        bad_size += r.w != W || r.h != H || r.format != KILN_FORMAT_R8G8B8A8_UNORM;
    }
    CHECK_EQ_INT(out_of_place, 0);
    CHECK_EQ_INT(bad_frames, 0);
    CHECK_EQ_INT(bad_size, 0);
    printf("   producer waited for a buffer %llu times\n", (unsigned long long)s.waits_no_buffer);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

static void run_mailbox(uint32_t nbuf)
{
    char name[96];
    snprintf(name, sizeof name, "MAILBOX, %u buffers, %u frames", nbuf, FRAMES);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, FRAMES + 16, 1, 0);
    kiln_swapchain *sc = make(ctx, nbuf, KILN_PRESENT_MAILBOX, &rec);
    uint32_t failed_presents = 0;
    for (uint64_t i = 1; i <= FRAMES; i++)
        failed_presents += pu_render_present(dev, ctx, sc, i, 1, NULL) != KILN_OK;
    CHECK_EQ_INT(failed_presents, 0);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, FRAMES);
    CHECK_EQ_INT(s.displayed + s.dropped, FRAMES);
    CHECK_EQ_INT(s.display_errors, 0);
    uint32_t n = pu_count(&rec);
    CHECK_EQ_INT(n, s.displayed);
    uint64_t last = 0;
    uint32_t not_increasing = 0, bad_frames = 0;
    for (uint32_t i = 0; i < n && i < FRAMES + 16; i++) {
        pu_record r = pu_get(&rec, i);
        not_increasing += r.number <= last;
        bad_frames += r.bad_pixels != 0;
        last = r.number;
    }
    CHECK_EQ_INT(not_increasing, 0);
    CHECK_EQ_INT(bad_frames, 0);
    CHECK_EQ_INT(last, FRAMES);
    printf("   displayed %llu, dropped %llu\n", (unsigned long long)s.displayed,
           (unsigned long long)s.dropped);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

int main(void)
{
    pu_recorder_init(&g_scratch, 0, 1, 0);
    run_fifo(2, 0);
    run_fifo(3, 0);
    run_fifo(2, 1);
    run_fifo(3, 1);
    run_mailbox(2);
    run_mailbox(3);
    pu_recorder_free(&g_scratch);
    return th_exit();
}
