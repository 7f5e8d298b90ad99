#define _POSIX_C_SOURCE 200809L /* nanosleep */
/*
 * Several contexts (kiln.h "Contexts"): streams fed by different threads,
 * ordered only by fences and sync tokens.
 *
 *  - producer/consumer on two threads, thousands of iterations: the producer
 *    uploads an iteration-dependent pattern into its own DEFAULT buffer and
 *    texture, copies them into shared DEFAULT resources and signals timeline
 *    value i (even i) or publishes a sync token (odd i); the consumer server-
 *    waits on that, copies the shared resources into its own STAGING ones,
 *    signals a second timeline that the producer server-waits on before it
 *    overwrites the shared resources again, and maps its staging copies:
 *    the bytes are always iteration i's. KILN_SYNC_ITERS sets the number of
 *    iterations (default 2000). Runs in ASYNC mode (two created contexts;
 *    the immediate context as producer) and in SERIAL mode.
 *  - kiln_context_create / destroy; the immediate context cannot be
 *    destroyed (CONTEXT_IMMEDIATE); destroying a context completes its
 *    queued work first and unmaps what it keeps mapped.
 *  - Map in a context whose earlier commands sit behind an unresolved server
 *    wait waits for them (DO_NOT_WAIT: WAS_STILL_DRAWING), while resources
 *    those commands do not use map at once and other contexts go on.
 */
#include "sync_util.h"

#include "api/test_hooks.h"

#include <pthread.h>

static kiln_device *dev;
static kiln_exec_mode mode;

#define BUF_BYTES 256
#define TEX_W 16
#define TEX_H 16
#define TEX_BYTES (TEX_W * TEX_H * 4)

