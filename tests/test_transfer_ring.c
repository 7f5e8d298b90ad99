/*
 * test_transfer_ring: uploads far larger than the transfer ring (seed 000)
 * arrive intact while the ring's memory stays bounded.
 *
 * With an 8 KiB ring, one texture upload and one buffer upload of 64 times
 * the ring, plus hundreds of small uploads over them and over smaller
 * resources, must leave exactly the bytes a plain C model computes; the
 * statistics must show transfer_ring_peak <= the ring size, bytes_uploaded
 * equal to the bytes handed to UpdateSubresource, and the large uploads
 * split into at least ceil(bytes / (ring / 2)) chunks. A texture whose
 * single row is larger than half a 4 KiB ring is split within rows.
 * The caller's memory is scribbled over right after every call: the data
 * must have been copied before the call returned.
 *
 * Runs in SERIAL, ASYNC with one worker (where the producer typically waits
 * for ring space; reported, not asserted) and ASYNC with three.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

typedef struct target {
    kiln_resource res;
    int is_tex;
    uint32_t w, h, bpp, mips; /* buffers: w = size, h = 1 */
    kiln_texture2d_desc td;
    kiln_buffer_desc bd;
    uint8_t *model; /* subresources tightly packed, mip after mip */
    size_t off[16];
} target;

static uint64_t expected_bytes;

static uint32_t mip_w(const target *t, uint32_t m) { return t->w >> m ? t->w >> m : 1; }
static uint32_t mip_h(const target *t, uint32_t m) { return t->h >> m ? t->h >> m : 1; }

static void fill(th_rng *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(th_next(r) >> 56);
}

static target make_tex(kiln_device *dev, uint32_t w, uint32_t h, uint32_t mips, kiln_format f,
                       uint32_t bpp)
{
    target t;
    memset(&t, 0, sizeof t);
    t.is_tex = 1;
    t.w = w, t.h = h, t.bpp = bpp, t.mips = mips;
    t.td.width = w;
    t.td.height = h;
    t.td.mip_levels = mips;
    t.td.format = f;
    t.td.bind_flags = KILN_BIND_SHADER_RESOURCE;
    kiln_texture tex = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &t.td, NULL, &tex), KILN_OK);
    t.res = kiln_texture_resource(tex);
    size_t off = 0;
    for (uint32_t m = 0; m < mips; m++) {
        t.off[m] = off;
        off += (size_t)mip_w(&t, m) * mip_h(&t, m) * bpp;
    }
    t.model = calloc(off, 1);
    return t;
}

static target make_buf(kiln_device *dev, uint32_t size)
{
    target t;
    memset(&t, 0, sizeof t);
    t.w = size, t.h = 1, t.bpp = 1, t.mips = 1;
    t.bd.size = size;
    t.bd.bind_flags = KILN_BIND_VERTEX_BUFFER;
    kiln_buffer b = {0};
    CHECK_RESULT(kiln_create_buffer(dev, &t.bd, NULL, &b), KILN_OK);
    t.res = kiln_buffer_resource(b);
    t.model = calloc(size, 1);
    return t;
}

/* Uploads `box` (NULL: whole) of mip `m` from random data with `pitch`
 * (0: tight), scribbles over the data after the call, updates the model.
 * Returns the upload_chunks the call added. */
static uint64_t upload(kiln_device *dev, target *t, uint32_t m, const kiln_box *box, uint32_t pitch,
                       th_rng *rng)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_box b = box ? *box : (kiln_box){0, 0, 0, mip_w(t, m), mip_h(t, m), 1};
    uint32_t rb = (b.right - b.left) * t->bpp, rows = b.bottom - b.top;
    uint32_t p = pitch ? pitch : rb;
    size_t n = (size_t)p * (rows - 1) + rb;
    uint8_t *data = malloc(n);
    fill(rng, data, n);
    kiln_device_stats s0, s1;
    kiln_device_get_stats(dev, &s0);
    kiln_result r = kiln_update_subresource(ctx, t->res, m, box, data, pitch, 0);
    CHECK_RESULT(r, KILN_OK);
    kiln_device_get_stats(dev, &s1);
    if (r == KILN_OK) {
        uint32_t mw = mip_w(t, m);
        for (uint32_t y = 0; y < rows; y++)
            memcpy(t->model + t->off[m] + ((size_t)(b.top + y) * mw + b.left) * t->bpp,
                   data + (size_t)y * p, rb);
        expected_bytes += (uint64_t)rb * rows;
    }
    memset(data, 0xee, n); /* the call copied it; the app may reuse it */
    free(data);
    return s1.upload_chunks - s0.upload_chunks;
}

