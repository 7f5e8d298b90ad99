/*
 * Helpers shared by the test_capture_*.c programs: replaying a capture
 * (src/capture/replay.c) into a list of images, with tightly packed RGBA8
 * or BGRA8 rows as the replay gave them. Header-only.
 */
#ifndef KILN_TEST_CAPTURE_UTIL_H
#define KILN_TEST_CAPTURE_UTIL_H

#include "capture/capture.h"
#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CU_MAX_IMAGES 64

typedef struct cu_image {
    kcap_image_kind kind;
    uint64_t frame;
    uint32_t target, slice, width, height, bpp;
    uint8_t *pixels; /* tight rows */
} cu_image;

typedef struct cu_images {
    cu_image v[CU_MAX_IMAGES];
    uint32_t n;
    uint64_t frames_reported;
} cu_images;

static inline void cu_collect(const kcap_image *img, void *user)
{
    cu_images *list = user;
    if (list->n == CU_MAX_IMAGES)
        return;
    cu_image *o = &list->v[list->n++];
    o->kind = img->kind;
    o->frame = img->frame;
    o->target = img->target;
    o->slice = img->slice;
    o->width = img->width;
    o->height = img->height;
    o->bpp = kiln_format_size(img->format);
    size_t row = (size_t)img->width * o->bpp;
    o->pixels = malloc(row * img->height);
    for (uint32_t y = 0; y < img->height && o->pixels; y++)
        memcpy(o->pixels + y * row, (const uint8_t *)img->pixels + (size_t)y * img->row_pitch, row);
}

static inline void cu_count_frame(const kcap_frame_stats *s, void *user)
{
    (void)s;
    ((cu_images *)user)->frames_reported++;
}

static inline void cu_free(cu_images *list)
{
    for (uint32_t i = 0; i < list->n; i++)
        free(list->v[i].pixels);
    memset(list, 0, sizeof *list);
}

/* The image of render target `target` (slice 0), or of presented `frame`. */
static inline const cu_image *cu_target(const cu_images *list, uint32_t target)
{
    for (uint32_t i = 0; i < list->n; i++)
        if (list->v[i].kind == KCAP_IMAGE_TARGET && list->v[i].target == target &&
            list->v[i].slice == 0)
            return &list->v[i];
    return NULL;
}

static inline const cu_image *cu_frame(const cu_images *list, uint64_t frame)
{
    for (uint32_t i = 0; i < list->n; i++)
        if (list->v[i].kind == KCAP_IMAGE_PRESENT && list->v[i].frame == frame)
            return &list->v[i];
    return NULL;
}

/* A logger for replay devices that keeps quiet (a test checks the report). */
static inline void cu_quiet(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    (void)level;
    (void)id;
    (void)message;
    (void)user;
}

/* Replays `bytes` into `out` (may be NULL); returns the report's result. */
static inline kiln_result cu_replay(const uint8_t *bytes, size_t len, kiln_exec_mode mode,
                                    uint32_t threads, void (*setup)(kiln_device *, void *),
                                    cu_images *out, kcap_replay_report *rep)
{
    kcap_replay_desc d = {
        .exec_mode = mode,
        .num_threads = threads,
        .image_fn = out ? cu_collect : NULL,
        .frame_fn = out ? cu_count_frame : NULL,
        .setup_fn = setup,
        .user = out,
        .log_fn = cu_quiet,
        .max_bytes = 256u << 20,
        .wait_timeout_ns = 20ull * 1000000000ull,
    };
    return kcap_replay(bytes, len, &d, rep);
}

/* How many records of `op` the capture holds (decoding stops at the
 * first bad record). */
static inline int cu_count_op(const uint8_t *bytes, size_t len, kcap_op op)
{
    int n = 0;
    for (size_t off = KCAP_HEADER_SIZE; bytes && off < len;) {
        kcap_call c;
        kcap_error err;
        size_t next;
        if (!kcap_decode(bytes, len, off, 0, &c, &next, &err))
            break;
        n += c.op == op;
        off = next;
    }
    return n;
}

static inline uint8_t *cu_read(const char *path, size_t *len)
{
    kcap_error err;
    uint8_t *b = kcap_read_file(path, len, &err);
    if (!b)
        fprintf(stderr, "    %s\n", err.message);
    return b;
}

#endif
