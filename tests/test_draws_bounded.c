/*
 * A long stream of draws runs in bounded memory (issue 10, DESIGN's
 * bounded pools): 500,000 draws, each after a kiln_map WRITE_DISCARD of
 * the constant buffer its pixel shader reads (the objects example's
 * pattern: a million calls), in scenes of 1,000 with a kiln_flush after
 * each and no finish until the end, on an ASYNC device whose allocator
 * counts every byte.
 *
 * A scene is one command however many draws it holds, so command slots
 * alone bounded nothing: before the scene budget a producer that outran
 * the workers held up to 1,024 recorded scenes (146 MB live after
 * 2,000,000 such draws on a 64x64 target, and growing with the run).
 * Recorded scenes in flight are now bounded per context by
 * kiln_device_desc.scene_budget (docs/queue.md "Scene budget"). To reach the bound
 * whatever the machine's speed, a test gate holds the render target from
 * the start, so no scene can run, until a helper thread sees the
 * producer's first scene-budget wait (or a ring-full wait, or the end of
 * the stream: without the budget the test would otherwise hang on the
 * gate) and opens it. Then:
 * - the first wait is a scene-budget wait, before any ring-full wait;
 * - the peak of live bytes after 500,000 draws is the peak after the
 *   first 150,000 (the bound reached) within 1 MiB: what grows with the
 *   stream would pass it;
 * - every byte is freed with the device, and each cell of the target
 *   holds the color of the last draw that covered it (a rename that lost
 *   or reordered constants shows there).
 * On 1 and 2 workers with the default budget (32 MiB), and on 1 worker
 * with kiln_device_desc.scene_budget = 4 MiB, whose peak must be at least
 * 16 MiB under the default's: the field is what bounds it.
 */
#include "api/test_hooks.h"
#include "count_alloc.h"
#include "harness.h"
#include "raster_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    SIZE = 64,      /* the target, SIZE x SIZE */
    CELL = 8,       /* an 8 x 8 grid of cells, one quad each */
    NCELL = (SIZE / CELL) * (SIZE / CELL),
    TOTAL = 500000, /* draws */
    FIRST = 150000,
    FRAME = 1000
};

/* Draw i's color, bytes k / 255 so that the UNORM8 target holds k. */
static void color_of(uint32_t i, float out[4])
{
    out[0] = (float)(i % 251u) / 255.0f;
    out[1] = (float)(i / 251u % 251u) / 255.0f;
    out[2] = (float)(i / 63001u % 251u) / 255.0f;
    out[3] = 1.0f;
}

typedef struct opener {
    kiln_device *dev;
    kiln_test_gate *gate;
    atomic_int streamed;    /* the producer is past its last draw */
    kiln_device_stats seen; /* the statistics when it opened */
} opener;

static void *open_at_first_wait(void *arg)
{
    opener *o = arg;
    for (;;) {
        kiln_device_get_stats(o->dev, &o->seen);
        if (o->seen.waits_scene_budget || o->seen.waits_ring_full || atomic_load(&o->streamed))
            break;
        sched_yield();
    }
    kiln_test_gate_open(o->gate);
    return NULL;
}

