#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

th_log th_logs;
int th_passed, th_failed;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

void th_log_fn(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    (void)user;
    pthread_mutex_lock(&log_mu);
    th_logs.count++;
    if ((unsigned)id < KILN_LOG_ID_COUNT)
        th_logs.per_id[id]++;
    th_logs.last_id = id;
    snprintf(th_logs.last_message, sizeof th_logs.last_message, "%s", message);
    if (!th_logs.quiet && getenv("KILN_TEST_VERBOSE"))
        fprintf(stderr, "  [log %d %s] %s\n", (int)level, kiln_log_id_string(id), message);
    pthread_mutex_unlock(&log_mu);
}

void th_log_reset(void)
{
    pthread_mutex_lock(&log_mu);
    memset(&th_logs, 0, sizeof th_logs);
    pthread_mutex_unlock(&log_mu);
}

uint32_t th_log_count(void)
{
    pthread_mutex_lock(&log_mu);
    uint32_t n = th_logs.count;
    pthread_mutex_unlock(&log_mu);
    return n;
}

kiln_log_id th_log_last(void)
{
    pthread_mutex_lock(&log_mu);
    kiln_log_id id = th_logs.last_id;
    pthread_mutex_unlock(&log_mu);
    return id;
}

kiln_device *th_device_desc(kiln_device_desc desc)
{
    desc.log_fn = th_log_fn;
    /* The backend-neutral tests run on osmesa too (tests/CMakeLists.txt
     * adds *_osmesa variants with KILN_TEST_BACKEND=osmesa). */
    const char *b = getenv("KILN_TEST_BACKEND");
    if (desc.backend == KILN_BACKEND_DEFAULT && b && !strcmp(b, "osmesa"))
        desc.backend = KILN_BACKEND_OSMESA;
    kiln_device *dev = NULL;
    kiln_result r = kiln_device_create(&desc, &dev);
    if (r != KILN_OK) {
        fprintf(stderr, "FATAL: kiln_device_create: %s\n", kiln_result_string(r));
        exit(2);
    }
    return dev;
}

kiln_device *th_osmesa_device(void)
{
    kiln_device_desc d = {0};
    d.backend = KILN_BACKEND_OSMESA;
    d.log_fn = th_log_fn;
    kiln_device *dev = NULL;
    if (kiln_device_create(&d, &dev) != KILN_OK) {
        fprintf(stderr, "    (no osmesa device here)\n");
        return NULL;
    }
    return dev;
}

kiln_device *th_device(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device_desc d = {0};
    d.exec_mode = mode;
    d.num_threads = threads;
    return th_device_desc(d);
}

void th_check(int ok, const char *expr, const char *file, int line)
{
    if (ok) {
        th_passed++;
        return;
    }
    th_failed++;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, expr);
}

int th_exit(void)
{
    printf("%d passed, %d failed\n", th_passed, th_failed);
    return th_failed ? 1 : 0;
}
