/*
 * Device creation rules (kiln.h "Device"): NULL out pointer, enum ranges,
 * unsupported backend, ring size ranges, NULL desc means defaults, worker
 * count (num_threads, KILN_NUM_THREADS, SERIAL), two devices are
 * independent (a handle of one is rejected by the other), allocation
 * failures are reported and leak nothing, and the result / log id strings.
 */
#define _POSIX_C_SOURCE 200809L

#include "validate_util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1u;
}

/* The default worker count: one fewer than the CPUs, at least one (the
 * application's thread helps whenever it waits). */
static uint32_t default_workers(void)
{
    uint32_t n = cpu_count();
    return n > 256 ? 255 : n > 1 ? n - 1 : 1;
}

static kiln_device_desc logged_desc(void)
{
    kiln_device_desc d;
    memset(&d, 0, sizeof d);
    d.log_fn = th_log_fn;
    return d;
}

/* kiln_device_create fails with code/id and leaves *out NULL. */
static void create_fails(kiln_device_desc desc, kiln_result code, kiln_log_id id, int line)
{
    kiln_device *dev = (kiln_device *)(uintptr_t)0x1234;
    th_log_reset();
    kiln_result r = kiln_device_create(&desc, &dev);
    th_check(r == code, "kiln_device_create fails with the expected code", __FILE__, line);
    if (r != code)
        fprintf(stderr, "    got %s, expected %s\n", kiln_result_string(r),
                kiln_result_string(code));
    th_check(th_log_count() == 1 && th_log_last() == id, "kiln_device_create logs once with id",
             __FILE__, line);
    if (!(th_log_count() == 1 && th_log_last() == id))
        fprintf(stderr, "    logged %u times, last %s, expected %s\n", th_log_count(),
                kiln_log_id_string(th_log_last()), kiln_log_id_string(id));
    th_check(dev == NULL, "failed kiln_device_create writes NULL to *out_device", __FILE__, line);
    if (r == KILN_OK && dev && dev != (kiln_device *)(uintptr_t)0x1234)
        kiln_device_destroy(dev);
}

static kiln_device *create_ok(kiln_device_desc desc, int line)
{
    kiln_device *dev = NULL;
    th_log_reset();
    kiln_result r = kiln_device_create(&desc, &dev);
    th_check(r == KILN_OK && dev != NULL, "kiln_device_create succeeds", __FILE__, line);
    if (r != KILN_OK)
        fprintf(stderr, "    got %s\n", kiln_result_string(r));
    th_check(th_log_count() == 0, "successful kiln_device_create logs nothing", __FILE__, line);
    return r == KILN_OK ? dev : NULL;
}

static void test_null_out(void)
{
    kiln_device_desc d = logged_desc();
    CHECK_FAILS(kiln_device_create(&d, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    /* NULL desc and NULL out: still rejected (the log goes to stderr). */
    CHECK_RESULT(kiln_device_create(NULL, NULL), KILN_E_INVALID_ARG);
    /* Destroy of NULL is ignored. */
    kiln_device_destroy(NULL);
}

static void test_bad_enums(void)
{
    kiln_device_desc d = logged_desc();
    d.backend = (kiln_backend)3;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, __LINE__);
    d.backend = (kiln_backend)99;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, __LINE__);
    d.backend = (kiln_backend)-1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, __LINE__);

    d = logged_desc();
    d.exec_mode = (kiln_exec_mode)3;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, __LINE__);
    d.exec_mode = (kiln_exec_mode)0x7fffffff;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, __LINE__);

    /* Every valid value works. */
    for (int b = KILN_BACKEND_DEFAULT; b <= KILN_BACKEND_SOFT; b++) {
        for (int m = KILN_EXEC_DEFAULT; m <= KILN_EXEC_SERIAL; m++) {
            d = logged_desc();
            d.backend = (kiln_backend)b;
            d.exec_mode = (kiln_exec_mode)m;
            d.num_threads = 2;
            kiln_device *dev = create_ok(d, __LINE__);
            CHECK(dev && kiln_device_immediate_context(dev) != NULL);
            kiln_device_destroy(dev);
        }
    }
}

