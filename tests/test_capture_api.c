#define _POSIX_C_SOURCE 200809L /* setenv */
/*
 * The capture API and its rules: misuse gives result codes and one log
 * message with a stable id (begin twice, end without begin, an unwritable
 * path, a device that already has objects, NULL arguments); shader names
 * (invalid, reserved or taken names refused; a shader of one's own
 * replays when the replaying device registers its name, is refused by
 * name when it does not, and one created unnamed is captured with a
 * warning and refused by the replay at its record); a failing call is
 * recorded as FAILED and skipped; KILN_CAPTURE captures from device
 * creation; a client wait that outlives its device (DEVICE_LOST) while a
 * capture runs touches nothing freed (the asan preset checks).
 */
#include "capture_util.h"
#include "raster_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { W = 16, H = 8 };

/* A draw of one full-target triangle pair through ru_* shaders, read back. */
static void draw_quad(kiln_device *dev, const ru_pipe *p, uint8_t *pixels)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_bind_pipe(ctx, p);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    const float v[6][8] = {{-1, -1, 0.5f, 1, 1, 0, 0, 1}, {-1, 1, 0.5f, 1, 0, 1, 0, 1},
                           {1, 1, 0.5f, 1, 0, 0, 1, 1},   {-1, -1, 0.5f, 1, 1, 0, 0, 1},
                           {1, 1, 0.5f, 1, 0, 0, 1, 1},   {1, -1, 0.5f, 1, 1, 1, 0, 1}};
    ru_draw(dev, ctx, v, 6, sizeof v[0], KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK(ru_read(dev, rt.tex, 0, pixels));
    kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0});
    kiln_rs_set_state(ctx, (kiln_rasterizer_state){0});
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt);
}

static void test_misuse(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    CHECK_FAILS(kiln_capture_end(dev), KILN_E_INVALID_CALL, KILN_LOG_CAPTURE_NOT_ACTIVE);
    CHECK_FAILS(kiln_capture_begin(dev, "no-such-directory/for/this.kcap"), KILN_E_IO,
                KILN_LOG_CAPTURE_OPEN_FAILED);
    CHECK_FAILS(kiln_capture_begin(dev, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    th_log_reset();
    CHECK_RESULT(kiln_capture_frame(dev), KILN_OK); /* no capture: nothing, no log */
    CHECK_EQ_INT(th_log_count(), 0);

    CHECK_RESULT(kiln_capture_begin(dev, "capture_api_misuse.kcap"), KILN_OK);
    CHECK_FAILS(kiln_capture_begin(dev, "capture_api_other.kcap"), KILN_E_INVALID_CALL,
                KILN_LOG_CAPTURE_ACTIVE);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    CHECK_FAILS(kiln_capture_end(dev), KILN_E_INVALID_CALL, KILN_LOG_CAPTURE_NOT_ACTIVE);

    /* Objects made before a capture would be missing from it. */
    kiln_buffer b = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, NULL, 64);
    CHECK_FAILS(kiln_capture_begin(dev, "capture_api_misuse.kcap"), KILN_E_INVALID_CALL,
                KILN_LOG_CAPTURE_LIVE_OBJECTS);
    kiln_destroy_buffer(dev, b);
    /* Contexts are no objects: their state is recorded at begin. */
    kiln_context *extra = NULL;
    CHECK_RESULT(kiln_context_create(dev, &extra), KILN_OK);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_api_misuse.kcap"), KILN_OK);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_context_destroy(extra);

    CHECK_RESULT(kiln_capture_begin(NULL, "x.kcap"), KILN_E_INVALID_ARG); /* logs to stderr */
    kiln_device_destroy(dev);

    /* The (empty) capture replays. */
    size_t len;
    uint8_t *bytes = cu_read("capture_api_misuse.kcap", &len);
    kcap_replay_report rep;
    CHECK(bytes != NULL);
    if (bytes)
        CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, NULL, NULL, &rep), KILN_OK);
    free(bytes);
}

