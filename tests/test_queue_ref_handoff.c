/*
 * UpdateSubresource, the copies and resolve hand the reference their
 * handle lookup took to the command they queue (kq_access_owned) instead
 * of taking a second one and dropping the first (docs/queue.md, "Command
 * slots"). Every way through that hand-over must leave exactly one
 * reference per queued command: this checks, with a counting allocator
 * (and under ASan, that nothing is used after it is freed), that
 * - resources destroyed while such commands are queued stay alive until
 *   they ran (the bytes read back are right) and are freed by kiln_finish;
 * - a copy within one resource (two subresources: the nodes merge, the
 *   second reference must go), an update split into several chunks (only
 *   the last takes the lookup's reference over; both row and piece-of-row
 *   splits), copy_resource and resolve leak nothing;
 * - calls that fail after the lookup (a full command ring or transfer
 *   ring that would deadlock) keep and drop the reference themselves, and
 *   a copy whose other handle is stale or 0 (both are looked up under one
 *   lock) holds neither.
 * ASYNC with 1 and 2 workers, and SERIAL.
 */
#include "count_alloc.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

enum { TRANSFER = 4096, TEX_W = 1024 }; /* a TEX_W row (4 KiB) > half the ring */

static kiln_texture tex(kiln_device *dev, uint32_t w, uint32_t h, uint32_t mips, kiln_usage usage,
                        uint32_t cpu, uint32_t samples, uint32_t bind)
{
    kiln_texture t = {0};
    kiln_texture2d_desc d = {.width = w,
                             .height = h,
                             .mip_levels = mips,
                             .format = KILN_FORMAT_R8G8B8A8_UNORM,
                             .usage = usage,
                             .bind_flags = bind,
                             .cpu_access = cpu,
                             .sample_count = samples};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &t), KILN_OK);
    return t;
}

/* Copies `sub` of `t` (w x h) to a staging texture and compares it with
 * `want` (tight rows). */
static void check_bytes(kiln_device *dev, kiln_context *ctx, kiln_resource r, uint32_t sub,
                        uint32_t w, uint32_t h, const uint8_t *want)
{
    kiln_texture st = tex(dev, w, h, 1, KILN_USAGE_STAGING, KILN_CPU_ACCESS_READ, 0, 0);
    kiln_box box = {0, 0, 0, w, h, 1};
    CHECK_RESULT(
        kiln_copy_subresource_region(ctx, kiln_texture_resource(st), 0, 0, 0, 0, r, sub, &box),
        KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(st), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    uint32_t wrong = 0;
    for (uint32_t y = 0; y < h; y++)
        wrong += memcmp((const uint8_t *)m.data + (size_t)y * m.row_pitch, want + (size_t)y * w * 4,
                        w * 4) != 0;
    CHECK_EQ_INT(wrong, 0);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(st), 0), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, st), KILN_OK);
}