static void test_osmesa_unsupported(void)
{
#if KILN_HAVE_GL
    /* Built in: it creates (on either GL provider), and a provider name it
     * does not know is refused with one BACKEND_UNSUPPORTED log. */
    kiln_device_desc d = logged_desc();
    d.backend = KILN_BACKEND_OSMESA;
    const char *old = getenv("KILN_GL_PROVIDER");
    char saved[64] = "";
    if (old)
        snprintf(saved, sizeof saved, "%s", old);
    setenv("KILN_GL_PROVIDER", "no-such-provider", 1);
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_BACKEND_UNSUPPORTED, __LINE__);
    if (old)
        setenv("KILN_GL_PROVIDER", saved, 1);
    else
        unsetenv("KILN_GL_PROVIDER");
    kiln_device *dev = NULL;
    CHECK_RESULT(kiln_device_create(&d, &dev), KILN_OK);
    CHECK(dev != NULL);
    kiln_device_destroy(dev);
#else
    /* Not built in: UNSUPPORTED, not INVALID_ARG. */
    kiln_device_desc d = logged_desc();
    d.backend = KILN_BACKEND_OSMESA;
    create_fails(d, KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_UNSUPPORTED, __LINE__);
    d.exec_mode = KILN_EXEC_SERIAL;
    create_fails(d, KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_UNSUPPORTED, __LINE__);
#endif
}

static void test_ring_sizes(void)
{
    kiln_device_desc d = logged_desc();
    d.command_ring_capacity = 1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);
    d.command_ring_capacity = 1048577;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);
    d.command_ring_capacity = UINT32_MAX;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);

    d = logged_desc();
    d.transfer_ring_size = 1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);
    d.transfer_ring_size = 4095;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);
    d.transfer_ring_size = (1u << 30) + 1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);
    d.transfer_ring_size = UINT32_MAX;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, __LINE__);

    /* scene_budget: 0 (the default) or 64 KiB..1 GiB */
    d = logged_desc();
    d.scene_budget = 1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_SCENE_BUDGET, __LINE__);
    d.scene_budget = (64u << 10) - 1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_SCENE_BUDGET, __LINE__);
    d.scene_budget = (1u << 30) + 1;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_SCENE_BUDGET, __LINE__);
    d.scene_budget = UINT32_MAX;
    create_fails(d, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_SCENE_BUDGET, __LINE__);
    const uint32_t budgets[2] = {64u << 10, 1u << 30};
    for (int i = 0; i < 2; i++) {
        d.scene_budget = budgets[i];
        kiln_device *dev = create_ok(d, __LINE__);
        if (dev)
            kiln_device_destroy(dev);
    }

    /* The smallest valid sizes work, in both modes, including an upload
     * several times larger than the transfer ring (it is split) while the
     * command ring holds two commands. */
    for (int m = KILN_EXEC_ASYNC; m <= KILN_EXEC_SERIAL; m++) {
        d = logged_desc();
        d.command_ring_capacity = 2;
        d.transfer_ring_size = 4096;
        d.exec_mode = (kiln_exec_mode)m;
        d.num_threads = 2;
        kiln_device *dev = create_ok(d, __LINE__);
        if (!dev)
            continue;
        kiln_context *ctx = kiln_device_immediate_context(dev);
        kiln_buffer buf = {0};
        enum { N = 20000 };
        static unsigned char bytes[N];
        vu_pattern(bytes, N, 7);
        VOK(kiln_create_buffer(
            dev, &(kiln_buffer_desc){N, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0}, NULL,
            &buf));
        VOK(kiln_update_subresource(ctx, kiln_buffer_resource(buf), 0, NULL, bytes, 0, 0));
        for (int i = 0; i < 8; i++) {
            kiln_box box = {(uint32_t)i * 100, 0, 0, (uint32_t)i * 100 + 50, 1, 1};
            VOK(kiln_update_subresource(ctx, kiln_buffer_resource(buf), 0, &box, bytes + i * 100, 0,
                                        0));
        }
        CHECK(vu_buffer_equals(dev, buf, bytes));
        VOK(kiln_finish(ctx));
        VOK(kiln_destroy_buffer(dev, buf));
        kiln_device_destroy(dev);
    }
}