static void test_names(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    kiln_vertex_shader_desc vs = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};
    kiln_pixel_shader_desc ps = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};
    static const char *const bad[] = {
        "", "kiln.mine", "has space", "tab\tname",
        "0123456789012345678901234567890123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_FAILS(kiln_capture_register_vertex_shader(dev, bad[i], &vs), KILN_E_INVALID_ARG,
                    KILN_LOG_CAPTURE_SHADER_NAME);
    CHECK_FAILS(kiln_capture_register_vertex_shader(dev, NULL, &vs), KILN_E_INVALID_ARG,
                KILN_LOG_CAPTURE_SHADER_NAME);
    CHECK_FAILS(kiln_capture_register_pixel_shader(dev, "test.ps", NULL), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.vs", &vs), KILN_OK);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.vs", &vs), KILN_OK); /* same */
    kiln_vertex_shader_desc other = vs;
    other.user = RU_USER(3, 2);
    CHECK_FAILS(kiln_capture_register_vertex_shader(dev, "test.vs", &other), KILN_E_INVALID_ARG,
                KILN_LOG_CAPTURE_SHADER_NAME);
    /* Vertex and pixel shaders have names of their own. */
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.vs", &ps), KILN_OK);
    kiln_device_destroy(dev);
}

/* The ru_* shaders of a (2 inputs, 1 varying) pipe, registered by name. */
static void register_pipe(kiln_device *dev, void *user)
{
    (void)user;
    kiln_vertex_shader_desc vs = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};
    kiln_pixel_shader_desc ps = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.pass", &vs), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.vary", &ps), KILN_OK);
}

/* Offset of the first record of `op` in a capture (0 if none). */
static size_t find_op(const uint8_t *bytes, size_t len, kcap_op op)
{
    kcap_header h;
    kcap_error err;
    if (!kcap_decode_header(bytes, len, &h, &err))
        return 0;
    kcap_call c;
    for (size_t off = h.size, next; off < len; off = next) {
        if (!kcap_decode(bytes, len, off, 0, &c, &next, &err))
            return 0;
        if (c.op == op)
            return off;
    }
    return 0;
}

static void test_own_shaders(void)
{
    static uint8_t live[W * H * 4];
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    register_pipe(dev, NULL);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_api_named.kcap"), KILN_OK);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    draw_quad(dev, &p, live);
    ru_free_pipe(dev, &p);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);

    size_t len;
    uint8_t *bytes = cu_read("capture_api_named.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    cu_images img = {0};
    kcap_replay_report rep;
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, register_pipe, &img, &rep), KILN_OK);
    CHECK_EQ_INT(rep.mismatches, 0);
    const cu_image *t = cu_target(&img, 0);
    CHECK(t && t->width == W && t->height == H && memcmp(t->pixels, live, sizeof live) == 0);
    cu_free(&img);
    /* Without the names on the replaying device: refused at the shader. */
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, NULL, NULL, &rep), KILN_E_UNSUPPORTED);
    CHECK_EQ_INT(rep.error.offset, find_op(bytes, len, KCAP_OP_CREATE_VERTEX_SHADER));
    CHECK(strstr(rep.error.message, "\"test.pass\" is not registered") != NULL);
    free(bytes);
}

static void test_unnamed_shader(void)
{
    static uint8_t live[W * H * 4];
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_api_unnamed.kcap"), KILN_OK);
    th_log_reset();
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);               /* the calls succeed */
    CHECK_EQ_INT(th_logs.per_id[KILN_LOG_CAPTURE_SHADER_UNNAMED], 2); /* one per shader */
    CHECK_EQ_INT(th_log_count(), 2);
    draw_quad(dev, &p, live);
    ru_free_pipe(dev, &p);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);

    size_t len;
    uint8_t *bytes = cu_read("capture_api_unnamed.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    kcap_replay_report rep;
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, register_pipe, NULL, &rep),
                 KILN_E_UNSUPPORTED);
    size_t at = find_op(bytes, len, KCAP_OP_CREATE_VERTEX_SHADER);
    CHECK(at != 0);
    CHECK_EQ_INT(rep.error.offset, at);
    CHECK(strstr(rep.error.message, "unnamed") != NULL);
    free(bytes);
}