static kiln_texture mk_texture(kiln_usage usage)
{
    kiln_texture2d_desc d = {TEX_W, TEX_H, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, usage,
                             usage == KILN_USAGE_STAGING ? 0 : KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture t = {0};
    SU_OK(kiln_create_texture2d(dev, &d, NULL, &t));
    return t;
}

/* ---- producer / consumer ---- */

typedef struct shared_state {
    kiln_context *prod, *cons;
    uint32_t iters;
    kiln_timeline tl_prod, tl_cons;
    kiln_buffer src_buf, shared_buf, stg_buf;
    kiln_texture src_tex, shared_tex, stg_tex;
    /* Tokens of odd iterations, published by the producer. */
    kiln_sync_token *tokens;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t published;
    /* Results (written by one thread each, read after join). */
    uint32_t prod_errors, cons_errors, mismatches, first_bad;
    kiln_result first_err;
} shared_state;

static uint32_t tex_seed(uint32_t i) { return i ^ 0x5a5a5a5au; }

static void note_error(uint32_t *counter, kiln_result *first, kiln_result r, const char *what,
                       uint32_t i)
{
    if (r == KILN_OK)
        return;
    if (*counter == 0) {
        fprintf(stderr, "    iteration %u: %s: %s\n", i, what, kiln_result_string(r));
        *first = r;
    }
    (*counter)++;
}

static void *producer_main(void *p)
{
    shared_state *s = p;
    kiln_context *c = s->prod;
    uint8_t buf[BUF_BYTES], tex[TEX_BYTES];
    kiln_result first = KILN_OK;
#define PCALL(call, i) note_error(&s->prod_errors, &first, (call), #call, i)
    for (uint32_t i = 1; i <= s->iters; i++) {
        if (i > 1) {
            /* Do not overwrite the shared resources before the consumer
             * has copied iteration i - 1 out of them. */
            kiln_fence f = {0};
            PCALL(kiln_create_fence(dev, s->tl_cons, i - 1, &f), i);
            PCALL(kiln_context_wait(c, f), i);
            PCALL(kiln_destroy_fence(dev, f), i);
        }
        su_pattern(buf, sizeof buf, i);
        su_pattern(tex, sizeof tex, tex_seed(i));
        PCALL(kiln_update_subresource(c, kiln_buffer_resource(s->src_buf), 0, NULL, buf, 0, 0), i);
        PCALL(kiln_update_subresource(c, kiln_texture_resource(s->src_tex), 0, NULL, tex, 0, 0), i);
        PCALL(kiln_copy_resource(c, kiln_buffer_resource(s->shared_buf),
                                 kiln_buffer_resource(s->src_buf)),
              i);
        PCALL(kiln_copy_subresource_region(c, kiln_texture_resource(s->shared_tex), 0, 0, 0, 0,
                                           kiln_texture_resource(s->src_tex), 0, NULL),
              i);
        if (i % 2 == 0) {
            PCALL(kiln_context_signal(c, s->tl_prod, i), i);
        } else {
            kiln_sync_token t;
            memset(&t, 0, sizeof t);
            PCALL(kiln_context_sync_token(c, &t), i);
            pthread_mutex_lock(&s->mu);
            s->tokens[i] = t;
            s->published = i;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
        }
    }
#undef PCALL
    return NULL;
}

static void *consumer_main(void *p)
{
    shared_state *s = p;
    kiln_context *c = s->cons;
    uint8_t want_buf[BUF_BYTES], want_tex[TEX_BYTES];
    kiln_result first = KILN_OK;
    kiln_resource stg_buf = kiln_buffer_resource(s->stg_buf),
                  stg_tex = kiln_texture_resource(s->stg_tex);
#define CCALL(call, i) note_error(&s->cons_errors, &first, (call), #call, i)
    for (uint32_t i = 1; i <= s->iters; i++) {
        if (i % 2 == 0) {
            kiln_fence f = {0};
            CCALL(kiln_create_fence(dev, s->tl_prod, i, &f), i);
            CCALL(kiln_context_wait(c, f), i);
            CCALL(kiln_destroy_fence(dev, f), i);
        } else {
            pthread_mutex_lock(&s->mu);
            while (s->published < i)
                pthread_cond_wait(&s->cv, &s->mu);
            kiln_sync_token t = s->tokens[i];
            pthread_mutex_unlock(&s->mu);
            CCALL(kiln_context_wait_sync_token(c, t), i);
        }
        CCALL(kiln_copy_resource(c, stg_buf, kiln_buffer_resource(s->shared_buf)), i);
        CCALL(kiln_copy_resource(c, stg_tex, kiln_texture_resource(s->shared_tex)), i);
        CCALL(kiln_context_signal(c, s->tl_cons, i), i);

        su_pattern(want_buf, sizeof want_buf, i);
        su_pattern(want_tex, sizeof want_tex, tex_seed(i));
        int ok = 1;
        kiln_mapped_subresource m;
        kiln_result r = kiln_map(c, stg_buf, 0, KILN_MAP_READ, 0, &m);
        CCALL(r, i);
        if (r == KILN_OK) {
            ok &= memcmp(m.data, want_buf, BUF_BYTES) == 0;
            CCALL(kiln_unmap(c, stg_buf, 0), i);
        }
        r = kiln_map(c, stg_tex, 0, KILN_MAP_READ, 0, &m);
        CCALL(r, i);
        if (r == KILN_OK) {
            for (uint32_t y = 0; y < TEX_H; y++)
                ok &= memcmp((const uint8_t *)m.data + (size_t)y * m.row_pitch,
                             want_tex + y * TEX_W * 4, TEX_W * 4) == 0;
            CCALL(kiln_unmap(c, stg_tex, 0), i);
        }
        if (!ok) {
            if (!s->mismatches)
                s->first_bad = i;
            s->mismatches++;
        }
    }
#undef CCALL
    return NULL;
}

static uint32_t iterations(void)
{
    const char *e = getenv("KILN_SYNC_ITERS");
    if (e && *e) {
        long n = strtol(e, NULL, 10);
        if (n >= 2 && n <= 10000000)
            return (uint32_t)n;
    }
    return 2000;
}

static void test_producer_consumer(uint32_t iters, int immediate_producer)
{
    shared_state s;
    memset(&s, 0, sizeof s);
    s.iters = iters;
    if (immediate_producer)
        s.prod = kiln_device_immediate_context(dev);
    else
        SU_OK(kiln_context_create(dev, &s.prod));
    SU_OK(kiln_context_create(dev, &s.cons));
    SU_OK(kiln_create_timeline(dev, 0, &s.tl_prod));
    SU_OK(kiln_create_timeline(dev, 0, &s.tl_cons));
    s.src_buf = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 0);
    s.shared_buf = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 0);
    s.stg_buf = su_buffer(dev, BUF_BYTES, KILN_USAGE_STAGING, 0);
    s.src_tex = mk_texture(KILN_USAGE_DEFAULT);
    s.shared_tex = mk_texture(KILN_USAGE_DEFAULT);
    s.stg_tex = mk_texture(KILN_USAGE_STAGING);
    s.tokens = calloc(iters + 1, sizeof *s.tokens);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    th_log_reset();

    pthread_t tp, tc;
    CHECK(pthread_create(&tp, NULL, producer_main, &s) == 0);
    CHECK(pthread_create(&tc, NULL, consumer_main, &s) == 0);
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);

    CHECK_EQ_INT(s.prod_errors, 0);
    CHECK_EQ_INT(s.cons_errors, 0);
    CHECK_EQ_INT(s.mismatches, 0);
    if (s.mismatches)
        fprintf(stderr, "    first wrong bytes at iteration %u of %u\n", s.first_bad, iters);
    CHECK_EQ_INT(th_log_count(), 0);

    /* Both timelines reached the end; the shared resources hold the last
     * iteration. */
    SU_OK(kiln_finish(s.prod));
    SU_OK(kiln_finish(s.cons));
    uint64_t v = 0;
    SU_OK(kiln_timeline_get_value(dev, s.tl_cons, &v));
    CHECK_EQ_INT(v, iters);
    SU_OK(kiln_timeline_get_value(dev, s.tl_prod, &v));
    CHECK_EQ_INT(v, iters - iters % 2);
    CHECK(su_buffer_is(dev, s.cons, s.shared_buf, BUF_BYTES, iters));

    if (!immediate_producer)
        SU_OK(kiln_context_destroy(s.prod));
    SU_OK(kiln_context_destroy(s.cons));
    SU_OK(kiln_destroy_timeline(dev, s.tl_prod));
    SU_OK(kiln_destroy_timeline(dev, s.tl_cons));
    SU_OK(kiln_destroy_buffer(dev, s.src_buf));
    SU_OK(kiln_destroy_buffer(dev, s.shared_buf));
    SU_OK(kiln_destroy_buffer(dev, s.stg_buf));
    SU_OK(kiln_destroy_texture(dev, s.src_tex));
    SU_OK(kiln_destroy_texture(dev, s.shared_tex));
    SU_OK(kiln_destroy_texture(dev, s.stg_tex));
    free(s.tokens);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
}

