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
 *
 * run_big: the storages a WRITE_DISCARD retires while a recorded scene
 * holds them count in the scene's bytes (see there).
 */
#include "api/test_hooks.h"
#include "count_alloc.h"
#include "driver/driver.h"
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

/* A counted ASYNC device drawing one quad per cell of the target through
 * a pixel shader that outputs its constant buffer (DYNAMIC, mapped per
 * draw), its target held by a gate until the producer first waits. */
typedef struct stream {
    counter cnt;
    kiln_device *dev;
    kiln_context *ctx;
    ru_tex rt;
    ru_pipe p;
    kiln_rasterizer_state rs;
    kiln_buffer vb, cb;
    kiln_test_gate *gate;
    opener o;
    pthread_t t;
    bool started; /* t runs */
} stream;

/* Cell c's quad, vertices v[0..6). */
static void cell_quad(uint32_t c, float v[6][4])
{
    double x0 = (c % (SIZE / CELL)) * CELL, y0 = (c / (SIZE / CELL)) * CELL;
    const double corner[6][2] = {{0, 0}, {CELL, 0}, {0, CELL}, {CELL, 0}, {CELL, CELL}, {0, CELL}};
    for (int k = 0; k < 6; k++)
        ru_vtx(v[k], SIZE, SIZE, x0 + corner[k][0], y0 + corner[k][1], 0.5f);
}

/* vb_dynamic: the vertex buffer is DYNAMIC, vb_size bytes, the stream
 * writes it; otherwise IMMUTABLE with every cell's quad. False if the
 * device failed. */
static bool stream_open(stream *st, uint32_t threads, uint32_t budget, bool vb_dynamic, uint32_t vb_size)
{
    *st = (stream){.cnt = COUNTER_INIT};
    kiln_device_desc dd = {.exec_mode = KILN_EXEC_ASYNC, .num_threads = threads,
                           .allocator = COUNTER_ALLOCATOR(&st->cnt), .scene_budget = budget};
    CHECK_RESULT(kiln_device_create(&dd, &st->dev), KILN_OK);
    if (!st->dev)
        return false;
    kiln_device *dev = st->dev;
    kiln_context *ctx = st->ctx = kiln_device_immediate_context(dev);
    st->rt = ru_rt(dev, SIZE, SIZE, KILN_FORMAT_R8G8B8A8_UNORM);
    st->p = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ru_bind_pipe(ctx, &st->p);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &st->rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, SIZE, SIZE, 0, 1);
    st->rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, st->rs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);

    if (vb_dynamic) {
        kiln_buffer_desc vbd = {.size = vb_size, .usage = KILN_USAGE_DYNAMIC,
                                .bind_flags = KILN_BIND_VERTEX_BUFFER,
                                .cpu_access = KILN_CPU_ACCESS_WRITE};
        CHECK_RESULT(kiln_create_buffer(dev, &vbd, NULL, &st->vb), KILN_OK);
    } else {
        static float v[NCELL * 6][4];
        for (uint32_t c = 0; c < NCELL; c++)
            cell_quad(c, &v[6 * c]);
        st->vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    }
    uint32_t stride = 4 * sizeof(float), off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &st->vb, &stride, &off), KILN_OK);
    kiln_buffer_desc cbd = {.size = 16, .usage = KILN_USAGE_DYNAMIC,
                            .bind_flags = KILN_BIND_CONSTANT_BUFFER,
                            .cpu_access = KILN_CPU_ACCESS_WRITE};
    CHECK_RESULT(kiln_create_buffer(dev, &cbd, NULL, &st->cb), KILN_OK);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &st->cb), KILN_OK);

    /* Nothing runs until the producer first waits. */
    CHECK_RESULT(kiln_test_gate_create(dev, &st->gate), KILN_OK);
    kiln_resource held = kiln_texture_resource(st->rt.tex);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, st->gate, &held, &w, 1), KILN_OK);
    kiln_test_gate_wait_entered(st->gate, 1);
    st->o = (opener){.dev = dev, .gate = st->gate};
    st->started = pthread_create(&st->t, NULL, open_at_first_wait, &st->o) == 0;
    CHECK(st->started);
    if (!st->started)
        kiln_test_gate_open(st->gate);
    return true;
}

/* Draw i's color into the constant buffer. */
static kiln_result stream_color(stream *st, uint32_t i)
{
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(st->ctx, kiln_buffer_resource(st->cb), 0, KILN_MAP_WRITE_DISCARD, 0, &m);
    if (r == KILN_OK) {
        color_of(i, m.data);
        r = kiln_unmap(st->ctx, kiln_buffer_resource(st->cb), 0);
    }
    return r;
}