static void test_null_desc_defaults(void)
{
    unsetenv("KILN_NUM_THREADS");
    kiln_device *dev = NULL;
    CHECK_RESULT(kiln_device_create(NULL, &dev), KILN_OK);
    CHECK(dev != NULL);
    if (!dev)
        return;
    /* Defaults: soft backend, ASYNC, one worker fewer than the CPUs. */
    CHECK_EQ_INT(kiln_device_num_threads(dev), default_workers());
    kiln_context *ctx = kiln_device_immediate_context(dev);
    CHECK(ctx != NULL);
    kiln_device_stats s;
    memset(&s, 0xff, sizeof s);
    CHECK_RESULT(kiln_device_get_stats(dev, &s), KILN_OK);
    CHECK_EQ_INT(s.commands_queued, 0);
    CHECK_EQ_INT(s.commands_executed, 0);
    CHECK_EQ_INT(s.commands_in_flight, 0);
    /* It works: a buffer round trip through the default rings. */
    unsigned char bytes[256];
    vu_pattern(bytes, sizeof bytes, 3);
    kiln_buffer b = {0};
    CHECK_RESULT(kiln_create_buffer(dev, &(kiln_buffer_desc){256, 0, 0, 0}, NULL, &b), KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(b), 0, NULL, bytes, 0, 0),
                 KILN_OK);
    CHECK(vu_buffer_equals(dev, b, bytes));
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    kiln_device_destroy(dev);

    /* A zero desc is the same as NULL. */
    kiln_device_desc d = logged_desc();
    dev = create_ok(d, __LINE__);
    if (dev) {
        CHECK_EQ_INT(kiln_device_num_threads(dev), default_workers());
        kiln_device_destroy(dev);
    }
}