/* ---- create / destroy ---- */

typedef struct destroy_arg {
    kiln_context *ctx;
    atomic_int returned;
    kiln_result result;
} destroy_arg;

static void *destroy_main(void *p)
{
    destroy_arg *a = p;
    a->result = kiln_context_destroy(a->ctx);
    atomic_store(&a->returned, 1);
    return NULL;
}

static void test_create_destroy(void)
{
    kiln_context *imm = kiln_device_immediate_context(dev);
    enum { N = 4 };
    kiln_context *cs[N] = {0};
    kiln_buffer bufs[N];
    for (int i = 0; i < N; i++) {
        SU_OK(kiln_context_create(dev, &cs[i]));
        CHECK(cs[i] != NULL && cs[i] != imm);
        for (int j = 0; j < i; j++)
            CHECK(cs[i] != cs[j]);
        bufs[i] = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 0);
        uint8_t data[BUF_BYTES];
        su_pattern(data, sizeof data, 100 + (uint32_t)i);
        SU_OK(kiln_update_subresource(cs[i], kiln_buffer_resource(bufs[i]), 0, NULL, data, 0, 0));
    }
    /* Across contexts only synchronization orders work (kiln.h
     * "Contexts"): each writer's work completes before another reads. */
    for (int i = 0; i < N; i++)
        SU_OK(kiln_finish(cs[i]));
    for (int i = 0; i < N; i++)
        CHECK(su_buffer_is(dev, cs[(i + 1) % N], bufs[i], BUF_BYTES, 100 + (uint32_t)i));
    /* Destroyed out of creation order. */
    SU_OK(kiln_context_destroy(cs[1]));
    SU_OK(kiln_context_destroy(cs[3]));
    SU_OK(kiln_context_destroy(cs[0]));
    SU_OK(kiln_context_destroy(cs[2]));
    for (int i = 0; i < N; i++)
        SU_OK(kiln_destroy_buffer(dev, bufs[i]));

    CHECK_FAILS(kiln_context_create(dev, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_context_destroy(imm), KILN_E_INVALID_ARG, KILN_LOG_CONTEXT_IMMEDIATE);
    /* NULL device / context: logged to stderr, not to the device's logger. */
    th_log_reset();
    kiln_context *out = (kiln_context *)&out; /* any non-NULL value */
    CHECK_RESULT(kiln_context_create(NULL, &out), KILN_E_INVALID_ARG);
    CHECK(out == NULL); /* "zeroes its out-parameters" */
    CHECK_RESULT(kiln_context_destroy(NULL), KILN_E_INVALID_ARG);
    CHECK_EQ_INT(th_log_count(), 0);

    /* The immediate context still works after the refused destroy. */
    kiln_buffer b = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 7);
    CHECK(su_buffer_is(dev, imm, b, BUF_BYTES, 7));

    /* Destroying a context with queued work completes it first: the work
     * is held by a gate while another thread destroys the context. */
    kiln_context *c = NULL;
    SU_OK(kiln_context_create(dev, &c));
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer x = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 0);
    kiln_buffer s = su_buffer(dev, BUF_BYTES, KILN_USAGE_STAGING, 0);
    kiln_resource rx = kiln_buffer_resource(x);
    int w = 1;
    uint8_t data[BUF_BYTES];
    su_pattern(data, sizeof data, 55);
    CHECK_RESULT(kiln_test_hold(c, g, &rx, &w, 1), KILN_OK);
    SU_OK(kiln_update_subresource(c, rx, 0, NULL, data, 0, 0));
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(s), rx));
    kiln_fence f = {0};
    SU_OK(kiln_context_insert_fence(c, &f));
    kiln_test_gate_wait_entered(g, 1);
    destroy_arg da = {.ctx = c};
    atomic_init(&da.returned, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, destroy_main, &da) == 0);
    su_sleep_ms(50); /* gives a wrong early return the chance to show */
    CHECK_EQ_INT(atomic_load(&da.returned), 0);
    CHECK_POLL(dev, f, KILN_FENCE_ACTIVE);
    kiln_test_gate_open(g);
    pthread_join(t, NULL);
    CHECK_EQ_INT(da.result, KILN_OK);
    CHECK_POLL(dev, f, KILN_FENCE_SIGNALED);
    kiln_mapped_subresource m;
    /* Nothing that writes s is pending any more. */
    SU_OK(kiln_map(imm, kiln_buffer_resource(s), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m));
    CHECK(memcmp(m.data, data, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(imm, kiln_buffer_resource(s), 0));
    kiln_test_gate_destroy(g);
    SU_OK(kiln_destroy_fence(dev, f));

    /* Same without a gate, destroyed on this thread. */
    SU_OK(kiln_context_create(dev, &c));
    su_pattern(data, sizeof data, 56);
    SU_OK(kiln_update_subresource(c, rx, 0, NULL, data, 0, 0));
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(s), rx));
    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_map(imm, kiln_buffer_resource(s), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m));
    CHECK(memcmp(m.data, data, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(imm, kiln_buffer_resource(s), 0));

    /* A context destroyed while it keeps a resource mapped unmaps it. */
    SU_OK(kiln_context_create(dev, &c));
    SU_OK(kiln_map(c, kiln_buffer_resource(s), 0, KILN_MAP_WRITE, 0, &m));
    su_pattern(data, sizeof data, 57);
    memcpy(m.data, data, BUF_BYTES);
    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_map(imm, kiln_buffer_resource(s), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m));
    CHECK(memcmp(m.data, data, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(imm, kiln_buffer_resource(s), 0));

    SU_OK(kiln_destroy_buffer(dev, b));
    SU_OK(kiln_destroy_buffer(dev, x));
    SU_OK(kiln_destroy_buffer(dev, s));
}

