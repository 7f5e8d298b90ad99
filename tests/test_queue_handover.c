/*
 * Full batches of small commands reach the scheduler without the mutex
 * (docs/queue.md, "Batches"): the producer pushes them on its context's
 * handed list and a worker, a helping thread or the context's next
 * synchronizing call schedules them. This checks that nothing about the
 * stream's meaning changes, with two producer threads (the immediate
 * context and a created one) pushing at once while the workers take:
 * - each thread streams thousands of 64-byte updates and region copies
 *   among its own four DEFAULT buffers (every batch fills and is handed
 *   over) and compares them with a CPU model through a STAGING copy and
 *   Map, which waits only for the copy;
 * - a fence inserted after a stretch of handed batches covers them: once
 *   kiln_fence_wait returns, Map with DO_NOT_WAIT of the staging copy
 *   queued before the fence succeeds at once and holds the model's bytes;
 * - kiln_flush then kiln_finish, and destroying the created context, run
 *   every handed batch.
 * ASYNC with 1 and 2 workers, and SERIAL (which never hands over: the
 * reference). KILN_HANDOVER_ITERS sets the commands per thread.
 */
#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { NBUF = 4, SIZE = 4096 };

typedef struct stream {
    kiln_device *dev;
    kiln_context *ctx;
    uint64_t seed;
    uint32_t iters;
    uint32_t checks, fence_checks;
    int failed; /* CHECK is thread-safe enough for counting, but keep details here */
} stream;

static void compare(stream *s, kiln_buffer staging, const uint8_t *want, uint32_t flags,
                    const char *what)
{
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(s->ctx, kiln_buffer_resource(staging), 0, KILN_MAP_READ, flags, &m);
    if (r != KILN_OK) {
        fprintf(stderr, "    %s: map returned %s\n", what, kiln_result_string(r));
        s->failed++;
        return;
    }
    if (memcmp(m.data, want, SIZE) != 0) {
        fprintf(stderr, "    %s: bytes differ from the model\n", what);
        s->failed++;
    }
    kiln_unmap(s->ctx, kiln_buffer_resource(staging), 0);
}

