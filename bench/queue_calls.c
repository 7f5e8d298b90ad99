/*
 * bench_queue_calls - a fixed stream of small commands for counting the
 * producer's instructions under callgrind (load-independent, unlike the
 * wall clock of bench_queue):
 *
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out bench/bench_queue_calls
 *   callgrind_annotate --inclusive=yes cg.out | grep '=> .*kiln_update_subresource'
 *
 * On an ASYNC device with kiln's default workers it issues BATCHES batches
 * of 256 64-byte UpdateSubresource calls into a DEFAULT buffer, then as
 * many 16x16 CopySubresourceRegion calls between RGBA8 textures (the
 * commands of bench_queue (a)), with an untimed kiln_finish after each
 * batch. The inclusive cost of kiln_update_subresource (or
 * kiln_copy_subresource_region) at its call site divided by the number of
 * calls is the producer's instructions per command, the occasional batch
 * hand-over and slot refill included. It prints nothing but the count.
 *
 * Usage: bench_queue_calls [BATCHES]   (default 40: 10,240 calls of each)
 */
#include "kiln.h"

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        kiln_result r_ = (call);                                                                   \
        if (r_ != KILN_OK) {                                                                       \
            fprintf(stderr, "bench_queue_calls: %s failed: %s\n", #call, kiln_result_string(r_));  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const unsigned char payload64[64] = {1, 2, 3};

static void updates(kiln_context *ctx, kiln_buffer buf, uint32_t n, uint32_t base)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off = ((base + i) * 64u) % 65536u;
        kiln_box box = {off, 0, 0, off + 64, 1, 1};
        CHECK(kiln_update_subresource(ctx, kiln_buffer_resource(buf), 0, &box, payload64, 0, 0));
    }
}

static void copies(kiln_context *ctx, kiln_texture dst, kiln_texture src, uint32_t n, uint32_t base)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cells = 16, k = base + i;
        uint32_t sx = (k % cells) * 16, sy = (k / cells % cells) * 16;
        uint32_t dx = ((k + 7) % cells) * 16, dy = ((k / cells + 3) % cells) * 16;
        kiln_box box = {sx, sy, 0, sx + 16, sy + 16, 1};
        CHECK(kiln_copy_subresource_region(ctx, kiln_texture_resource(dst), 0, dx, dy, 0,
                                           kiln_texture_resource(src), 0, &box));
    }
}

int main(int argc, char **argv)
{
    uint32_t batches = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 40;
    kiln_device *dev;
    CHECK(kiln_device_create(&(kiln_device_desc){.exec_mode = KILN_EXEC_ASYNC}, &dev));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer buf;
    CHECK(kiln_create_buffer(
        dev, &(kiln_buffer_desc){.size = 65536, .bind_flags = KILN_BIND_VERTEX_BUFFER}, NULL,
        &buf));
    kiln_texture2d_desc td = {.width = 256,
                              .height = 256,
                              .mip_levels = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_SHADER_RESOURCE};
    kiln_texture src, dst;
    CHECK(kiln_create_texture2d(dev, &td, NULL, &src));
    CHECK(kiln_create_texture2d(dev, &td, NULL, &dst));
    for (uint32_t b = 0; b < batches; b++) {
        updates(ctx, buf, 256, b * 256);
        CHECK(kiln_finish(ctx));
    }
    for (uint32_t b = 0; b < batches; b++) {
        copies(ctx, dst, src, 256, b * 256);
        CHECK(kiln_finish(ctx));
    }
    CHECK(kiln_destroy_texture(dev, src));
    CHECK(kiln_destroy_texture(dev, dst));
    CHECK(kiln_destroy_buffer(dev, buf));
    kiln_device_destroy(dev);
    printf("%u updates, %u copies\n", batches * 256, batches * 256);
    return 0;
}