static void test_stats_args(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 1);
    CHECK_FAILS(kiln_device_get_stats(dev, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    kiln_device_stats s;
    memset(&s, 0xab, sizeof s);
    CHECK_RESULT(kiln_device_get_stats(NULL, &s), KILN_E_INVALID_ARG);
    kiln_device_destroy(dev);
}

static uint32_t threads_with_env(const char *value, kiln_exec_mode mode, uint32_t num_threads)
{
    if (value)
        setenv("KILN_NUM_THREADS", value, 1);
    else
        unsetenv("KILN_NUM_THREADS");
    kiln_device_desc d = logged_desc();
    d.exec_mode = mode;
    d.num_threads = num_threads;
    kiln_device *dev = create_ok(d, __LINE__);
    uint32_t n = dev ? kiln_device_num_threads(dev) : 0xdeadu;
    kiln_device_destroy(dev);
    return n;
}

static void test_num_threads(void)
{
    uint32_t cpus = default_workers();
    CHECK_EQ_INT(threads_with_env(NULL, KILN_EXEC_ASYNC, 0), cpus);
    CHECK_EQ_INT(threads_with_env("3", KILN_EXEC_ASYNC, 0), 3);
    CHECK_EQ_INT(threads_with_env("1", KILN_EXEC_ASYNC, 0), 1);
    CHECK_EQ_INT(threads_with_env("5", KILN_EXEC_DEFAULT, 0), 5);
    CHECK_EQ_INT(threads_with_env("256", KILN_EXEC_ASYNC, 0), 256);
    /* Outside 1..256 or not a number: the default. */
    CHECK_EQ_INT(threads_with_env("0", KILN_EXEC_ASYNC, 0), cpus);
    CHECK_EQ_INT(threads_with_env("257", KILN_EXEC_ASYNC, 0), cpus);
    CHECK_EQ_INT(threads_with_env("-3", KILN_EXEC_ASYNC, 0), cpus);
    CHECK_EQ_INT(threads_with_env("abc", KILN_EXEC_ASYNC, 0), cpus);
    CHECK_EQ_INT(threads_with_env("", KILN_EXEC_ASYNC, 0), cpus);
    CHECK_EQ_INT(threads_with_env("99999999999999999999", KILN_EXEC_ASYNC, 0), cpus);
    /* An explicit count wins over the variable. */
    CHECK_EQ_INT(threads_with_env("3", KILN_EXEC_ASYNC, 2), 2);
    CHECK_EQ_INT(threads_with_env(NULL, KILN_EXEC_ASYNC, 7), 7);
    /* SERIAL: no workers whatever is asked. */
    CHECK_EQ_INT(threads_with_env(NULL, KILN_EXEC_SERIAL, 0), 0);
    CHECK_EQ_INT(threads_with_env("4", KILN_EXEC_SERIAL, 0), 0);
    CHECK_EQ_INT(threads_with_env(NULL, KILN_EXEC_SERIAL, 4), 0);
    unsetenv("KILN_NUM_THREADS");
}

/* ---- two devices ---- */

static atomic_uint dev_b_logs;
static void log_b(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    CHECK(user == (void *)&dev_b_logs);
    atomic_fetch_add(&dev_b_logs, 1);
    th_log_fn(level, id, message, user);
}

/* The call fails with INVALID_HANDLE and logs once with STALE or WRONG_TYPE
 * (which one depends on what the other device has at that index). */
#define FAILS_FOREIGN(dev, call)                                                                   \
    VFAILS2(dev, call, KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE, KILN_LOG_HANDLE_WRONG_TYPE)

static void test_two_devices(void)
{
    kiln_device *a = th_device(KILN_EXEC_ASYNC, 2);
    kiln_device_desc db = logged_desc();
    db.log_fn = log_b;
    db.log_user = &dev_b_logs;
    db.exec_mode = KILN_EXEC_ASYNC;
    db.num_threads = 1;
    kiln_device *b = create_ok(db, __LINE__);
    if (!b) {
        kiln_device_destroy(a);
        return;
    }
    kiln_context *ca = kiln_device_immediate_context(a);
    kiln_context *cb = kiln_device_immediate_context(b);
    CHECK(ca != cb);

    /* Device A: five textures, one with a render target view; device B: one
     * buffer. A's later ids cannot alias anything on B. */
    kiln_texture ta[5];
    kiln_texture2d_desc td = {4,
                              4,
                              1,
                              1,
                              KILN_FORMAT_R8G8B8A8_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
                              0, 0};
    for (int i = 0; i < 5; i++)
        VOK(kiln_create_texture2d(a, &td, NULL, &ta[i]));
    kiln_rtv rva = {0};
    VOK(kiln_create_rtv(a, ta[4], NULL, &rva));
    kiln_buffer bb = {0};
    unsigned char bbytes[64];
    vu_pattern(bbytes, sizeof bbytes, 11);
    VOK(kiln_create_buffer(b,
                           &(kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0},
                           &(kiln_subresource_data){bbytes, 0}, &bb));
    CHECK(ta[4].id != bb.id && ta[3].id != bb.id && rva.id != bb.id);

    atomic_store(&dev_b_logs, 0);
    kiln_texture2d_desc out;
    memset(&out, 0xee, sizeof out);
    FAILS_FOREIGN(b, kiln_texture_get_desc(b, ta[4], &out));
    CHECK(vu_all_zero(&out, sizeof out));
    FAILS_FOREIGN(b, kiln_texture_get_desc(b, ta[0], &out));
    FAILS_FOREIGN(b, kiln_destroy_texture(b, ta[3]));
    kiln_srv sv = {0xffffffffu};
    FAILS_FOREIGN(b, kiln_create_srv(b, ta[4], NULL, &sv));
    CHECK_EQ_INT(sv.id, 0);
    FAILS_FOREIGN(b, kiln_clear_rtv(cb, rva, (float[4]){1, 0, 0, 1}));
    FAILS_FOREIGN(b, kiln_destroy_rtv(b, rva));
    unsigned char zeros[64] = {0};
    FAILS_FOREIGN(b,
                  kiln_update_subresource(cb, kiln_texture_resource(ta[4]), 0, NULL, zeros, 0, 0));
    kiln_mapped_subresource m;
    FAILS_FOREIGN(b, kiln_map(cb, kiln_texture_resource(ta[4]), 0, KILN_MAP_READ, 0, &m));
    FAILS_FOREIGN(b,
                  kiln_copy_resource(cb, kiln_buffer_resource(bb), kiln_texture_resource(ta[4])));
    /* Each of those was logged by B's logger, never A's. */
    CHECK_EQ_INT(atomic_load(&dev_b_logs), 9);

    /* A failure on A is not seen by B's logger. */
    atomic_store(&dev_b_logs, 0);
    CHECK_FAILS(kiln_texture_get_desc(a, (kiln_texture){0}, &out), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_NULL);
    CHECK_EQ_INT(atomic_load(&dev_b_logs), 0);

    /* A's objects are untouched by the rejected calls on B. */
    for (int i = 0; i < 5; i++) {
        VOK(kiln_texture_get_desc(a, ta[i], &out));
        CHECK_EQ_INT(out.width, 4);
    }
    VOK(kiln_clear_rtv(ca, rva, (float[4]){1, 0, 0, 1}));
    unsigned char red[64];
    for (int i = 0; i < 16; i++) {
        red[i * 4 + 0] = 255;
        red[i * 4 + 1] = 0;
        red[i * 4 + 2] = 0;
        red[i * 4 + 3] = 255;
    }
    CHECK(vu_texture_equals(a, ta[4], 0, red));
    CHECK(vu_buffer_equals(b, bb, bbytes));

    /* Destroying A leaves B working. */
    VOK(kiln_destroy_rtv(a, rva));
    for (int i = 0; i < 5; i++)
        VOK(kiln_destroy_texture(a, ta[i]));
    kiln_device_destroy(a);
    VOK(kiln_update_subresource(cb, kiln_buffer_resource(bb), 0, NULL, zeros, 0, 0));
    CHECK(vu_buffer_equals(b, bb, zeros));
    VOK(kiln_destroy_buffer(b, bb));
    kiln_device_destroy(b);
}

/* ---- allocation failures ---- */

typedef struct counting_alloc {
    atomic_long live_bytes;
    atomic_long live_blocks;
    atomic_long calls;
    atomic_long fail_after; /* calls allowed before failing; <0: never fail */
    atomic_int size_mismatch;
} counting_alloc;

static void *ca_alloc(size_t size, void *user)
{
    counting_alloc *c = user;
    long n = atomic_fetch_add(&c->calls, 1);
    long limit = atomic_load(&c->fail_after);
    if (limit >= 0 && n >= limit)
        return NULL;
    unsigned char *p = malloc(size + 16);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&c->live_bytes, (long)size);
    atomic_fetch_add(&c->live_blocks, 1);
    return p + 16;
}

