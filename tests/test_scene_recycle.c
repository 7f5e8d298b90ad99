/*
 * Scene memory is reused across scenes and bounded (src/driver's
 * kd_recycler, DESIGN's bounded pools):
 * - a freed scene comes back from kd_scene_create empty (no ops, nodes,
 *   states, targets; its hash table cleared) with its arrays and draw
 *   chunks kept, so a second scene as large as the first allocates nothing;
 * - at most KD_RECYCLE_SCENES scenes are kept, none over KD_RECYCLE_BYTES;
 *   further ones are freed at once;
 * - kd_recycler_fini frees what is kept: every byte allocated through the
 *   counting allocator is freed again.
 * Then through the public API: frames of many draws on a device whose
 * allocator counts allocations: after the first frames, a frame allocates
 * nothing for its scene (the count of allocations per frame stays small and
 * does not grow with the draws), and destroying the device frees all.
 */
#include "api/api.h"
#include "count_alloc.h"
#include "harness.h"
#include "raster_util.h"

#include <stdio.h>



static void unit(void)
{
    counter cnt = COUNTER_INIT;
    kiln_device_desc d = {.allocator = COUNTER_ALLOCATOR(&cnt)};
    kb_env env;
    kb_env_init(&env, &d);
    kd_recycler r;
    kd_recycler_init(&r);

    /* A scene with 1,000 draws and a few nodes. */
    kd_scene *s = kd_scene_create(&env, &r);
    CHECK(s != NULL);
    for (int i = 0; i < 1000; i++) {
        kd_draw *dw = kd_scene_new_draw(s);
        kd_op op = {.kind = KD_OP_DRAW, .draw = dw};
        CHECK(dw && kd_scene_push(s, &op));
    }
    CHECK_EQ_INT(s->nops, 1000);
    kd_scene *first = s;
    kd_scene_free(s);
    CHECK_EQ_INT(r.nkept, 1);

    /* It comes back empty, and as large a scene allocates nothing. */
    uint64_t a0 = counter_allocs(&cnt);
    s = kd_scene_create(&env, &r);
    CHECK(s == first);
    CHECK_EQ_INT(s->nops, 0);
    CHECK_EQ_INT(s->nnodes, 0);
    CHECK_EQ_INT(s->nstates, 0);
    CHECK(s->chunks == NULL && s->spare != NULL && s->dsv == NULL && s->nrt == 0);
    for (uint32_t i = 0; i < s->hash_cap; i++)
        CHECK_EQ_INT(s->hash[i], 0);
    for (int i = 0; i < 1000; i++) {
        kd_draw *dw = kd_scene_new_draw(s);
        kd_op op = {.kind = KD_OP_DRAW, .draw = dw};
        CHECK(dw && kd_scene_push(s, &op));
    }
    CHECK_EQ_INT(counter_allocs(&cnt) - a0, 0);

    /* At most KD_RECYCLE_SCENES kept. */
    kd_scene *more[KD_RECYCLE_SCENES + 2];
    more[0] = s;
    for (uint32_t i = 1; i < KD_RECYCLE_SCENES + 2; i++)
        more[i] = kd_scene_create(&env, &r);
    for (uint32_t i = 0; i < KD_RECYCLE_SCENES + 2; i++)
        kd_scene_free(more[i]);
    CHECK_EQ_INT(r.nkept, KD_RECYCLE_SCENES);

    /* None over KD_RECYCLE_BYTES: a scene with that many ops is freed. */
    kd_scene *big = kd_scene_create(&env, NULL);
    big->recycler = &r;
    kd_scene *taken[KD_RECYCLE_SCENES];
    for (uint32_t i = 0; i < KD_RECYCLE_SCENES; i++)
        taken[i] = kd_scene_create(&env, &r);
    CHECK_EQ_INT(r.nkept, 0);
    kd_op op = {.kind = KD_OP_CLEAR_RT};
    uint32_t nbig = KD_RECYCLE_BYTES / sizeof(kd_op) + 1;
    for (uint32_t i = 0; i < nbig; i++)
        CHECK(kd_scene_push(big, &op));
    kd_scene_free(big);
    CHECK_EQ_INT(r.nkept, 0);
    for (uint32_t i = 0; i < KD_RECYCLE_SCENES; i++)
        kd_scene_free(taken[i]);
    CHECK_EQ_INT(r.nkept, KD_RECYCLE_SCENES);

    kd_recycler_fini(&r);
    CHECK_EQ_INT(cnt.live, 0);
    printf("unit: recycler reuse and bounds ok (peak %zu bytes)\n", cnt.peak);
}

/* Frames of 5,000 one-triangle draws through the public API. */
static void frames(void)
{
    counter cnt = COUNTER_INIT;
    kiln_result dr;
    kiln_device *dev = counter_device(&cnt, KILN_EXEC_ASYNC, 2, &dr);
    CHECK_RESULT(dr, KILN_OK);
    if (!dev)
        return;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, 128, 128, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &p);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    kiln_viewport vp = {0, 0, 128, 128, 0, 1};
    CHECK_RESULT(kiln_rs_set_viewport(ctx, &vp), KILN_OK);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    enum { NDRAW = 5000 };
    static float v[NDRAW * 3][8];
    for (int i = 0; i < NDRAW * 3; i++) {
        float cx = (float)(i / 3 % 100) / 50.0f - 1.0f, cy = (float)(i / 300) / 25.0f - 1.0f;
        v[i][0] = cx + (i % 3 == 1 ? 0.03f : 0.0f);
        v[i][1] = cy + (i % 3 == 2 ? 0.03f : 0.0f);
        v[i][2] = 0.5f;
        v[i][3] = 1.0f;
        for (int c = 4; c < 8; c++)
            v[i][c] = (float)((i + c) % 7) / 7.0f;
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = sizeof v[0], off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    const float clear[4] = {0, 0, 0, 1};
    uint64_t per_frame[6];
    for (int f = 0; f < 6; f++) {
        uint64_t a0 = counter_allocs(&cnt);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
        for (int i = 0; i < NDRAW; i++)
            CHECK_RESULT(kiln_draw(ctx, 3, 3 * (uint32_t)i), KILN_OK);
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        per_frame[f] = counter_allocs(&cnt) - a0;
    }
    printf("frames: allocations per frame of %d draws:", NDRAW);
    for (int f = 0; f < 6; f++)
        printf(" %llu", (unsigned long long)per_frame[f]);
    printf("\n");
    /* Without reuse a frame takes a chunk per 256 draws and grows its op
     * array by doubling: more than NDRAW / 256 allocations. */
    for (int f = 2; f < 6; f++)
        CHECK(per_frame[f] < NDRAW / 256);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &p);
    ru_free_tex(dev, &rt);
    kiln_device_destroy(dev);
    CHECK_EQ_INT(cnt.live, 0);
}

int main(void)
{
    unit();
    frames();
    return th_exit();
}