/* The stream is over: opens the gate if nothing did (without a wait: no
 * budget) and finishes. */
static void stream_end(stream *st)
{
    atomic_store(&st->o.streamed, 1);
    if (st->started)
        pthread_join(st->t, NULL);
    CHECK_RESULT(kiln_finish(st->ctx), KILN_OK);
}

/* Checks that each cell holds the color of the last of `total` draws
 * that covered it (a rename that lost or reordered data shows there),
 * draw i's color being color_of(i - i % step); with total = 0 that each
 * holds color_of(step). Then frees everything and checks that every byte
 * went back. */
static void stream_close(stream *st, uint32_t total, uint32_t step)
{
    kiln_device *dev = st->dev;
    uint8_t *px = ru_read_bytes(dev, &st->rt);
    uint32_t wrong = 0, only = step;
    if (!total)
        step = 1;
    for (uint32_t c = 0; c < NCELL; c++) {
        uint32_t last = total ? total - 1 : only;
        while (total && last % NCELL != c)
            last--;
        float want[4];
        color_of(last - last % step, want);
        const uint8_t *q = px + 4 * ((size_t)(c / (SIZE / CELL) * CELL + CELL / 2) * SIZE +
                                     (size_t)(c % (SIZE / CELL) * CELL + CELL / 2));
        for (int k = 0; k < 4; k++)
            wrong += q[k] != (uint8_t)(want[k] * 255.0f + 0.5f);
    }
    free(px);
    CHECK_EQ_INT(wrong, 0);

    kiln_test_gate_destroy(st->gate);
    kiln_destroy_buffer(dev, st->cb);
    kiln_destroy_buffer(dev, st->vb);
    kiln_destroy_rasterizer_state(dev, st->rs);
    ru_free_pipe(dev, &st->p);
    ru_free_tex(dev, &st->rt);
    kiln_device_destroy(dev);
    CHECK_EQ_INT(st->cnt.live, 0);
}

/* The peak of live bytes over the whole stream (0 if the device failed). */
static size_t run(uint32_t threads, uint32_t budget)
{
    stream st;
    if (!stream_open(&st, threads, budget, false, 0))
        return 0;
    const float clear[4] = {0, 0, 0, 0};
    size_t peak_first = 0;
    kiln_result bad = KILN_OK;
    for (uint32_t i = 0; i < TOTAL; i++) {
        if (i % FRAME == 0 && bad == KILN_OK)
            bad = kiln_clear_rtv(st.ctx, st.rt.rtv, clear);
        kiln_result r = stream_color(&st, i);
        if (r == KILN_OK)
            r = kiln_draw(st.ctx, 6, 6 * (i % NCELL));
        if (r == KILN_OK && i % FRAME == FRAME - 1)
            r = kiln_flush(st.ctx);
        if (r != KILN_OK && bad == KILN_OK)
            bad = r;
        if (i + 1 == FIRST)
            peak_first = counter_peak(&st.cnt);
    }
    stream_end(&st);
    const opener *o = &st.o;
    printf("  %u worker(s), budget %u MiB: the gate opened at %llu scene-budget and %llu ring-full "
           "waits, %llu commands in flight\n", threads, budget ? budget >> 20 : 32,
           (unsigned long long)o->seen.waits_scene_budget,
           (unsigned long long)o->seen.waits_ring_full, (unsigned long long)o->seen.commands_in_flight);
    CHECK(o->seen.waits_scene_budget == 1 && o->seen.waits_ring_full == 0);
    CHECK_RESULT(bad, KILN_OK);
    size_t peak_all = counter_peak(&st.cnt);
    printf("  %u worker(s): peak live bytes %zu after %d draws, %zu after %d\n", threads,
           peak_first, FIRST, peak_all, TOTAL);
    CHECK(peak_all <= peak_first + (1u << 20));
    stream_close(&st, TOTAL, 1);
    return peak_all;
}

/* Big renamed storages: each draw follows a WRITE_DISCARD of a 64 KiB
 * DYNAMIC vertex buffer (and of the constant buffer), with no flush in
 * the whole stream. The scene's draws keep every replaced storage alive,
 * so before retired storages counted in a scene's bytes one scene of
 * BIG_TOTAL draws held 64 MiB; now a draw ends the scene once what it
 * holds reaches the budget, and admission waits for the scenes in
 * flight. The gate holds the target until the first scene-budget wait,
 * as above; the peak must stay within 3 budgets of the bytes live before
 * the stream (the recording scene, the one in flight and one storage
 * each), and every cell ends with its last draw's color. `other` > 0:
 * the vertex buffer's WRITE_DISCARDs are another context's, `other`
 * before each draw (the draws' context renames only its constants): the
 * drawing scene is charged for the storage renamed under it when it takes
 * a later one, however many renames came between (it held all 1,000,
 * 64 MiB, with no budget wait, before). */