/* The peak of live bytes over the whole stream (0 if the device failed). */
static size_t run(uint32_t threads, uint32_t budget)
{
    counter cnt = COUNTER_INIT;
    kiln_device_desc dd = {.exec_mode = KILN_EXEC_ASYNC, .num_threads = threads,
                           .allocator = COUNTER_ALLOCATOR(&cnt), .scene_budget = budget};
    kiln_device *dev = NULL;
    CHECK_RESULT(kiln_device_create(&dd, &dev), KILN_OK);
    if (!dev)
        return 0;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, SIZE, SIZE, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_pipe p = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ru_bind_pipe(ctx, &p);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, SIZE, SIZE, 0, 1);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);

    /* Cell c's quad: vertices [6c, 6c + 6). */
    static float v[NCELL * 6][4];
    for (int c = 0; c < NCELL; c++) {
        double x0 = (c % (SIZE / CELL)) * CELL, y0 = (c / (SIZE / CELL)) * CELL;
        const double corner[6][2] = {{0, 0}, {CELL, 0}, {0, CELL}, {CELL, 0}, {CELL, CELL}, {0, CELL}};
        for (int k = 0; k < 6; k++)
            ru_vtx(v[6 * c + k], SIZE, SIZE, x0 + corner[k][0], y0 + corner[k][1], 0.5f);
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = sizeof v[0], off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    kiln_buffer_desc cbd = {.size = 16, .usage = KILN_USAGE_DYNAMIC,
                            .bind_flags = KILN_BIND_CONSTANT_BUFFER,
                            .cpu_access = KILN_CPU_ACCESS_WRITE};
    kiln_buffer cb;
    CHECK_RESULT(kiln_create_buffer(dev, &cbd, NULL, &cb), KILN_OK);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);

    /* Nothing runs until the producer first waits. */
    kiln_test_gate *gate;
    CHECK_RESULT(kiln_test_gate_create(dev, &gate), KILN_OK);
    kiln_resource held = kiln_texture_resource(rt.tex);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, gate, &held, &w, 1), KILN_OK);
    kiln_test_gate_wait_entered(gate, 1);
    opener o = {.dev = dev, .gate = gate};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, open_at_first_wait, &o) == 0);

    const float clear[4] = {0, 0, 0, 0};
    size_t peak_first = 0;
    kiln_result bad = KILN_OK;
    for (uint32_t i = 0; i < TOTAL; i++) {
        if (i % FRAME == 0 && bad == KILN_OK)
            bad = kiln_clear_rtv(ctx, rt.rtv, clear);
        kiln_mapped_subresource m;
        kiln_result r = kiln_map(ctx, kiln_buffer_resource(cb), 0, KILN_MAP_WRITE_DISCARD, 0, &m);
        if (r == KILN_OK) {
            color_of(i, m.data);
            r = kiln_unmap(ctx, kiln_buffer_resource(cb), 0);
        }
        if (r == KILN_OK)
            r = kiln_draw(ctx, 6, 6 * (i % NCELL));
        if (r == KILN_OK && i % FRAME == FRAME - 1)
            r = kiln_flush(ctx);
        if (r != KILN_OK && bad == KILN_OK)
            bad = r;
        if (i + 1 == FIRST)
            peak_first = counter_peak(&cnt);
    }
    atomic_store(&o.streamed, 1); /* without a wait (no budget): open before finishing */
    pthread_join(t, NULL);
    printf("  %u worker(s), budget %u MiB: the gate opened at %llu scene-budget and %llu ring-full "
           "waits, %llu commands in flight\n", threads, budget ? budget >> 20 : 32,
           (unsigned long long)o.seen.waits_scene_budget,
           (unsigned long long)o.seen.waits_ring_full, (unsigned long long)o.seen.commands_in_flight);
    CHECK(o.seen.waits_scene_budget == 1 && o.seen.waits_ring_full == 0);
    CHECK_RESULT(bad, KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    size_t peak_all = counter_peak(&cnt);
    printf("  %u worker(s): peak live bytes %zu after %d draws, %zu after %d\n", threads,
           peak_first, FIRST, peak_all, TOTAL);
    CHECK(peak_all <= peak_first + (1u << 20));

    /* The last frame: every cell holds its last draw's color. */
    uint8_t *px = ru_read_bytes(dev, &rt);
    uint32_t wrong = 0;
    for (int c = 0; c < NCELL; c++) {
        uint32_t last = TOTAL - 1;
        while (last % NCELL != (uint32_t)c)
            last--;
        float want[4];
        color_of(last, want);
        const uint8_t *q = px + 4 * ((size_t)(c / (SIZE / CELL) * CELL + CELL / 2) * SIZE +
                                     (size_t)(c % (SIZE / CELL) * CELL + CELL / 2));
        for (int k = 0; k < 4; k++)
            wrong += q[k] != (uint8_t)(want[k] * 255.0f + 0.5f);
    }
    free(px);
    CHECK_EQ_INT(wrong, 0);

    kiln_test_gate_destroy(gate);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &p);
    ru_free_tex(dev, &rt);
    kiln_device_destroy(dev);
    CHECK_EQ_INT(cnt.live, 0);
    return peak_all;
}

int main(void)
{
    size_t deflt = run(1, 0);
    run(2, 0);
    size_t small = run(1, 4u << 20);
    printf("  peak with a 4 MiB budget %zu, with the default %zu\n", small, deflt);
    CHECK(small && small + ((size_t)16 << 20) < deflt);
    return th_exit();
}
