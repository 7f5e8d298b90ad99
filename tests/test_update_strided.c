/*
 * kiln_update_subresource from rows at a pitch wider than the box (a region
 * of a larger CPU image): the producer packs the rows into the transfer
 * ring (docs/queue.md, "Strided uploads"), and every byte of the box must
 * land where a row-by-row copy puts it, none outside it.
 *
 * A 2,400 x 64 RGBA8 texture takes boxes of widths from 1 to 2,049 texels
 * (rows of 4 to 8,196 bytes: not multiples of 16, and past the packing's
 * stage), heights 1 to 64, pitches one byte, one texel, 60 bytes and a
 * whole row wider than the row, at positions that move with the case. A
 * CPU model takes the same rows; after each width's cases the texture is
 * read back and compared byte for byte. The source of each call is
 * allocated to exactly the bytes it may read (pitch * (h - 1) + row), so
 * ASan sees any over-read. On SERIAL, on ASYNC with 2 workers, and with
 * 64 KiB and 16 KiB transfer rings (a box larger than half of one is split
 * into chunks of rows; with 16 KiB, a row of 8,196 bytes into pieces of a
 * row, and one of 8,192 is a chunk of its own).
 */
#include "raster_util.h"

#include <stdio.h>

enum { TW = 2400, TH = 64 };

static uint32_t rng_state = 12345u;

static uint32_t next(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static void run(kiln_device *dev, const char *what)
{
    static const uint32_t widths[] = {1,   3,   4,   5,   31,   32,   33,   64,
                                      500, 511, 512, 513, 1024, 2047, 2048, 2049};
    static const uint32_t heights[] = {1, 2, 3, 17, 64};
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture2d_desc d = {.width = TW,
                             .height = TH,
                             .mip_levels = 1,
                             .array_size = 1,
                             .format = KILN_FORMAT_R8G8B8A8_UNORM,
                             .sample_count = 1,
                             .usage = KILN_USAGE_DEFAULT,
                             .bind_flags = KILN_BIND_SHADER_RESOURCE};
    kiln_texture tex = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &tex), KILN_OK);
    size_t size = (size_t)TW * TH * 4;
    uint8_t *model = calloc(size, 1), *img = malloc(size);
    if (!model || !img || !tex.id) {
        CHECK(0);
        free(model);
        free(img);
        return;
    }
    /* the texture starts as zeros: make it the model's */
    CHECK_RESULT(
        kiln_update_subresource(ctx, kiln_texture_resource(tex), 0, NULL, model, TW * 4, 0),
        KILN_OK);
    uint32_t bad_total = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        uint32_t w = widths[wi], row = w * 4;
        for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++) {
            uint32_t h = heights[hi];
            const uint32_t extras[4] = {1, 4, 60, row};
            for (int e = 0; e < 4; e++) {
                uint32_t pitch = row + extras[e];
                uint32_t x = (uint32_t)(wi * 131 + hi * 17 + (size_t)e * 29) % (TW - w + 1);
                uint32_t y = (uint32_t)(hi * 5 + (size_t)e * 3 + wi) % (TH - h + 1);
                size_t n = (size_t)pitch * (h - 1) + row; /* exactly what may be read */
                uint8_t *src = malloc(n);
                if (!src) {
                    CHECK(0);
                    continue;
                }
                for (size_t i = 0; i < n; i++)
                    src[i] = (uint8_t)next();
                kiln_box box = {x, y, 0, x + w, y + h, 1};
                CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(tex), 0, &box, src,
                                                     pitch, 0),
                             KILN_OK);
                for (uint32_t r = 0; r < h; r++)
                    memcpy(model + ((size_t)(y + r) * TW + x) * 4, src + (size_t)r * pitch, row);
                free(src); /* the call copied what it needs */
            }
        }
        if (!ru_read(dev, tex, 0, img)) {
            CHECK(0);
            break;
        }
        uint32_t bad = 0;
        for (size_t i = 0; i < size; i++)
            if (img[i] != model[i] && bad++ < 3)
                fprintf(stderr, "    %s, widths up to %u: byte %zu (x %zu, y %zu) is %u, want %u\n",
                        what, w, i, i / 4 % TW, i / 4 / TW, img[i], model[i]);
        bad_total += bad;
    }
    CHECK_EQ_INT(bad_total, 0);
    kiln_destroy_texture(dev, tex);
    free(model);
    free(img);
}

int main(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    run(dev, "serial");
    kiln_device_destroy(dev);
    dev = th_device(KILN_EXEC_ASYNC, 2);
    run(dev, "async");
    kiln_device_destroy(dev);
    kiln_device_desc desc = {
        .exec_mode = KILN_EXEC_ASYNC, .num_threads = 2, .transfer_ring_size = 64u << 10};
    dev = th_device_desc(desc);
    run(dev, "async, 64 KiB transfer ring");
    kiln_device_destroy(dev);
    desc.transfer_ring_size = 16u << 10;
    dev = th_device_desc(desc);
    run(dev, "async, 16 KiB transfer ring");
    kiln_device_destroy(dev);
    return th_exit();
}
