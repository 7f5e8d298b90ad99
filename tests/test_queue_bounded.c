/*
 * A long stream of small commands runs in bounded memory: 1,000,000
 * commands (64-byte UpdateSubresource calls and 16x16 copies, alternating
 * over four buffers and four textures, a kiln_flush now and then, never a
 * finish until the end) on an ASYNC device whose allocator counts every
 * byte. The command ring and the transfer ring are fixed at creation and
 * batches hold at most 16 commands, so what the stream allocates must not
 * grow with its length: the peak of live bytes after 1,000,000 commands
 * equals the peak after the first 100,000 (within one 64 KiB slack for
 * allocator-sized storages), every byte is freed with the device, and the
 * last bytes written are the ones read back. On 1 and 2 workers.
 */
#include "count_alloc.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { NBUF = 4, BUF_SIZE = 4096, TEX = 64, TOTAL = 1000000, FIRST = 100000 };

static void run(uint32_t threads)
{
    counter cnt = COUNTER_INIT;
    kiln_result dr;
    kiln_device *dev = counter_device(&cnt, KILN_EXEC_ASYNC, threads, &dr);
    CHECK_RESULT(dr, KILN_OK);
    if (!dev)
        return;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer buf[NBUF];
    kiln_texture tex[NBUF];
    for (int i = 0; i < NBUF; i++) {
        kiln_buffer_desc bd = {BUF_SIZE, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
        CHECK_RESULT(kiln_create_buffer(dev, &bd, NULL, &buf[i]), KILN_OK);
        kiln_texture2d_desc td = {TEX, TEX, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT,
                                  KILN_BIND_SHADER_RESOURCE, 0, 0};
        CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &tex[i]), KILN_OK);
    }
    uint8_t payload[64];
    size_t peak_first = 0;
    kiln_result bad = KILN_OK;
    for (uint32_t n = 0; n < TOTAL; n++) {
        kiln_result r;
        if (n % 2 == 0) {
            uint32_t k = n / 2, off = (k * 64) % BUF_SIZE;
            for (int i = 0; i < 64; i++)
                payload[i] = (uint8_t)(k + (uint32_t)i);
            kiln_box box = {off, 0, 0, off + 64, 1, 1};
            r = kiln_update_subresource(ctx, kiln_buffer_resource(buf[k % NBUF]), 0, &box, payload,
                                        0, 0);
        } else {
            uint32_t k = n / 2, sx = (k % 4) * 16, dy = (k / 4 % 4) * 16;
            kiln_box box = {sx, 0, 0, sx + 16, 16, 1};
            r = kiln_copy_subresource_region(ctx, kiln_texture_resource(tex[k % NBUF]), 0, 0, dy,
                                             0, kiln_texture_resource(tex[(k + 1) % NBUF]), 0,
                                             &box);
        }
        if (r != KILN_OK && bad == KILN_OK)
            bad = r;
        if (n % 4096 == 4095)
            CHECK_RESULT(kiln_flush(ctx), KILN_OK);
        if (n + 1 == FIRST)
            peak_first = counter_peak(&cnt);
    }
    CHECK_RESULT(bad, KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    size_t peak_all = counter_peak(&cnt);
    printf("  %u worker(s): peak live bytes %zu after %d commands, %zu after %d\n", threads,
           peak_first, FIRST, peak_all, TOTAL);
    CHECK(peak_all <= peak_first + 65536);

    /* The last update of each buffer is what reads back. */
    for (int i = 0; i < NBUF; i++) {
        kiln_buffer_desc sd = {BUF_SIZE, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
        kiln_buffer st;
        CHECK_RESULT(kiln_create_buffer(dev, &sd, NULL, &st), KILN_OK);
        CHECK_RESULT(kiln_copy_resource(ctx, kiln_buffer_resource(st), kiln_buffer_resource(buf[i])),
                     KILN_OK);
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(st), 0, KILN_MAP_READ, 0, &m), KILN_OK);
        /* the last k with k % NBUF == i writes 64 bytes at (k * 64) % BUF_SIZE */
        uint32_t last = TOTAL / 2 - 1;
        while (last % NBUF != (uint32_t)i)
            last--;
        uint32_t off = (last * 64) % BUF_SIZE;
        uint32_t wrong = 0;
        for (int b = 0; b < 64; b++)
            wrong += ((const uint8_t *)m.data)[off + (uint32_t)b] != (uint8_t)(last + (uint32_t)b);
        CHECK_EQ_INT(wrong, 0);
        CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(st), 0), KILN_OK);
        kiln_destroy_buffer(dev, st);
    }
    for (int i = 0; i < NBUF; i++) {
        kiln_destroy_buffer(dev, buf[i]);
        kiln_destroy_texture(dev, tex[i]);
    }
    kiln_device_destroy(dev);
    CHECK_EQ_INT(cnt.live, 0);
}

int main(void)
{
    run(1);
    run(2);
    return th_exit();
}