static void run(kiln_exec_mode mode, uint32_t threads)
{
    counter cnt = COUNTER_INIT;
    kiln_device_desc desc = {.exec_mode = mode,
                             .num_threads = threads,
                             .transfer_ring_size = TRANSFER,
                             .command_ring_capacity = 8,
                             .log_fn = th_log_fn,
                             .allocator = COUNTER_ALLOCATOR(&cnt)};
    kiln_device *dev = NULL;
    CHECK_RESULT(kiln_device_create(&desc, &dev), KILN_OK);
    if (!dev)
        return;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    size_t before = counter_live(&cnt);

    /* Updates: one chunk, whole-row chunks, pieces of rows; each followed
     * by a copy out before the texture is destroyed, then read back. */
    uint8_t *img = malloc((size_t)TEX_W * 8 * 4);
    for (size_t i = 0; i < (size_t)TEX_W * 8 * 4; i++)
        img[i] = (uint8_t)(i * 7 + 3);
    kiln_texture a = tex(dev, TEX_W, 8, 2, KILN_USAGE_DEFAULT, 0, 0, KILN_BIND_SHADER_RESOURCE);
    kiln_texture keep = tex(dev, TEX_W, 8, 1, KILN_USAGE_DEFAULT, 0, 0, KILN_BIND_SHADER_RESOURCE);
    kiln_box small = {0, 0, 0, 4, 2, 1};    /* 32 bytes: one chunk */
    kiln_box rows = {0, 0, 0, 256, 8, 1};   /* 8 KiB of 1 KiB rows: whole-row chunks */
    kiln_box wide = {0, 0, 0, TEX_W, 8, 1}; /* 4 KiB rows: pieces of rows */
    CHECK_RESULT(
        kiln_update_subresource(ctx, kiln_texture_resource(a), 0, &wide, img, TEX_W * 4, 0),
        KILN_OK);
    CHECK_RESULT(
        kiln_update_subresource(ctx, kiln_texture_resource(a), 0, &rows, img, TEX_W * 4, 0),
        KILN_OK);
    CHECK_RESULT(
        kiln_update_subresource(ctx, kiln_texture_resource(a), 0, &small, img, TEX_W * 4, 0),
        KILN_OK);
    /* within one resource: mip 0 to mip 1 (the nodes merge) */
    kiln_box half = {0, 0, 0, TEX_W / 2, 4, 1};
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(a), 1, 0, 0, 0,
                                              kiln_texture_resource(a), 0, &half),
                 KILN_OK);
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(keep), 0, 0, 0, 0,
                                              kiln_texture_resource(a), 0, NULL),
                 KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, a), KILN_OK);
    check_bytes(dev, ctx, kiln_texture_resource(keep), 0, TEX_W, 8, img);

    /* A copy naming one stale handle looks both up under one lock and
     * holds neither reference afterwards (`a` is destroyed by now). */
    kiln_box one = {0, 0, 0, 4, 4, 1};
    CHECK_FAILS(kiln_copy_subresource_region(ctx, kiln_texture_resource(keep), 0, 0, 0, 0,
                                             kiln_texture_resource(a), 0, &one),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, kiln_texture_resource(a), 0, 0, 0, 0,
                                             kiln_texture_resource(keep), 0, &one),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_copy_resource(ctx, kiln_texture_resource(keep), (kiln_resource){0}),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_NULL);

    /* copy_resource and resolve, sources destroyed at once */
    kiln_texture c1 = tex(dev, TEX_W, 8, 1, KILN_USAGE_DEFAULT, 0, 0, KILN_BIND_SHADER_RESOURCE);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(c1), kiln_texture_resource(keep)),
                 KILN_OK);
    kiln_texture ms = tex(dev, 16, 16, 1, KILN_USAGE_DEFAULT, 0, 4, KILN_BIND_RENDER_TARGET);
    kiln_texture rs = tex(dev, 16, 16, 1, KILN_USAGE_DEFAULT, 0, 0, KILN_BIND_SHADER_RESOURCE);
    CHECK_RESULT(kiln_resolve_subresource(ctx, kiln_texture_resource(rs), 0,
                                          kiln_texture_resource(ms), 0, KILN_FORMAT_UNKNOWN),
                 KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, keep), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, ms), KILN_OK);
    check_bytes(dev, ctx, kiln_texture_resource(c1), 0, TEX_W, 8, img);
    CHECK_RESULT(kiln_destroy_texture(dev, c1), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, rs), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    CHECK_EQ_INT(counter_live(&cnt), before);

    {
        /* Failures after the lookup: a staging texture mapped by this
         * thread holds every command behind it. Copies out of it fill
         * the command ring, then the next copy cannot get a slot;
         * updates of a texture behind such a copy fill the transfer
         * ring, then the next update cannot get space. */
        kiln_texture sa = tex(dev, 16, 16, 1, KILN_USAGE_STAGING, KILN_CPU_ACCESS_WRITE, 0, 0);
        kiln_texture d = tex(dev, 16, 16, 1, KILN_USAGE_DEFAULT, 0, 0, KILN_BIND_SHADER_RESOURCE);
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(sa), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
        kiln_result r = KILN_OK;
        th_logs.quiet = 1;
        for (int i = 0; i < 64 && r == KILN_OK; i++)
            r = kiln_copy_resource(ctx, kiln_texture_resource(d), kiln_texture_resource(sa));
        CHECK_RESULT(r, KILN_E_WOULD_DEADLOCK);
        CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(sa), 0), KILN_OK);
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);

        CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(sa), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
        CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(d), kiln_texture_resource(sa)),
                     KILN_OK);
        kiln_box part = {0, 0, 0, 16, 16, 1}; /* 1 KiB blocks */
        r = KILN_OK;
        for (int i = 0; i < 64 && r == KILN_OK; i++)
            r = kiln_update_subresource(ctx, kiln_texture_resource(d), 0, &part, img, 16 * 4, 0);
        CHECK_RESULT(r, KILN_E_WOULD_DEADLOCK);
        th_logs.quiet = 0;
        CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(sa), 0), KILN_OK);
        CHECK_RESULT(kiln_destroy_texture(dev, sa), KILN_OK);
        CHECK_RESULT(kiln_destroy_texture(dev, d), KILN_OK);
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        CHECK_EQ_INT(counter_live(&cnt), before);
    }
    free(img);
    kiln_device_destroy(dev);
    CHECK_EQ_INT(cnt.live, 0);
}

int main(void)
{
    run(KILN_EXEC_ASYNC, 1);
    run(KILN_EXEC_ASYNC, 2);
    run(KILN_EXEC_SERIAL, 0);
    return th_exit();
}