/* Copies into a STAGING twin and compares every byte with the model. */
static void verify(kiln_device *dev, target *t, const char *name)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_resource st = {0};
    if (t->is_tex) {
        kiln_texture2d_desc d = t->td;
        d.usage = KILN_USAGE_STAGING;
        d.bind_flags = 0;
        kiln_texture x = {0};
        CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &x), KILN_OK);
        st = kiln_texture_resource(x);
    } else {
        kiln_buffer_desc d = t->bd;
        d.usage = KILN_USAGE_STAGING;
        d.bind_flags = 0;
        kiln_buffer x = {0};
        CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &x), KILN_OK);
        st = kiln_buffer_resource(x);
    }
    CHECK_RESULT(kiln_copy_resource(ctx, st, t->res), KILN_OK);
    for (uint32_t m = 0; m < t->mips; m++) {
        kiln_mapped_subresource map;
        kiln_result r = kiln_map(ctx, st, m, KILN_MAP_READ, 0, &map);
        CHECK_RESULT(r, KILN_OK);
        if (r != KILN_OK)
            continue;
        uint32_t w = mip_w(t, m), h = mip_h(t, m), rb = w * t->bpp;
        uint32_t pitch = t->is_tex ? map.row_pitch : rb;
        long bad = -1;
        for (uint32_t y = 0; y < h && bad < 0; y++) {
            const uint8_t *g = (const uint8_t *)map.data + (size_t)y * pitch;
            const uint8_t *e = t->model + t->off[m] + (size_t)y * rb;
            if (memcmp(g, e, rb) != 0) {
                uint32_t x = 0;
                while (g[x] == e[x])
                    x++;
                bad = (long)y * rb + x;
                fprintf(stderr,
                        "    %s mip %u: first wrong byte at row %u byte %u: 0x%02x, "
                        "expected 0x%02x\n",
                        name, m, y, x, g[x], e[x]);
            }
        }
        th_check(bad < 0, "every uploaded byte arrived", __FILE__, __LINE__);
        CHECK_RESULT(kiln_unmap(ctx, st, m), KILN_OK);
    }
    if (t->is_tex)
        CHECK_RESULT(kiln_destroy_texture(dev, (kiln_texture){st.id}), KILN_OK);
    else
        CHECK_RESULT(kiln_destroy_buffer(dev, (kiln_buffer){st.id}), KILN_OK);
}

static kiln_device *ring_device(kiln_exec_mode mode, uint32_t threads, uint32_t ring,
                                uint32_t capacity)
{
    kiln_device_desc d = {0};
    d.exec_mode = mode;
    d.num_threads = threads;
    d.transfer_ring_size = ring;
    d.command_ring_capacity = capacity;
    return th_device_desc(d);
}

static uint64_t min_chunks(uint64_t bytes, uint32_t ring)
{
    uint64_t half = ring / 2;
    return (bytes + half - 1) / half;
}

/* 64 x ring through a texture and a buffer, plus many small uploads. */
static void test_large_and_small(kiln_exec_mode mode, uint32_t threads, uint32_t capacity,
                                 const char *name)
{
    const uint32_t ring = 8192;
    kiln_device *dev = ring_device(mode, threads, ring, capacity);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    th_rng rng = {0x5eed0000ull + threads * 7 + capacity};
    expected_bytes = 0;

    /* 512 x 256 RGBA8 = 512 KiB = 64 rings. */
    target big = make_tex(dev, 512, 256, 2, KILN_FORMAT_R8G8B8A8_UNORM, 4);
    target buf = make_buf(dev, 64 * ring);
    target small_tex = make_tex(dev, 37, 29, 3, KILN_FORMAT_R32G32_FLOAT, 8);
    target small_buf = make_buf(dev, 1001);

    /* One upload of 64 x the ring, from rows with padding between them. */
    uint64_t chunks = upload(dev, &big, 0, NULL, 512 * 4 + 52, &rng);
    printf("  %s: 512 KiB texture upload in %llu chunks\n", name, (unsigned long long)chunks);
    CHECK(chunks > 1);
    CHECK(chunks >= min_chunks(512ull * 256 * 4, ring));
    chunks = upload(dev, &buf, 0, NULL, 0, &rng);
    printf("  %s: 512 KiB buffer upload in %llu chunks\n", name, (unsigned long long)chunks);
    CHECK(chunks > 1);
    CHECK(chunks >= min_chunks(64ull * ring, ring));
    /* An unaligned buffer box of nearly the same size. */
    kiln_box bb = {3, 0, 0, 64 * ring - 5, 1, 1};
    chunks = upload(dev, &buf, 0, &bb, 0, &rng);
    CHECK(chunks >= min_chunks(64ull * ring - 8, ring));

    /* Many small uploads, over the big ones (write after write) and over
     * small resources; every size below half the ring is one chunk. */
    for (int i = 0; i < 600; i++) {
        target *t = i % 4 == 0 ? &big : i % 4 == 1 ? &buf : i % 4 == 2 ? &small_tex : &small_buf;
        uint32_t m = th_below(&rng, t->mips);
        uint32_t w = mip_w(t, m), h = mip_h(t, m);
        kiln_box b;
        b.left = th_below(&rng, w);
        b.right =
            b.left + 1 + th_below(&rng, w - b.left < 300 / t->bpp ? w - b.left : 300 / t->bpp);
        b.top = th_below(&rng, h);
        b.bottom = b.top + 1 + th_below(&rng, h - b.top < 4 ? h - b.top : 4);
        b.front = 0;
        b.back = 1;
        uint32_t rb = (b.right - b.left) * t->bpp;
        uint32_t pitch = t->is_tex && th_below(&rng, 2) ? rb + th_below(&rng, 64) : 0;
        chunks = upload(dev, t, m, &b, pitch, &rng);
        if ((uint64_t)rb * (b.bottom - b.top) <= ring / 2)
            CHECK_EQ_INT(chunks, 1);
    }
    /* And one more 64 x ring upload on top of all that. */
    chunks = upload(dev, &big, 0, NULL, 0, &rng);
    CHECK(chunks >= min_chunks(512ull * 256 * 4, ring));

    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_stats st;
    CHECK_RESULT(kiln_device_get_stats(dev, &st), KILN_OK);
    printf("  %s: %llu bytes in %llu chunks, ring peak %llu of %u, %llu waits for ring space, "
           "%llu for command slots\n",
           name, (unsigned long long)st.bytes_uploaded, (unsigned long long)st.upload_chunks,
           (unsigned long long)st.transfer_ring_peak, ring,
           (unsigned long long)st.waits_transfer_full, (unsigned long long)st.waits_ring_full);
    CHECK_EQ_INT(st.bytes_uploaded, expected_bytes);
    CHECK(st.transfer_ring_peak <= ring);
    CHECK(st.transfer_ring_peak > 0);
    CHECK_EQ_INT(st.commands_in_flight, 0);

    verify(dev, &big, "512x256 texture");
    verify(dev, &buf, "512 KiB buffer");
    verify(dev, &small_tex, "37x29 texture");
    verify(dev, &small_buf, "1001-byte buffer");
    kiln_device_get_stats(dev, &st);
    CHECK(st.transfer_ring_peak <= ring);
    kiln_device_destroy(dev);
    free(big.model);
    free(buf.model);
    free(small_tex.model);
    free(small_buf.model);
}