static void test_failed_calls(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_api_failed.kcap"), KILN_OK);
    kiln_buffer b;
    kiln_buffer_desc bad = {0, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    CHECK_FAILS(kiln_create_buffer(dev, &bad, NULL, &b), KILN_E_INVALID_ARG,
                KILN_LOG_BUFFER_SIZE_ZERO);
    CHECK_FAILS(kiln_destroy_texture(dev, (kiln_texture){12345}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    kiln_buffer ok = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, NULL, 16);
    kiln_destroy_buffer(dev, ok);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);

    size_t len;
    uint8_t *bytes = cu_read("capture_api_failed.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    kcap_replay_report rep;
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, NULL, NULL, &rep), KILN_OK);
    CHECK_EQ_INT(rep.failed_live, 2);
    CHECK_EQ_INT(rep.calls, 2); /* the buffer's creation and destruction */
    CHECK_EQ_INT(rep.mismatches, 0);
    free(bytes);
}

static void test_environment(void)
{
    remove("capture_api_env_1.kcap");
    setenv("KILN_CAPTURE", "capture_api_env_%u.kcap", 1);
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    unsetenv("KILN_CAPTURE");
    static uint8_t live[W * H * 4];
    register_pipe(dev, NULL);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    draw_quad(dev, &p, live);
    ru_free_pipe(dev, &p);
    kiln_device_destroy(dev); /* ends the capture */

    size_t len;
    uint8_t *bytes = cu_read("capture_api_env_1.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    cu_images img = {0};
    kcap_replay_report rep;
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_ASYNC, 3, register_pipe, &img, &rep), KILN_OK);
    const cu_image *t = cu_target(&img, 0);
    CHECK(t && memcmp(t->pixels, live, sizeof live) == 0);
    cu_free(&img);
    free(bytes);
}

typedef struct waiter {
    kiln_device *dev;
    kiln_fence fence;
    atomic_int started, result;
} waiter;

static void *wait_main(void *p)
{
    waiter *w = p;
    atomic_store(&w->started, 1);
    atomic_store(&w->result, (int)kiln_fence_wait(w->dev, w->fence, UINT64_MAX));
    return NULL;
}

static void test_wait_outlives_device(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 1);
    CHECK_RESULT(kiln_capture_begin(dev, "capture_api_lost.kcap"), KILN_OK);
    kiln_timeline never;
    waiter w = {.dev = dev};
    atomic_init(&w.started, 0);
    atomic_init(&w.result, 1);
    CHECK_RESULT(kiln_create_timeline(dev, 0, &never), KILN_OK);
    CHECK_RESULT(kiln_create_fence(dev, never, 1, &w.fence), KILN_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_main, &w) == 0);
    struct timespec ms = {0, 1000000};
    while (!atomic_load(&w.started))
        nanosleep(&ms, NULL);
    /* Not a timing assertion: the thread must be inside its wait before the
     * device (and its capture) go, as in test_sync_errors. */
    struct timespec settle = {0, 200000000};
    nanosleep(&settle, NULL);
    kiln_device_destroy(dev);
    pthread_join(t, NULL);
    CHECK_EQ_INT(atomic_load(&w.result), KILN_E_DEVICE_LOST);

    size_t len;
    uint8_t *bytes = cu_read("capture_api_lost.kcap", &len);
    kcap_replay_report rep;
    CHECK(bytes != NULL);
    if (bytes)
        CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, NULL, NULL, &rep), KILN_OK);
    free(bytes);
}

int main(void)
{
    test_misuse();
    test_names();
    test_own_shaders();
    test_unnamed_shader();
    test_failed_calls();
    test_environment();
    test_wait_outlives_device();
    return th_exit();
}
