/*
 * scenes.h - what the kiln_demo runner (kiln_demo.c) and its scenes
 * (scenes.c) share.
 *
 * A scene records one frame into the runner's canvas texture with kiln
 * calls, and knows on the CPU what that frame must look like. Scenes create
 * their textures and views through demo_new_texture / demo_new_rtv, which
 * the runner destroys when the scene ends. Every kiln call goes through TRY:
 * on failure it prints the call and the result string and makes the
 * enclosing function return -1, which stops the run (exit status 1).
 *
 * Everything here runs on the main thread.
 */
#ifndef KILN_DEMO_SCENES_H
#define KILN_DEMO_SCENES_H

#include "kiln.h"

#include <stddef.h>
#include <stdint.h>

/* Every texture of the demo: the byte order PNG wants. */
#define DEMO_FORMAT KILN_FORMAT_R8G8B8A8_UNORM
#define DEMO_MAX_OWNED 32
#define DEMO_MAX_SCENES 16

typedef enum demo_owned_kind { DEMO_OWNED_TEXTURE, DEMO_OWNED_RTV } demo_owned_kind;

typedef struct demo {
    kiln_device *dev;
    kiln_context *ctx; /* the device's immediate context */
    uint32_t w, h;     /* canvas size */
    const char *scene; /* name of the scene being run, for messages */
    /* Objects the current scene created, destroyed in reverse order when it
     * ends (on failure the device destroys whatever is left). */
    struct {
        demo_owned_kind kind;
        uint32_t id;
    } owned[DEMO_MAX_OWNED];
    uint32_t nowned;
} demo;

#define TRY(d, call)                                                                               \
    do {                                                                                           \
        kiln_result r_ = (call);                                                                   \
        if (r_ != KILN_OK)                                                                         \
            return demo_fail_call((d), #call, r_, __FILE__, __LINE__);                             \
    } while (0)

/* Both print "kiln_demo: scene NAME: ..." on stderr and return -1. */
int demo_fail_call(const demo *d, const char *call, kiln_result r, const char *file, int line);
int demo_fail(const demo *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A one-mip DEMO_FORMAT texture owned by the current scene. */
int demo_new_texture(demo *d, uint32_t w, uint32_t h, uint32_t array_size, kiln_usage usage,
                     uint32_t bind, uint32_t cpu_access, kiln_texture *out);
/* A render-target view of one array slice, owned by the current scene. */
int demo_new_rtv(demo *d, kiln_texture t, uint32_t slice, kiln_rtv *out);

static inline kiln_resource demo_res(kiln_texture t) { return kiln_texture_resource(t); }

typedef struct scene {
    const char *name;
    const char *summary;
    size_t state_size; /* the runner passes setup a zeroed block this big */
    int (*setup)(demo *d, void *state);
    void (*teardown)(void *state); /* frees what setup allocated; may be NULL;
                                      called even when setup failed */
    /* Records frame f into canvas (W x H, DEMO_FORMAT, DEFAULT, render
     * target and shader resource; zero-filled when the scene starts). */
    int (*frame)(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f);
    /* What frame f must look like: W * H tightly packed RGBA8 texels. */
    void (*expect)(const demo *d, uint32_t f, uint8_t *img);
} scene;

extern const scene demo_scenes[];
extern const size_t demo_num_scenes;

#endif
