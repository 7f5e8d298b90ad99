/* Display targets in plain memory: the NULL target (discards frames), the
 * MEMORY target (hands each frame to the application) and the PNG target
 * (writes numbered files with stb_image_write). */
#include "winsys.h"

#include <stb/stb_image_write.h>
#include <stdio.h>
#include <string.h>

typedef struct mem_winsys {
    kw_winsys base;
    const kb_env *env;
    kiln_frame_fn fn;
    void *user;
    char pattern[512];
} mem_winsys;

static kiln_result mem_create(kw_winsys *ws, uint32_t w, uint32_t h, uint32_t *stride, kw_target **out)
{
    mem_winsys *m = (mem_winsys *)ws;
    kw_mem_target *t = kb_calloc(m->env, sizeof *t);
    if (!t)
        return KILN_E_OUT_OF_MEMORY;
    t->w = w;
    t->h = h;
    t->stride = w * 4;
    t->pixels = kb_alloc(m->env, (size_t)t->stride * h);
    if (!t->pixels) {
        kb_free(m->env, t, sizeof *t);
        return KILN_E_OUT_OF_MEMORY;
    }
    *stride = t->stride;
    *out = (kw_target *)t;
    return KILN_OK;
}

static void *mem_map(kw_winsys *ws, kw_target *dt)
{
    (void)ws;
    return ((kw_mem_target *)dt)->pixels;
}

static void mem_unmap(kw_winsys *ws, kw_target *dt)
{
    (void)ws;
    (void)dt;
}

static void mem_destroy_target(kw_winsys *ws, kw_target *dt)
{
    mem_winsys *m = (mem_winsys *)ws;
    kw_mem_target *t = (kw_mem_target *)dt;
    kb_free(m->env, t->pixels, (size_t)t->stride * t->h);
    kb_free(m->env, t, sizeof *t);
}

static void mem_destroy(kw_winsys *ws)
{
    mem_winsys *m = (mem_winsys *)ws;
    kb_free(m->env, m, sizeof *m);
}

static kiln_result null_display(kw_winsys *ws, kw_target *dt, uint64_t frame)
{
    (void)ws;
    (void)dt;
    (void)frame;
    return KILN_OK;
}

static kiln_result memory_display(kw_winsys *ws, kw_target *dt, uint64_t frame)
{
    mem_winsys *m = (mem_winsys *)ws;
    kw_mem_target *t = (kw_mem_target *)dt;
    kiln_frame f = {t->pixels, t->w, t->h, t->stride, ws->native_format, frame};
    m->fn(&f, m->user);
    return KILN_OK;
}

static kiln_result png_display(kw_winsys *ws, kw_target *dt, uint64_t frame)
{
    mem_winsys *m = (mem_winsys *)ws;
    kw_mem_target *t = (kw_mem_target *)dt;
    char path[600];
    snprintf(path, sizeof path, m->pattern, (unsigned)frame);
    /* Alpha is written as stored; stbi_write_png returns 0 on failure. */
    if (!stbi_write_png(path, (int)t->w, (int)t->h, 4, t->pixels, (int)t->stride))
        return KILN_E_INVALID_CALL;
    return KILN_OK;
}

static kiln_result make(const kb_env *env, kiln_format fmt, kiln_result (*display)(kw_winsys *, kw_target *, uint64_t),
                        mem_winsys **out)
{
    mem_winsys *m = kb_calloc(env, sizeof *m);
    if (!m)
        return KILN_E_OUT_OF_MEMORY;
    m->env = env;
    m->base = (kw_winsys){fmt, mem_create, mem_map, mem_unmap, display, mem_destroy_target, NULL, mem_destroy};
    *out = m;
    return KILN_OK;
}

kiln_result kw_null_create(const kb_env *env, kw_winsys **out)
{
    mem_winsys *m;
    kiln_result r = make(env, KILN_FORMAT_R8G8B8A8_UNORM, null_display, &m);
    *out = r == KILN_OK ? &m->base : NULL;
    return r;
}

kiln_result kw_memory_create(const kb_env *env, kiln_format format, kiln_frame_fn fn, void *user,
                             kw_winsys **out)
{
    mem_winsys *m;
    kiln_result r = make(env, format, memory_display, &m);
    if (r == KILN_OK) {
        m->fn = fn;
        m->user = user;
    }
    *out = r == KILN_OK ? &m->base : NULL;
    return r;
}

kiln_result kw_png_create(const kb_env *env, const char *pattern, kw_winsys **out)
{
    mem_winsys *m;
    kiln_result r = make(env, KILN_FORMAT_R8G8B8A8_UNORM, png_display, &m);
    if (r == KILN_OK)
        snprintf(m->pattern, sizeof m->pattern, "%s", pattern ? pattern : "frame-%05u.png");
    *out = r == KILN_OK ? &m->base : NULL;
    return r;
}