static void *run_stream(void *arg)
{
    stream *s = arg;
    th_rng rng = {s->seed};
    kiln_buffer buf[NBUF], staging;
    static const kiln_buffer_desc bd = {SIZE, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    static const kiln_buffer_desc sd = {SIZE, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
    uint8_t(*model)[SIZE] = calloc(NBUF, SIZE);
    for (int k = 0; k < NBUF; k++)
        if (kiln_create_buffer(s->dev, &bd, NULL, &buf[k]) != KILN_OK)
            s->failed++;
    if (kiln_create_buffer(s->dev, &sd, NULL, &staging) != KILN_OK)
        s->failed++;
    uint8_t bytes[64];
    for (uint32_t i = 1; i <= s->iters && !s->failed; i++) {
        uint32_t op = th_below(&rng, 8);
        if (op < 5) { /* 64 bytes into one buffer */
            uint32_t k = th_below(&rng, NBUF), off = th_below(&rng, (SIZE - 64) / 4) * 4;
            for (int b = 0; b < 64; b++)
                bytes[b] = (uint8_t)th_next(&rng);
            kiln_box box = {off, 0, 0, off + 64, 1, 1};
            if (kiln_update_subresource(s->ctx, kiln_buffer_resource(buf[k]), 0, &box, bytes, 0,
                                        0) != KILN_OK)
                s->failed++;
            memcpy(model[k] + off, bytes, 64);
        } else { /* 4..256 bytes from one buffer to another */
            uint32_t from = th_below(&rng, NBUF), to = (from + 1 + th_below(&rng, NBUF - 1)) % NBUF;
            uint32_t len = 4 + th_below(&rng, 64) * 4;
            uint32_t so = th_below(&rng, (SIZE - len) / 4 + 1) * 4,
                     dof = th_below(&rng, (SIZE - len) / 4 + 1) * 4;
            kiln_box box = {so, 0, 0, so + len, 1, 1};
            if (kiln_copy_subresource_region(s->ctx, kiln_buffer_resource(buf[to]), 0, dof, 0, 0,
                                             kiln_buffer_resource(buf[from]), 0, &box) != KILN_OK)
                s->failed++;
            memcpy(model[to] + dof, model[from] + so, len);
        }
        if (i % 997 == 0) { /* through Map, which waits for the copy */
            uint32_t k = th_below(&rng, NBUF);
            kiln_copy_resource(s->ctx, kiln_buffer_resource(staging), kiln_buffer_resource(buf[k]));
            compare(s, staging, model[k], 0, "map");
            s->checks++;
        } else if (i % 1499 == 0) { /* through a fence, then a map that must not wait */
            uint32_t k = th_below(&rng, NBUF);
            kiln_copy_resource(s->ctx, kiln_buffer_resource(staging), kiln_buffer_resource(buf[k]));
            /* more handed batches behind the copy, on the other buffers */
            for (int j = 0; j < 40; j++) {
                uint32_t o = (k + 1 + (uint32_t)j % (NBUF - 1)) % NBUF,
                         off = th_below(&rng, (SIZE - 64) / 4) * 4;
                memset(bytes, j, sizeof bytes);
                kiln_box box = {off, 0, 0, off + 64, 1, 1};
                kiln_update_subresource(s->ctx, kiln_buffer_resource(buf[o]), 0, &box, bytes, 0, 0);
                memcpy(model[o] + off, bytes, 64);
            }
            kiln_fence f;
            if (kiln_context_insert_fence(s->ctx, &f) != KILN_OK ||
                kiln_fence_wait(s->dev, f, UINT64_MAX) != KILN_OK) {
                s->failed++;
                break;
            }
            kiln_destroy_fence(s->dev, f);
            compare(s, staging, model[k], KILN_MAP_FLAG_DO_NOT_WAIT, "map after fence");
            s->fence_checks++;
        }
        if (i % 4099 == 0)
            kiln_flush(s->ctx);
    }
    kiln_finish(s->ctx);
    for (int k = 0; k < NBUF && !s->failed; k++) {
        kiln_copy_resource(s->ctx, kiln_buffer_resource(staging), kiln_buffer_resource(buf[k]));
        compare(s, staging, model[k], 0, "final");
    }
    for (int k = 0; k < NBUF; k++)
        kiln_destroy_buffer(s->dev, buf[k]);
    kiln_destroy_buffer(s->dev, staging);
    free(model);
    return NULL;
}

static void run(kiln_exec_mode mode, uint32_t threads, uint32_t iters)
{
    kiln_device_desc d = {.exec_mode = mode, .num_threads = threads};
    kiln_device *dev = th_device_desc(d);
    stream s[2] = {
        {.dev = dev, .ctx = kiln_device_immediate_context(dev), .seed = 11, .iters = iters},
        {.dev = dev, .seed = 23, .iters = iters}};
    CHECK_RESULT(kiln_context_create(dev, &s[1].ctx), KILN_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_stream, &s[1]) == 0);
    run_stream(&s[0]);
    pthread_join(t, NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(s[i].failed, 0);
        CHECK(s[i].checks >= iters / 997 - 1);
        CHECK(s[i].fence_checks >= 1);
    }
    CHECK_RESULT(kiln_context_destroy(s[1].ctx), KILN_OK);
    kiln_device_stats st;
    CHECK_RESULT(kiln_device_get_stats(dev, &st), KILN_OK);
    CHECK_EQ_INT(st.commands_in_flight, 0);
    kiln_device_destroy(dev);
}

int main(void)
{
    const char *e = getenv("KILN_HANDOVER_ITERS");
    uint32_t iters = e ? (uint32_t)strtoul(e, NULL, 10) : 20000;
    run(KILN_EXEC_ASYNC, 1, iters);
    run(KILN_EXEC_ASYNC, 2, iters);
    run(KILN_EXEC_SERIAL, 0, iters);
    return th_exit();
}
