/*
 * A thread that waits inside kiln executes queued work instead of sleeping
 * (docs/queue.md "Worker placement"), proven without timing.
 *
 * An ASYNC device with one worker draws a full-target quad whose pixel
 * shader holds the first thread that runs it until another thread has run
 * it too (or 10 s pass: then the test fails instead of hanging). The
 * application's thread then calls kiln_finish. With one worker, only the
 * waiting application thread can be that other thread: it either runs the
 * scene itself or takes tiles of it, so the shader must have run on both
 * the worker and the application's thread, with no timeout, and every
 * pixel must be drawn.
 *
 * The same with a fence wait (kiln_fence_wait) instead of kiln_finish, and
 * the default worker count is checked to leave the application a core.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, unsetenv */
#include "raster_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { W = 256, H = 256 };

typedef struct probe {
    atomic_int first_claimed;  /* 1: a thread took the first invocation,
                                  2: and `first` names it */
    pthread_t first;
    atomic_int others;         /* invocations on another thread than `first` */
    atomic_int main_ran;       /* invocations on the application thread */
    atomic_int timed_out;
    pthread_t main_thread;
} probe;

static probe P;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void ps_hold(kiln_ps_args *a)
{
    pthread_t self = pthread_self();
    if (pthread_equal(self, P.main_thread))
        atomic_store(&P.main_ran, 1);
    int expected = 0;
    if (atomic_compare_exchange_strong(&P.first_claimed, &expected, 1)) {
        P.first = self;
        atomic_store(&P.first_claimed, 2); /* release: `first` is readable */
        double t0 = now_s();
        while (atomic_load(&P.others) == 0) {
            if (now_s() - t0 > 10.0) {
                atomic_store(&P.timed_out, 1);
                break;
            }
            sched_yield();
        }
    } else if (atomic_load(&P.first_claimed) == 2 && !pthread_equal(self, P.first)) {
        atomic_fetch_add(&P.others, 1);
    }
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = c == 3 ? 1.0f : 0.5f;
}

static void run(int use_fence)
{
    memset(&P, 0, sizeof P);
    P.main_thread = pthread_self();
    kiln_device_desc dd = {.exec_mode = KILN_EXEC_ASYNC, .num_threads = 1};
    kiln_device *dev = NULL;
    CHECK_RESULT(kiln_device_create(&dd, &dev), KILN_OK);
    if (!dev)
        return;
    CHECK_EQ_INT(kiln_device_num_threads(dev), 1);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_vertex_shader vs = ru_make_vs(dev, 1, 0);
    kiln_input_layout il = ru_make_layout(dev, vs, 1);
    kiln_pixel_shader_desc pd = {0};
    pd.fn = ps_hold;
    pd.num_outputs = 1;
    kiln_pixel_shader ps = {0};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    kiln_viewport vp = {0, 0, W, H, 0, 1};
    CHECK_RESULT(kiln_rs_set_viewport(ctx, &vp), KILN_OK);
    kiln_rasterizer_desc rd = {.cull = KILN_CULL_NONE};
    kiln_rasterizer_state rs = {0};
    CHECK_RESULT(kiln_create_rasterizer_state(dev, &rd, &rs), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    static const float quad[6][4] = {{-1, -1, 0.5f, 1}, {1, -1, 0.5f, 1}, {-1, 1, 0.5f, 1},
                                     {-1, 1, 0.5f, 1},  {1, -1, 0.5f, 1}, {1, 1, 0.5f, 1}};
    ru_draw(dev, ctx, quad, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    if (use_fence) {
        kiln_fence f = {0};
        CHECK_RESULT(kiln_context_insert_fence(ctx, &f), KILN_OK);
        CHECK_RESULT(kiln_fence_wait(dev, f, UINT64_MAX), KILN_OK);
        kiln_destroy_fence(dev, f);
    } else {
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    }
    printf("  %s: shader ran on the application thread: %s, on a second thread: %d times, "
           "timed out: %s\n",
           use_fence ? "fence wait" : "kiln_finish", atomic_load(&P.main_ran) ? "yes" : "no",
           atomic_load(&P.others), atomic_load(&P.timed_out) ? "yes" : "no");
    CHECK(atomic_load(&P.main_ran));
    CHECK(atomic_load(&P.others) > 0);
    CHECK(!atomic_load(&P.timed_out));
    uint8_t *img = malloc((size_t)W * H * 4);
    if (ru_read(dev, rt.tex, 0, img)) {
        size_t bad = 0;
        for (size_t i = 0; i < (size_t)W * H; i++)
            bad += img[4 * i] != 128 || img[4 * i + 3] != 255;
        CHECK_EQ_INT(bad, 0);
    }
    free(img);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    ru_free_tex(dev, &rt);
    kiln_device_destroy(dev);
}

int main(void)
{
    run(0);
    run(1);
    /* The default leaves the application a core (at least one worker). */
    unsetenv("KILN_NUM_THREADS");
    kiln_device *dev = NULL;
    CHECK_RESULT(kiln_device_create(NULL, &dev), KILN_OK);
    if (dev) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint32_t expect = cpus > 256 ? 255u : cpus > 1 ? (uint32_t)cpus - 1 : 1u;
        CHECK_EQ_INT(kiln_device_num_threads(dev), expect);
        kiln_device_destroy(dev);
    }
    return th_exit();
}