static void ca_free(void *ptr, size_t size, void *user)
{
    counting_alloc *c = user;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - 16;
    size_t was;
    memcpy(&was, p, sizeof was);
    if (was != size)
        atomic_store(&c->size_mismatch, 1);
    atomic_fetch_sub(&c->live_bytes, (long)was);
    atomic_fetch_sub(&c->live_blocks, 1);
    free(p);
}

static void test_device_alloc_failures(void)
{
    for (int m = KILN_EXEC_ASYNC; m <= KILN_EXEC_SERIAL; m++) {
        static counting_alloc ca;
        int created = 0;
        for (long k = 0; k < 2000 && !created; k++) {
            atomic_store(&ca.live_bytes, 0);
            atomic_store(&ca.live_blocks, 0);
            atomic_store(&ca.calls, 0);
            atomic_store(&ca.fail_after, k);
            kiln_device_desc d = logged_desc();
            d.exec_mode = (kiln_exec_mode)m;
            d.num_threads = 2;
            d.allocator = (kiln_allocator){ca_alloc, ca_free, &ca};
            kiln_device *dev = (kiln_device *)(uintptr_t)0x1234;
            th_log_reset();
            kiln_result r = kiln_device_create(&d, &dev);
            if (r == KILN_OK) {
                created = 1;
                CHECK(dev != NULL);
                CHECK_EQ_INT(th_log_count(), 0);
                atomic_store(&ca.fail_after, -1);
                kiln_device_destroy(dev);
            } else {
                CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
                CHECK(dev == NULL);
                CHECK(th_log_count() == 1 && th_log_last() == KILN_LOG_DEVICE_ALLOC_FAILED);
                if (!(th_log_count() == 1 && th_log_last() == KILN_LOG_DEVICE_ALLOC_FAILED))
                    fprintf(stderr, "    k=%ld: logged %u, last %s\n", k, th_log_count(),
                            kiln_log_id_string(th_log_last()));
            }
            CHECK_EQ_INT(atomic_load(&ca.live_bytes), 0);
            CHECK_EQ_INT(atomic_load(&ca.live_blocks), 0);
        }
        CHECK(created);
        CHECK_EQ_INT(atomic_load(&ca.size_mismatch), 0);
    }
}

/* ---- strings ---- */

