/*
 * Shader names: a capture records a shader by the name its desc was
 * registered under on the device, and a replay recreates it from the desc
 * registered under that name on the replaying device. The built-in effects
 * are always there, as "kiln.<effect>", matched against what
 * kiln_effect_get gives in this process (its pixel kernels depend on the
 * CPU's SIMD level). Each device has its own registry (no global state);
 * its mutex makes registration and lookup safe from any thread.
 */
#include "../api/api.h"
#include "capture.h"

#include <string.h>

typedef enum kind { KIND_VS = 0, KIND_PS, KIND_GS } kind;

typedef struct entry {
    char name[KCAP_NAME_MAX + 1];
    kind kind;
    kiln_vertex_shader_desc vs;
    kiln_pixel_shader_desc ps;
    kiln_geometry_shader_desc gs;
} entry;

/* Whether an entry is the shader of kind k with this (fn, user): the
 * function pointers are compared as the one of the entry's kind. */
static bool same_fn(const entry *e, kind k, kiln_vs_fn vfn, kiln_ps_fn pfn, kiln_gs_fn gfn, void *user)
{
    switch (k) {
    case KIND_VS: return e->vs.fn == vfn && e->vs.user == user;
    case KIND_PS: return e->ps.fn == pfn && e->ps.user == user;
    default: return e->gs.fn == gfn && e->gs.user == user;
    }
}

typedef struct kcap_registry {
    pthread_mutex_t mu;
    entry *entries;
    uint32_t count, capacity;
} kcap_registry;

static const char *const effect_names[KILN_EFFECT_COUNT] = {"kiln.vertex_color", "kiln.texture",
                                                            "kiln.texture_color", "kiln.lit"};

static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > KCAP_NAME_MAX || strncmp(name, "kiln.", 5) == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-' || c == ':'))
            return false;
    }
    return true;
}

/* The device's registry, made on first use under the device's domain
 * mutex (its lifetime is the device's). */
static kcap_registry *registry(kiln_device *dev, bool create)
{
    pthread_mutex_lock(&dev->dom->mu);
    kcap_registry *r = dev->capture_registry;
    if (!r && create && (r = kb_calloc(&dev->env, sizeof *r)) != NULL) {
        pthread_mutex_init(&r->mu, NULL);
        dev->capture_registry = r;
    }
    pthread_mutex_unlock(&dev->dom->mu);
    return r;
}

void kcap_registry_free(kiln_device *dev)
{
    kcap_registry *r = dev->capture_registry;
    if (!r)
        return;
    kb_free(&dev->env, r->entries, sizeof(entry) * r->capacity);
    pthread_mutex_destroy(&r->mu);
    kb_free(&dev->env, r, sizeof *r);
    dev->capture_registry = NULL;
}

static kiln_result add(kiln_device *dev, const char *api, const char *name, kind pixel,
                       const kiln_vertex_shader_desc *vs, const kiln_pixel_shader_desc *ps,
                       const kiln_geometry_shader_desc *gs)
{
    if (!name || !name_ok(name))
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_CAPTURE_SHADER_NAME, api,
                       "name \"%.80s\": 1..%u of A-Z a-z 0-9 _ . - :, not starting with \"kiln.\"",
                       name ? name : "(null)", KCAP_NAME_MAX);
    kcap_registry *r = registry(dev, true);
    if (!r)
        return kb_fail(&dev->env, KILN_E_OUT_OF_MEMORY, KILN_LOG_OUT_OF_MEMORY, api, "registry");
    kiln_result res = KILN_OK;
    pthread_mutex_lock(&r->mu);
    entry *e = NULL;
    for (uint32_t i = 0; i < r->count && !e; i++)
        if (r->entries[i].kind == pixel && strcmp(r->entries[i].name, name) == 0)
            e = &r->entries[i];
    if (e) {
        bool same = pixel == KIND_PS   ? e->ps.fn == ps->fn && e->ps.user == ps->user
                    : pixel == KIND_VS ? e->vs.fn == vs->fn && e->vs.user == vs->user
                                       : e->gs.fn == gs->fn && e->gs.user == gs->user;
        if (!same)
            res = kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_CAPTURE_SHADER_NAME, api,
                          "\"%s\" is registered with another function or user pointer", name);
        pthread_mutex_unlock(&r->mu);
        return res;
    }
    if (r->count == r->capacity) {
        uint32_t cap = r->capacity ? r->capacity * 2 : 16;
        entry *n = kb_alloc(&dev->env, sizeof(entry) * cap);
        if (!n) {
            pthread_mutex_unlock(&r->mu);
            return kb_fail(&dev->env, KILN_E_OUT_OF_MEMORY, KILN_LOG_OUT_OF_MEMORY, api,
                           "registry");
        }
        if (r->count)
            memcpy(n, r->entries, sizeof(entry) * r->count);
        kb_free(&dev->env, r->entries, sizeof(entry) * r->capacity);
        r->entries = n;
        r->capacity = cap;
    }
    e = &r->entries[r->count++];
    memset(e, 0, sizeof *e);
    strcpy(e->name, name);
    e->kind = pixel;
    if (pixel == KIND_PS)
        e->ps = *ps;
    else if (pixel == KIND_VS)
        e->vs = *vs;
    else
        e->gs = *gs;
    pthread_mutex_unlock(&r->mu);
    return KILN_OK;
}

