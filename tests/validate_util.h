/*
 * Helpers shared by the test_validate_*.c programs (usage-rule and argument
 * validation). Header-only: each test includes it once.
 *
 * VFAILS(dev, call, code, id): CHECK_FAILS plus "nothing was queued"
 * (kiln_device_get_stats commands_queued unchanged across the call).
 * VFAILS2: as VFAILS where kiln.h leaves the message id open between two
 * candidates (each use says why).
 * vu_read_texture / vu_read_buffer: read bytes back through a STAGING copy
 * and Map READ, rows tightly packed, so a test can prove a rejected call left
 * a resource as it was.
 */
#ifndef KILN_TEST_VALIDATE_UTIL_H
#define KILN_TEST_VALIDATE_UTIL_H

#include "harness.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t vu_queued(kiln_device *dev)
{
    kiln_device_stats s;
    memset(&s, 0, sizeof s);
    if (kiln_device_get_stats(dev, &s) != KILN_OK)
        return UINT64_MAX;
    return s.commands_queued;
}

#define VFAILS(dev, call, code, id)                                                                \
    do {                                                                                           \
        uint64_t vq_ = vu_queued(dev);                                                             \
        CHECK_FAILS(call, code, id);                                                               \
        th_check(vu_queued(dev) == vq_, #call " queues nothing", __FILE__, __LINE__);              \
    } while (0)

#define VFAILS2(dev, call, code, id1, id2)                                                         \
    do {                                                                                           \
        uint64_t vq_ = vu_queued(dev);                                                             \
        th_log_reset();                                                                            \
        CHECK_RESULT(call, code);                                                                  \
        kiln_log_id vl_ = th_log_last();                                                           \
        th_check(th_log_count() == 1 && (vl_ == (id1) || vl_ == (id2)),                            \
                 #call " logs once with " #id1 " or " #id2, __FILE__, __LINE__);                   \
        if (!(th_log_count() == 1 && (vl_ == (id1) || vl_ == (id2))))                              \
            fprintf(stderr, "    logged %u times, last id %s\n", th_log_count(),                   \
                    kiln_log_id_string(vl_));                                                      \
        th_check(vu_queued(dev) == vq_, #call " queues nothing", __FILE__, __LINE__);              \
    } while (0)

/* The call succeeds and logs nothing. */
#define VOK(call)                                                                                  \
    do {                                                                                           \
        th_log_reset();                                                                            \
        CHECK_RESULT(call, KILN_OK);                                                               \
        th_check(th_log_count() == 0, #call " logs nothing", __FILE__, __LINE__);                  \
        if (th_log_count() != 0)                                                                   \
            fprintf(stderr, "    logged %u times, last id %s\n", th_log_count(),                   \
                    kiln_log_id_string(th_log_last()));                                            \
    } while (0)

static inline int vu_all_zero(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

static inline uint32_t vu_mip_dim(uint32_t d, uint32_t mip)
{
    d >>= mip;
    return d ? d : 1;
}

/* Bytes of one tightly packed subresource. */
static inline size_t vu_sub_bytes(const kiln_texture2d_desc *d, uint32_t sub)
{
    uint32_t mip = sub % d->mip_levels;
    return (size_t)vu_mip_dim(d->width, mip) * vu_mip_dim(d->height, mip) *
           kiln_format_size(d->format);
}

/* Reads subresource `sub` of `tex` (any usage) into `out`, tightly packed.
 * Returns 1 on success. Must not be called while `tex` is mapped. */
static inline int vu_read_texture(kiln_device *dev, kiln_texture tex, uint32_t sub, void *out)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture2d_desc d;
    if (kiln_texture_get_desc(dev, tex, &d) != KILN_OK)
        return 0;
    kiln_texture2d_desc sd = d;
    sd.usage = KILN_USAGE_STAGING;
    sd.bind_flags = 0;
    sd.cpu_access = KILN_CPU_ACCESS_READ;
    kiln_texture st = {0};
    if (kiln_create_texture2d(dev, &sd, NULL, &st) != KILN_OK)
        return 0;
    int ok = 0;
    kiln_mapped_subresource m;
    if (kiln_copy_resource(ctx, kiln_texture_resource(st), kiln_texture_resource(tex)) == KILN_OK &&
        kiln_map(ctx, kiln_texture_resource(st), sub, KILN_MAP_READ, 0, &m) == KILN_OK) {
        uint32_t mip = sub % d.mip_levels;
        uint32_t w = vu_mip_dim(d.width, mip), h = vu_mip_dim(d.height, mip);
        size_t row = (size_t)w * kiln_format_size(d.format);
        for (uint32_t y = 0; y < h; y++)
            memcpy((unsigned char *)out + y * row,
                   (const unsigned char *)m.data + (size_t)y * m.row_pitch, row);
        ok = kiln_unmap(ctx, kiln_texture_resource(st), sub) == KILN_OK;
    }
    kiln_destroy_texture(dev, st);
    return ok;
}

static inline int vu_read_buffer(kiln_device *dev, kiln_buffer buf, void *out)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer_desc d;
    if (kiln_buffer_get_desc(dev, buf, &d) != KILN_OK)
        return 0;
    kiln_buffer_desc sd = {d.size, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
    kiln_buffer st = {0};
    if (kiln_create_buffer(dev, &sd, NULL, &st) != KILN_OK)
        return 0;
    int ok = 0;
    kiln_mapped_subresource m;
    if (kiln_copy_resource(ctx, kiln_buffer_resource(st), kiln_buffer_resource(buf)) == KILN_OK &&
        kiln_map(ctx, kiln_buffer_resource(st), 0, KILN_MAP_READ, 0, &m) == KILN_OK) {
        memcpy(out, m.data, d.size);
        ok = kiln_unmap(ctx, kiln_buffer_resource(st), 0) == KILN_OK;
    }
    kiln_destroy_buffer(dev, st);
    return ok;
}

/* 1 if subresource `sub` of `tex` reads back equal to `expect` (tight). */
static inline int vu_texture_equals(kiln_device *dev, kiln_texture tex, uint32_t sub,
                                    const void *expect)
{
    kiln_texture2d_desc d;
    if (kiln_texture_get_desc(dev, tex, &d) != KILN_OK)
        return 0;
    size_t n = vu_sub_bytes(&d, sub);
    unsigned char *got = malloc(n ? n : 1);
    int ok = got && vu_read_texture(dev, tex, sub, got) && memcmp(got, expect, n) == 0;
    free(got);
    return ok;
}

static inline int vu_buffer_equals(kiln_device *dev, kiln_buffer buf, const void *expect)
{
    kiln_buffer_desc d;
    if (kiln_buffer_get_desc(dev, buf, &d) != KILN_OK)
        return 0;
    unsigned char *got = malloc(d.size ? d.size : 1);
    int ok = got && vu_read_buffer(dev, buf, got) && memcmp(got, expect, d.size) == 0;
    free(got);
    return ok;
}

/* Deterministic byte pattern: byte i of pattern `seed`. */
static inline void vu_pattern(void *p, size_t n, uint32_t seed)
{
    unsigned char *b = (unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)((i * 131u + seed * 29u + (i >> 8) * 7u + 1u) & 0xffu);
}

#endif