static void test_result_strings(void)
{
    static const struct {
        kiln_result r;
        const char *s;
    } all[] = {
        {KILN_OK, "KILN_OK"},
        {KILN_E_INVALID_ARG, "KILN_E_INVALID_ARG"},
        {KILN_E_INVALID_HANDLE, "KILN_E_INVALID_HANDLE"},
        {KILN_E_INVALID_CALL, "KILN_E_INVALID_CALL"},
        {KILN_E_OUT_OF_MEMORY, "KILN_E_OUT_OF_MEMORY"},
        {KILN_E_UNSUPPORTED, "KILN_E_UNSUPPORTED"},
        {KILN_E_WAS_STILL_DRAWING, "KILN_E_WAS_STILL_DRAWING"},
        {KILN_E_TIMEOUT, "KILN_E_TIMEOUT"},
        {KILN_E_DEVICE_LOST, "KILN_E_DEVICE_LOST"},
        {KILN_E_WOULD_DEADLOCK, "KILN_E_WOULD_DEADLOCK"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *s = kiln_result_string(all[i].r);
        CHECK(s != NULL && strcmp(s, all[i].s) == 0);
        if (s && strcmp(s, all[i].s) != 0)
            fprintf(stderr, "    %d: got \"%s\", expected \"%s\"\n", (int)all[i].r, s, all[i].s);
    }
    /* Unknown values: some string, not one of the known ones. */
    const kiln_result unknown[] = {(kiln_result)1, (kiln_result)-10, (kiln_result)-1000,
                                   (kiln_result)0x7fffffff};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = kiln_result_string(unknown[i]);
        CHECK(s != NULL);
        for (size_t j = 0; s && j < sizeof all / sizeof all[0]; j++)
            CHECK(strcmp(s, all[j].s) != 0);
    }
}

static void test_log_id_strings(void)
{
    static const char *const names[] = {
#define X(id, text) #id,
        KILN_LOG_IDS(X)
#undef X
    };
    CHECK_EQ_INT(sizeof names / sizeof names[0], KILN_LOG_ID_COUNT);
    for (int i = 0; i < (int)KILN_LOG_ID_COUNT; i++) {
        const char *s = kiln_log_id_string((kiln_log_id)i);
        CHECK(s != NULL && strcmp(s, names[i]) == 0);
        if (s && strcmp(s, names[i]) != 0)
            fprintf(stderr, "    id %d: got \"%s\", expected \"%s\"\n", i, s, names[i]);
    }
    /* Spot checks that the numbering is the header's. */
    CHECK(strcmp(kiln_log_id_string(KILN_LOG_NONE), "NONE") == 0);
    CHECK(strcmp(kiln_log_id_string(KILN_LOG_HANDLE_STALE), "HANDLE_STALE") == 0);
    CHECK(strcmp(kiln_log_id_string(KILN_LOG_COMMAND_FAILED), "COMMAND_FAILED") == 0);
    CHECK_EQ_INT(KILN_LOG_NONE, 0);
    /* Out of range: a string that names no id. */
    const kiln_log_id bad[] = {KILN_LOG_ID_COUNT, (kiln_log_id)(KILN_LOG_ID_COUNT + 100),
                               (kiln_log_id)-1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *s = kiln_log_id_string(bad[i]);
        CHECK(s != NULL);
        for (int j = 0; s && j < (int)KILN_LOG_ID_COUNT; j++)
            CHECK(strcmp(s, names[j]) != 0);
    }
}

static void test_format_sizes(void)
{
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_UNKNOWN), 0);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_R8G8B8A8_UNORM), 4);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_B8G8R8A8_UNORM), 4);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_R8_UNORM), 1);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_R32_FLOAT), 4);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_R32G32_FLOAT), 8);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_R32G32B32A32_FLOAT), 16);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_D32_FLOAT), 4);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_D24_UNORM_S8_UINT), 4);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_COUNT), 0);
    CHECK_EQ_INT(kiln_format_size((kiln_format)1000), 0);
    CHECK_EQ_INT(kiln_format_size((kiln_format)-1), 0);
}

int main(void)
{
    test_null_out();
    test_bad_enums();
    test_osmesa_unsupported();
    test_ring_sizes();
    test_null_desc_defaults();
    test_stats_args();
    test_num_threads();
    test_two_devices();
    test_device_alloc_failures();
    test_result_strings();
    test_log_id_strings();
    test_format_sizes();
    return th_exit();
}
