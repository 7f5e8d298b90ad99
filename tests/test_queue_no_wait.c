/*
 * The producer never waits while nothing conflicts and the command ring
 * has room (DESIGN invariant 3), proven without timing. A test gate holds
 * a buffer; a stream of small UpdateSubresource calls to that buffer
 * queues behind it (so none can complete), and another stream to
 * independent buffers runs beside it. The device statistics count every
 * wait by cause:
 * - with the ring's configured capacity C, the first C - 1 commands (the
 *   gate holds one slot) are queued with zero waits of any kind;
 * - the C-th blocks once for a slot (waits_ring_full == 1) until a helper
 *   thread, which sees that wait in the statistics, opens the gate;
 * - after that the stream ends with exactly that one wait, and every byte
 *   is the last one written.
 * On ASYNC devices with 1 and 2 workers (SERIAL runs commands inline: its
 * ring never fills).
 */
#include "api/test_hooks.h"
#include "harness.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define CAP 64u

typedef struct opener {
    kiln_device *dev;
    kiln_test_gate *gate;
} opener;

static void *open_when_full(void *arg)
{
    opener *o = arg;
    for (;;) {
        kiln_device_stats st;
        kiln_device_get_stats(o->dev, &st);
        if (st.waits_ring_full >= 1)
            break;
        sched_yield();
    }
    kiln_test_gate_open(o->gate);
    return NULL;
}

static void run(uint32_t threads)
{
    kiln_device *dev = th_device_desc((kiln_device_desc){.num_threads = threads, .command_ring_capacity = CAP});
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer held, free_buf;
    kiln_buffer_desc bd = {.size = 64};
    CHECK_RESULT(kiln_create_buffer(dev, &bd, NULL, &held), KILN_OK);
    CHECK_RESULT(kiln_create_buffer(dev, &bd, NULL, &free_buf), KILN_OK);
    kiln_test_gate *gate;
    CHECK_RESULT(kiln_test_gate_create(dev, &gate), KILN_OK);
    kiln_resource r = kiln_buffer_resource(held);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, gate, &r, &w, 1), KILN_OK);
    kiln_test_gate_wait_entered(gate, 1);

    uint8_t bytes[64];
    kiln_device_stats st;
    /* Independent work first: batches that fit beside the gate run,
     * complete and give their slots back, never waiting. */
    for (uint32_t b = 0; b < 4; b++) {
        for (uint32_t i = 0; i < CAP - 2; i++) {
            memset(bytes, (int)i, sizeof bytes);
            CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(free_buf), 0, NULL, bytes, 0, 0), KILN_OK);
        }
        /* Until they completed (kiln_finish would wait for the gate too;
         * kiln_flush hands the last small commands of the batch over). */
        CHECK_RESULT(kiln_flush(ctx), KILN_OK);
        do {
            kiln_device_get_stats(dev, &st);
            sched_yield();
        } while (st.commands_in_flight > 1);
    }
    CHECK(st.waits_ring_full == 0 && st.waits_transfer_full == 0 && st.waits_map_conflict == 0);
    for (uint32_t i = 0; i < CAP - 1; i++) {
        memset(bytes, (int)(i + 1), sizeof bytes);
        CHECK_RESULT(kiln_update_subresource(ctx, r, 0, NULL, bytes, 0, 0), KILN_OK);
    }
    kiln_device_get_stats(dev, &st);
    CHECK(st.waits_ring_full == 0 && st.waits_transfer_full == 0 && st.waits_map_conflict == 0);
    CHECK(st.commands_in_flight == CAP);
    /* The C-th: exactly one ring-full wait, ended by the opener. */
    opener o = {dev, gate};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, open_when_full, &o) == 0);
    memset(bytes, 0xAB, sizeof bytes);
    CHECK_RESULT(kiln_update_subresource(ctx, r, 0, NULL, bytes, 0, 0), KILN_OK);
    pthread_join(t, NULL);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_get_stats(dev, &st);
    CHECK(st.waits_ring_full == 1 && st.waits_transfer_full == 0 && st.waits_map_conflict == 0);
    /* The bytes are the last written. */
    kiln_buffer staging;
    kiln_buffer_desc sd = {.size = 64, .usage = KILN_USAGE_STAGING, .cpu_access = KILN_CPU_ACCESS_READ};
    CHECK_RESULT(kiln_create_buffer(dev, &sd, NULL, &staging), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_buffer_resource(staging), r), KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(staging), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK(((const uint8_t *)m.data)[0] == 0xAB && ((const uint8_t *)m.data)[63] == 0xAB);
    kiln_unmap(ctx, kiln_buffer_resource(staging), 0);
    kiln_test_gate_destroy(gate);
    kiln_device_destroy(dev);
}

int main(void)
{
    run(1);
    run(2);
    return th_exit();
}
