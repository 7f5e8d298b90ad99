/*
 * A command's references on its resources outlive its completion until
 * the producer takes its slot back (docs/queue.md, "Command slots"), so a
 * worker never writes a resource the producer reads. This proves the two
 * ends of that lifetime with a counting allocator (and, under ASan, that
 * nothing is used after it is freed):
 * - a resource destroyed while many small commands still name it stays
 *   alive until they have run: its bytes read back correctly through a
 *   copy queued before the destroy;
 * - once kiln_finish returns, every reference a completed command held is
 *   gone: live bytes are back to what they were before the resource was
 *   created, without destroying the device;
 * - the same on a SERIAL device, and there also without kiln_finish: a
 *   command queued after the destroy takes the slots back.
 */
#include "count_alloc.h"
#include "harness.h"

#include <string.h>

enum { BIG = 1 << 20, UPDATES = 3000 };

static void run(kiln_exec_mode mode, uint32_t threads)
{
    counter cnt = COUNTER_INIT;
    kiln_result dr;
    kiln_device *dev = counter_device(&cnt, mode, threads, &dr);
    CHECK_RESULT(dr, KILN_OK);
    if (!dev)
        return;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer staging, other;
    kiln_buffer_desc sd = {64, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
    CHECK_RESULT(kiln_create_buffer(dev, &sd, NULL, &staging), KILN_OK);
    kiln_buffer_desc od = {64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &od, NULL, &other), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    size_t before = counter_live(&cnt);

    kiln_buffer big;
    kiln_buffer_desc bd = {BIG, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &bd, NULL, &big), KILN_OK);
    CHECK(counter_live(&cnt) >= before + BIG);
    uint8_t bytes[64];
    for (uint32_t i = 0; i < UPDATES; i++) {
        memset(bytes, (int)(i & 0xff), sizeof bytes);
        kiln_box box = {0, 0, 0, 64, 1, 1};
        CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(big), 0, &box, bytes, 0, 0),
                     KILN_OK);
    }
    kiln_box first = {0, 0, 0, 64, 1, 1};
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_buffer_resource(staging), 0, 0, 0, 0,
                                              kiln_buffer_resource(big), 0, &first),
                 KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, big), KILN_OK);

    if (mode == KILN_EXEC_SERIAL) {
        /* Every command has run; one more (on another buffer) hands the
         * completed slots back and their references go. */
        memset(bytes, 7, sizeof bytes);
        CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(other), 0, NULL, bytes, 0, 0),
                     KILN_OK);
        CHECK_EQ_INT(counter_live(&cnt), before);
    }
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    CHECK_EQ_INT(counter_live(&cnt), before);

    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(staging), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    uint32_t wrong = 0;
    for (int b = 0; b < 64; b++)
        wrong += ((const uint8_t *)m.data)[b] != (uint8_t)((UPDATES - 1) & 0xff);
    CHECK_EQ_INT(wrong, 0);
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(staging), 0), KILN_OK);
    kiln_destroy_buffer(dev, staging);
    kiln_destroy_buffer(dev, other);
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