enum { BIG_VB = 64 << 10, BIG_TOTAL = 1000 };

static void run_big(uint32_t threads, uint32_t budget, uint32_t other)
{
    stream st;
    if (!stream_open(&st, threads, budget, true, BIG_VB))
        return;
    kiln_context *mapper = st.ctx;
    if (other)
        CHECK_RESULT(kiln_context_create(st.dev, &mapper), KILN_OK);
    size_t base = counter_live(&st.cnt);
    const float clear[4] = {0, 0, 0, 0};
    kiln_result bad = kiln_clear_rtv(st.ctx, st.rt.rtv, clear);
    for (uint32_t i = 0; i < BIG_TOTAL && bad == KILN_OK; i++) {
        kiln_result r = mapper ? KILN_OK : KILN_E_INVALID_CALL;
        for (uint32_t k = 0; k < (other ? other : 1) && r == KILN_OK; k++) {
            kiln_mapped_subresource m;
            r = kiln_map(mapper, kiln_buffer_resource(st.vb), 0, KILN_MAP_WRITE_DISCARD, 0, &m);
            if (r == KILN_OK) {
                cell_quad(i % NCELL, m.data);
                r = kiln_unmap(mapper, kiln_buffer_resource(st.vb), 0);
            }
        }
        if (r == KILN_OK)
            r = stream_color(&st, i);
        if (r == KILN_OK)
            r = kiln_draw(st.ctx, 6, 0);
        bad = r;
    }
    stream_end(&st);
    CHECK_RESULT(bad, KILN_OK);
    size_t peak = counter_peak(&st.cnt), bound = 3 * (size_t)budget;
    printf(
        "  %u worker(s), budget %u KiB, %d draws each after a Map WRITE_DISCARD of a %d KiB vertex "
        "buffer%s: the gate opened at %llu scene-budget waits; peak %zu bytes over the %zu live "
        "before (bound %zu)\n",
        threads, budget >> 10, BIG_TOTAL, BIG_VB >> 10,
        !other       ? ""
        : other == 1 ? " on another context"
                     : " on another context, twice",
        (unsigned long long)st.o.seen.waits_scene_budget, peak - base, base, bound);
    CHECK(st.o.seen.waits_scene_budget == 1 && st.o.seen.waits_ring_full == 0);
    CHECK(peak - base <= bound);
    if (other && mapper)
        CHECK_RESULT(kiln_context_destroy(mapper), KILN_OK);
    stream_close(&st, BIG_TOTAL, 1);
}

/* A scene ends at KD_SCENE_MAX_OPS draws: with no flush and nothing
 * DYNAMIC bound (so consecutive draws share one bind record and the scene
 * stays far under the budget), KD_SCENE_MAX_OPS + 1,000 draws are two
 * scene commands. The draws past the cut read a second constant buffer
 * (bound with a setter, which does not end the scene): every cell must
 * show its color, so the second scene ran after the first. */
static void run_long_scene(void)
{
    stream st;
    if (!stream_open(&st, 1, 0, false, 0))
        return;
    const uint32_t total = KD_SCENE_MAX_OPS + 1000;
    float c0[4], c1[4];
    color_of(0, c0);
    color_of(KD_SCENE_MAX_OPS, c1);
    kiln_buffer cb[2] = {ru_cbuffer(st.dev, c0, 4), ru_cbuffer(st.dev, c1, 4)};
    kiln_device_stats before, after;
    kiln_device_get_stats(st.dev, &before);
    kiln_result bad = KILN_OK;
    for (uint32_t i = 0; i < total && bad == KILN_OK; i++) {
        if (i == 0 || i == KD_SCENE_MAX_OPS)
            bad = kiln_ps_set_constant_buffers(st.ctx, 0, 1, &cb[i != 0]);
        if (bad == KILN_OK)
            bad = kiln_draw(st.ctx, 6, 6 * (i % NCELL));
    }
    CHECK_RESULT(bad, KILN_OK);
    CHECK_RESULT(kiln_flush(st.ctx), KILN_OK);
    kiln_device_get_stats(st.dev, &after);
    printf("  %u draws with no flush: %llu scene commands\n", total,
           (unsigned long long)(after.commands_queued - before.commands_queued));
    CHECK_EQ_INT(after.commands_queued - before.commands_queued, 2);
    stream_end(&st);
    kiln_destroy_buffer(st.dev, cb[0]);
    kiln_destroy_buffer(st.dev, cb[1]);
    stream_close(&st, total, KD_SCENE_MAX_OPS);
}