/* ---- Map behind a server wait ---- */

typedef struct signal_arg {
    kiln_timeline tl;
    uint64_t value;
    kiln_result result;
} signal_arg;

static void *signal_main(void *p)
{
    signal_arg *a = p;
    su_sleep_ms(20); /* usually after the main thread blocks; either order is valid */
    a->result = kiln_timeline_signal(dev, a->tl, a->value);
    return NULL;
}

static void test_map_behind_server_wait(void)
{
    kiln_context *c = NULL, *other = NULL;
    SU_OK(kiln_context_create(dev, &c));
    SU_OK(kiln_context_create(dev, &other));
    kiln_timeline tl = {0};
    SU_OK(kiln_create_timeline(dev, 0, &tl));
    kiln_buffer x = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 60);
    kiln_buffer s = su_buffer(dev, BUF_BYTES, KILN_USAGE_STAGING, 0);
    kiln_buffer u = su_buffer(dev, BUF_BYTES, KILN_USAGE_STAGING, 61); /* untouched by c */
    kiln_buffer y = su_buffer(dev, BUF_BYTES, KILN_USAGE_DEFAULT, 0);
    kiln_resource rs = kiln_buffer_resource(s), ru = kiln_buffer_resource(u);
    uint8_t want[BUF_BYTES];
    kiln_mapped_subresource m;

    kiln_fence f1 = {0};
    SU_OK(kiln_create_fence(dev, tl, 1, &f1));
    SU_OK(kiln_context_wait(c, f1));
    SU_OK(kiln_copy_resource(c, rs, kiln_buffer_resource(x)));
    SU_RETURNS(kiln_map(c, rs, 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_E_WAS_STILL_DRAWING);
    CHECK(m.data == NULL);
    SU_RETURNS(kiln_map(c, rs, 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_E_WAS_STILL_DRAWING);
    /* A resource the held commands do not use maps at once, here and in
     * another context. */
    SU_OK(kiln_map(c, ru, 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m));
    su_pattern(want, sizeof want, 61);
    CHECK(memcmp(m.data, want, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(c, ru, 0));
    /* Another context's work is not held back. */
    CHECK(su_buffer_is(dev, other, x, BUF_BYTES, 60));
    uint8_t data[BUF_BYTES];
    su_pattern(data, sizeof data, 62);
    SU_OK(kiln_update_subresource(other, kiln_buffer_resource(y), 0, NULL, data, 0, 0));
    CHECK(su_buffer_is(dev, other, y, BUF_BYTES, 62));
    SU_OK(kiln_finish(other));
    /* Still held. */
    SU_RETURNS(kiln_map(c, rs, 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_E_WAS_STILL_DRAWING);
    /* Signaled from the CPU: the Map gets the copied bytes. */
    SU_OK(kiln_timeline_signal(dev, tl, 1));
    SU_OK(kiln_map(c, rs, 0, KILN_MAP_READ, 0, &m));
    su_pattern(want, sizeof want, 60);
    CHECK(m.data && memcmp(m.data, want, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(c, rs, 0));

    /* A blocking Map while another thread signals. */
    kiln_fence f2 = {0};
    SU_OK(kiln_create_fence(dev, tl, 2, &f2));
    SU_OK(kiln_context_wait(c, f2));
    SU_OK(kiln_copy_resource(c, rs, kiln_buffer_resource(y)));
    signal_arg sa = {tl, 2, KILN_E_INVALID_CALL};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, signal_main, &sa) == 0);
    SU_OK(kiln_map(c, rs, 0, KILN_MAP_READ, 0, &m));
    CHECK(m.data && memcmp(m.data, data, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(c, rs, 0));
    pthread_join(t, NULL);
    CHECK_EQ_INT(sa.result, KILN_OK);

    /* kiln_finish waits for the server wait too. */
    kiln_fence f3 = {0};
    SU_OK(kiln_create_fence(dev, tl, 3, &f3));
    SU_OK(kiln_context_wait(c, f3));
    su_pattern(data, sizeof data, 63);
    SU_OK(kiln_update_subresource(c, kiln_buffer_resource(y), 0, NULL, data, 0, 0));
    kiln_fence fc = {0};
    SU_OK(kiln_context_insert_fence(c, &fc));
    sa = (signal_arg){tl, 3, KILN_E_INVALID_CALL};
    CHECK(pthread_create(&t, NULL, signal_main, &sa) == 0);
    SU_OK(kiln_finish(c));
    CHECK_POLL(dev, fc, KILN_FENCE_SIGNALED);
    pthread_join(t, NULL);
    CHECK_EQ_INT(sa.result, KILN_OK);
    CHECK(su_buffer_is(dev, other, y, BUF_BYTES, 63));

    /* A server wait on an already signaled fence holds nothing. */
    SU_OK(kiln_context_wait(c, f1));
    SU_OK(kiln_copy_resource(c, rs, kiln_buffer_resource(x)));
    SU_OK(kiln_map(c, rs, 0, KILN_MAP_READ, 0, &m));
    su_pattern(want, sizeof want, 60);
    CHECK(m.data && memcmp(m.data, want, BUF_BYTES) == 0);
    SU_OK(kiln_unmap(c, rs, 0));

    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_context_destroy(other));
    kiln_fence fs[] = {f1, f2, f3, fc};
    for (int i = 0; i < 4; i++)
        SU_OK(kiln_destroy_fence(dev, fs[i]));
    SU_OK(kiln_destroy_timeline(dev, tl));
    kiln_buffer bs[] = {x, s, u, y};
    for (int i = 0; i < 4; i++)
        SU_OK(kiln_destroy_buffer(dev, bs[i]));
}

int main(void)
{
    uint32_t iters = iterations();
    static const kiln_exec_mode modes[] = {KILN_EXEC_ASYNC, KILN_EXEC_SERIAL};
    for (int i = 0; i < 2; i++) {
        mode = modes[i];
        fprintf(stderr, "-- %s\n", su_mode_name(mode));
        int before = th_failed;
        dev = th_device(mode, 0);
        th_log_reset();
        test_create_destroy();
        test_map_behind_server_wait();
        test_producer_consumer(iters, 0);
        if (mode == KILN_EXEC_ASYNC)
            test_producer_consumer(iters / 2, 1);
        kiln_device_destroy(dev);
        if (th_failed != before)
            fprintf(stderr, "   (%d failures in %s mode)\n", th_failed - before, su_mode_name(mode));
    }
    return th_exit();
}