/* A texture whose single row (8192 RGBA32F texels = 128 KiB) is 64 times
 * half of a 4 KiB ring: each row must be split into pieces. */
static void test_wide_rows(kiln_exec_mode mode, uint32_t threads, const char *name)
{
    const uint32_t ring = 4096;
    kiln_device *dev = ring_device(mode, threads, ring, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    th_rng rng = {0x3141592653ull + threads};
    expected_bytes = 0;
    target t = make_tex(dev, 8192, 3, 1, KILN_FORMAT_R32G32B32A32_FLOAT, 16);
    const uint32_t rb = 8192 * 16;

    uint64_t chunks = upload(dev, &t, 0, NULL, rb + 16 * 3, &rng);
    printf("  %s: 3 rows of 128 KiB in %llu chunks\n", name, (unsigned long long)chunks);
    CHECK(chunks > 3);
    CHECK(chunks >= 3 * min_chunks(rb, ring));
    /* A partial box with odd edges, inside one row and across rows. */
    kiln_box b1 = {101, 1, 0, 8000, 2, 1};
    chunks = upload(dev, &t, 0, &b1, 0, &rng);
    CHECK(chunks >= min_chunks((8000 - 101) * 16ull, ring));
    kiln_box b2 = {7, 0, 0, 8191, 3, 1};
    chunks = upload(dev, &t, 0, &b2, (8191 - 7) * 16 + 5, &rng);
    CHECK(chunks >= 3 * min_chunks((8191 - 7) * 16ull, ring));
    kiln_box b3 = {8190, 2, 0, 8192, 3, 1}; /* a tiny one at the far corner */
    CHECK_EQ_INT(upload(dev, &t, 0, &b3, 0, &rng), 1);

    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_stats st;
    CHECK_RESULT(kiln_device_get_stats(dev, &st), KILN_OK);
    printf("  %s: ring peak %llu of %u, %llu waits for ring space\n", name,
           (unsigned long long)st.transfer_ring_peak, ring,
           (unsigned long long)st.waits_transfer_full);
    CHECK_EQ_INT(st.bytes_uploaded, expected_bytes);
    CHECK(st.transfer_ring_peak <= ring);
    verify(dev, &t, "8192x3 RGBA32F texture");
    kiln_device_destroy(dev);
    free(t.model);
}

int main(void)
{
    th_logs.quiet = 1;
    printf("large and small uploads, 8 KiB ring:\n");
    test_large_and_small(KILN_EXEC_SERIAL, 0, 0, "SERIAL");
    test_large_and_small(KILN_EXEC_ASYNC, 1, 0, "ASYNC 1 thread");
    test_large_and_small(KILN_EXEC_ASYNC, 3, 0, "ASYNC 3 threads");
    test_large_and_small(KILN_EXEC_ASYNC, 2, 3, "ASYNC 2 threads, 3 command slots");
    test_large_and_small(KILN_EXEC_SERIAL, 0, 2, "SERIAL, 2 command slots");
    printf("rows wider than half a 4 KiB ring:\n");
    test_wide_rows(KILN_EXEC_SERIAL, 0, "SERIAL");
    test_wide_rows(KILN_EXEC_ASYNC, 1, "ASYNC 1 thread");
    test_wide_rows(KILN_EXEC_ASYNC, 3, "ASYNC 3 threads");
    CHECK_EQ_INT(th_log_count(), 0);
    return th_exit();
}