kiln_result kiln_capture_register_vertex_shader(kiln_device *dev, const char *name,
                                                const kiln_vertex_shader_desc *desc)
{
    static const char api[] = "kiln_capture_register_vertex_shader";
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "device is NULL");
    if (!desc || !desc->fn)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "desc or desc->fn is NULL");
    return add(dev, api, name, KIND_VS, desc, NULL, NULL);
}

kiln_result kiln_capture_register_pixel_shader(kiln_device *dev, const char *name,
                                               const kiln_pixel_shader_desc *desc)
{
    static const char api[] = "kiln_capture_register_pixel_shader";
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "device is NULL");
    if (!desc || !desc->fn)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "desc or desc->fn is NULL");
    return add(dev, api, name, KIND_PS, NULL, desc, NULL);
}

kiln_result kiln_capture_register_geometry_shader(kiln_device *dev, const char *name,
                                                  const kiln_geometry_shader_desc *desc)
{
    static const char api[] = "kiln_capture_register_geometry_shader";
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "device is NULL");
    if (!desc || !desc->fn)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "desc or desc->fn is NULL");
    return add(dev, api, name, KIND_GS, NULL, NULL, desc);
}

/* The registered entry matching a desc's (fn, user); the name is copied
 * out because the entry array may move once the mutex is released. */
static const char *find_name(kiln_device *dev, kind pixel, kiln_vs_fn vfn, kiln_ps_fn pfn,
                             kiln_gs_fn gfn, void *user, char out[KCAP_NAME_MAX + 1])
{
    for (int e = 0; e < KILN_EFFECT_COUNT && pixel != KIND_GS; e++) {
        kiln_vertex_shader_desc vs;
        kiln_pixel_shader_desc ps;
        kiln_effect_get((kiln_effect)e, &vs, &ps);
        if (pixel ? ps.fn == pfn && ps.user == user : vs.fn == vfn && vs.user == user)
            return effect_names[e];
    }
    kcap_registry *r = registry(dev, false);
    if (!r)
        return NULL;
    const char *found = NULL;
    pthread_mutex_lock(&r->mu);
    for (uint32_t i = 0; i < r->count && !found; i++) {
        const entry *e = &r->entries[i];
        if (e->kind == pixel && same_fn(e, pixel, vfn, pfn, gfn, user)) {
            strcpy(out, e->name);
            found = out;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return found;
}

/* Names live in a per-thread buffer: valid until the thread's next call. */
static _Thread_local char name_buf[KCAP_NAME_MAX + 1];

const char *kcap_registry_vs_name(kiln_device *dev, const kiln_vertex_shader_desc *d)
{
    return find_name(dev, KIND_VS, d->fn, NULL, NULL, d->user, name_buf);
}

const char *kcap_registry_ps_name(kiln_device *dev, const kiln_pixel_shader_desc *d)
{
    return find_name(dev, KIND_PS, NULL, d->fn, NULL, d->user, name_buf);
}

const char *kcap_registry_gs_name(kiln_device *dev, const kiln_geometry_shader_desc *d)
{
    return find_name(dev, KIND_GS, NULL, NULL, d->fn, d->user, name_buf);
}

static bool find_desc(kiln_device *dev, const char *name, kind pixel, kiln_vertex_shader_desc *vs,
                      kiln_pixel_shader_desc *ps, kiln_geometry_shader_desc *gs)
{
    for (int e = 0; e < KILN_EFFECT_COUNT && pixel != KIND_GS; e++)
        if (strcmp(name, effect_names[e]) == 0)
            return kiln_effect_get((kiln_effect)e, vs, ps) == KILN_OK;
    kcap_registry *r = registry(dev, false);
    if (!r)
        return false;
    bool found = false;
    pthread_mutex_lock(&r->mu);
    for (uint32_t i = 0; i < r->count && !found; i++) {
        const entry *e = &r->entries[i];
        if (e->kind == pixel && strcmp(e->name, name) == 0) {
            if (vs)
                *vs = e->vs;
            if (ps)
                *ps = e->ps;
            if (gs)
                *gs = e->gs;
            found = true;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return found;
}

bool kcap_registry_vs(kiln_device *dev, const char *name, kiln_vertex_shader_desc *out)
{
    return find_desc(dev, name, KIND_VS, out, NULL, NULL);
}

bool kcap_registry_ps(kiln_device *dev, const char *name, kiln_pixel_shader_desc *out)
{
    return find_desc(dev, name, KIND_PS, NULL, out, NULL);
}

bool kcap_registry_gs(kiln_device *dev, const char *name, kiln_geometry_shader_desc *out)
{
    return find_desc(dev, name, KIND_GS, NULL, NULL, out);
}
