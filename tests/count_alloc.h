/*
 * A kiln_allocator that counts: live bytes, their peak and the number of
 * allocations, under a mutex (kiln allocates on every thread that
 * executes). Header-only: each test includes it once.
 *
 *     counter cnt = COUNTER_INIT;
 *     kiln_device_desc d = {.allocator = COUNTER_ALLOCATOR(&cnt)};
 *
 * or counter_device(&cnt, mode, threads, &result) for a device counted so.
 */
#ifndef KILN_TEST_COUNT_ALLOC_H
#define KILN_TEST_COUNT_ALLOC_H

#include "kiln.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct counter {
    pthread_mutex_t mu;
    size_t live, peak;
    uint64_t allocs;
} counter;

#define COUNTER_INIT {.mu = PTHREAD_MUTEX_INITIALIZER}
#define COUNTER_ALLOCATOR(c) {counter_alloc, counter_free, (c)}

static void *counter_alloc(size_t size, void *user)
{
    counter *c = user;
    pthread_mutex_lock(&c->mu);
    c->live += size;
    c->allocs++;
    if (c->live > c->peak)
        c->peak = c->live;
    pthread_mutex_unlock(&c->mu);
    return malloc(size);
}

static void counter_free(void *p, size_t size, void *user)
{
    counter *c = user;
    pthread_mutex_lock(&c->mu);
    if (p)
        c->live -= size;
    pthread_mutex_unlock(&c->mu);
    free(p);
}

/* Reads under the mutex (executing threads may be allocating). */
static inline uint64_t counter_allocs(counter *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t n = c->allocs;
    pthread_mutex_unlock(&c->mu);
    return n;
}

static inline size_t counter_live(counter *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->live;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* A device whose every allocation goes through c (NULL, with *r, when it
 * cannot be created). */
static inline kiln_device *counter_device(counter *c, kiln_exec_mode mode, uint32_t threads, kiln_result *r)
{
    kiln_device_desc d = {.exec_mode = mode, .num_threads = threads, .allocator = COUNTER_ALLOCATOR(c)};
    kiln_device *dev = NULL;
    *r = kiln_device_create(&d, &dev);
    return dev;
}

static inline size_t counter_peak(counter *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->peak;
    pthread_mutex_unlock(&c->mu);
    return n;
}

#endif