/* Only what the open scene holds counts: WRITE_DISCARDs of a buffer no
 * draw of the scene binds retire storages nobody keeps, so with a 1 MiB
 * budget eight discards of a 2 MiB buffer between draws leave the draws
 * in one scene (a count that charged every rename would cut it). */
static void run_unheld_discard(void)
{
    stream st;
    if (!stream_open(&st, 1, 1u << 20, false, 0))
        return;
    kiln_buffer_desc d = {.size = 2u << 20, .usage = KILN_USAGE_DYNAMIC,
                          .bind_flags = KILN_BIND_VERTEX_BUFFER, .cpu_access = KILN_CPU_ACCESS_WRITE};
    kiln_buffer unbound;
    CHECK_RESULT(kiln_create_buffer(st.dev, &d, NULL, &unbound), KILN_OK);
    kiln_device_stats before, after;
    kiln_device_get_stats(st.dev, &before);
    kiln_result bad = KILN_OK;
    for (uint32_t i = 0; i < 2 * NCELL && bad == KILN_OK; i++) {
        if (i >= NCELL / 2 && i < NCELL / 2 + 8) {
            kiln_mapped_subresource m;
            bad = kiln_map(st.ctx, kiln_buffer_resource(unbound), 0, KILN_MAP_WRITE_DISCARD, 0, &m);
            if (bad == KILN_OK)
                bad = kiln_unmap(st.ctx, kiln_buffer_resource(unbound), 0);
        }
        if (bad == KILN_OK)
            bad = stream_color(&st, i);
        if (bad == KILN_OK)
            bad = kiln_draw(st.ctx, 6, 6 * (i % NCELL));
    }
    CHECK_RESULT(bad, KILN_OK);
    CHECK_RESULT(kiln_flush(st.ctx), KILN_OK);
    kiln_device_get_stats(st.dev, &after);
    printf("  8 discards of an unbound 2 MiB buffer among %d draws, budget 1 MiB: %llu scene commands\n",
           2 * NCELL, (unsigned long long)(after.commands_queued - before.commands_queued));
    CHECK_EQ_INT(after.commands_queued - before.commands_queued, 1);
    stream_end(&st);
    kiln_destroy_buffer(st.dev, unbound);
    stream_close(&st, 2 * NCELL, 1);
}

/* Clears gathered into the open scene end it at the budget too (they are
 * ops): 2,000 clears of the target and no draw, with a 64 KiB budget
 * (about 745 ops a scene), are more than one command, and the target
 * ends with the last clear's color. */
static void run_clears(void)
{
    stream st;
    if (!stream_open(&st, 1, 64u << 10, false, 0))
        return;
    kiln_device_stats before, after;
    kiln_device_get_stats(st.dev, &before);
    kiln_result bad = KILN_OK;
    for (uint32_t i = 0; i < 2000 && bad == KILN_OK; i++) {
        float c[4];
        color_of(i, c);
        bad = kiln_clear_rtv(st.ctx, st.rt.rtv, c);
    }
    CHECK_RESULT(bad, KILN_OK);
    CHECK_RESULT(kiln_flush(st.ctx), KILN_OK);
    kiln_device_get_stats(st.dev, &after);
    uint64_t n = after.commands_queued - before.commands_queued;
    printf("  2000 clears, budget 64 KiB: %llu commands\n", (unsigned long long)n);
    CHECK(n >= 3);
    stream_end(&st);
    stream_close(&st, 0, 1999);
}

int main(void)
{
    run_clears();
    run_long_scene();
    run_unheld_discard();
    run_big(1, 1u << 20, 0);
    run_big(2, 4u << 20, 0);
    run_big(1, 1u << 20, 1);
    run_big(2, 4u << 20, 1);
    run_big(1, 1u << 20, 2);
    size_t deflt = run(1, 0);
    run(2, 0);
    size_t small = run(1, 4u << 20);
    printf("  peak with a 4 MiB budget %zu, with the default %zu\n", small, deflt);
    CHECK(small && small + ((size_t)16 << 20) < deflt);
    return th_exit();
}
