/* GL contexts from OSMesa or surfaceless EGL (provider.h), and the
 * function table loader (glapi.h). */
#include "provider.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KILN_HAVE_OSMESA
#define KILN_HAVE_OSMESA 0
#endif
#ifndef KILN_HAVE_EGL
#define KILN_HAVE_EGL 0
#endif

#if KILN_HAVE_OSMESA
#include <GL/osmesa.h>
#endif
#if KILN_HAVE_EGL
#include <EGL/egl.h>
#include <EGL/eglext.h>
#endif

/* ---- the function table ---- */

/* get_proc hands out void *, the table holds function pointers: they are
 * copied bytewise, which POSIX (dlsym) guarantees to be meaningful. */
_Static_assert(sizeof(void *) == sizeof(PFNGLGETERRORPROC), "function and object pointers differ");

typedef struct entry {
    const char *name; /* without "gl" */
    size_t offset;
    bool required;
    uint32_t version;
    const char *extension;
} entry;

#define REQ true
#define OPT false
static const entry entries[] = {
#define KG_GL_ENTRY(type, fn, need, ver, ext) {#fn, offsetof(kg_gl, fn), need, ver, ext},
    KG_GL_FUNCTIONS(KG_GL_ENTRY)
#undef KG_GL_ENTRY
};
#undef REQ
#undef OPT

bool kg_gl_has_extension(const kg_gl *gl, const char *name)
{
    GLint n = 0;
    gl->GetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; i++) {
        const char *e = (const char *)gl->GetStringi(GL_EXTENSIONS, (GLuint)i);
        if (e && strcmp(e, name) == 0)
            return true;
    }
    return false;
}

static void *resolve(void *(*get_proc)(const char *), const char *name)
{
    char full[64];
    snprintf(full, sizeof full, "gl%s", name);
    return get_proc(full);
}

bool kg_gl_load(kg_gl *gl, void *(*get_proc)(const char *name), char *missing, size_t n)
{
    memset(gl, 0, sizeof *gl);
    if (n)
        missing[0] = '\0';
    /* The queries come first: the other entries' presence is decided by
     * asking the context. */
    void *p[4] = {resolve(get_proc, "GetError"), resolve(get_proc, "GetString"),
                  resolve(get_proc, "GetStringi"), resolve(get_proc, "GetIntegerv")};
    memcpy(&gl->GetError, &p[0], sizeof p[0]);
    memcpy(&gl->GetString, &p[1], sizeof p[1]);
    memcpy(&gl->GetStringi, &p[2], sizeof p[2]);
    memcpy(&gl->GetIntegerv, &p[3], sizeof p[3]);
    if (!p[0] || !p[1] || !p[2] || !p[3]) {
        if (n)
            snprintf(missing, n, "glGetError, glGetString, glGetStringi or glGetIntegerv");
        return false;
    }
    GLint major = 0, minor = 0, mask = 0;
    gl->GetIntegerv(GL_MAJOR_VERSION, &major);
    gl->GetIntegerv(GL_MINOR_VERSION, &minor);
    if (major >= 3) /* GL_CONTEXT_PROFILE_MASK exists from 3.2 on */
        gl->GetIntegerv(GL_CONTEXT_PROFILE_MASK, &mask);
    gl->GetError(); /* a 2.x context rejects the 3.x queries: not an error here */
    gl->version = (uint32_t)(major * 10 + minor);
    gl->core = (mask & GL_CONTEXT_CORE_PROFILE_BIT) != 0;

    bool ok = true;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        const entry *e = &entries[i];
        bool present =
            gl->version >= e->version || (e->extension && kg_gl_has_extension(gl, e->extension));
        void *f = present ? resolve(get_proc, e->name) : NULL;
        memcpy((char *)gl + e->offset, &f, sizeof f);
        if (!f && e->required && ok) {
            ok = false;
            if (n)
                snprintf(missing, n, "gl%s (GL %u.%u%s%s)", e->name, e->version / 10,
                         e->version % 10, e->extension ? " or " : "",
                         e->extension ? e->extension : "");
        }
    }
    return ok;
}

/* ---- the providers ---- */

struct kg_context {
    kg_provider_kind kind;
    bool threads_ignored;
    char renderer[128];
#if KILN_HAVE_OSMESA
    OSMesaContext osmesa;
    uint32_t pixel; /* the 1x1 RGBA buffer OSMesa has to be made current on */
#endif
#if KILN_HAVE_EGL
    EGLDisplay dpy;
    EGLContext egl;
#endif
};

#if KILN_HAVE_OSMESA || KILN_HAVE_EGL
/* Orders screen creation process-wide: the environment edits, and the
 * provider state below. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

#if KILN_HAVE_OSMESA
static bool osmesa_screen_made; /* OSMesa's one llvmpipe screen exists */
#endif
#if KILN_HAVE_EGL
static EGLDisplay egl_display = EGL_NO_DISPLAY; /* the surfaceless display, once asked for */
#endif

static kiln_result fail(char *err, size_t errlen, kiln_result r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static kiln_result fail(char *err, size_t errlen, kiln_result r, const char *fmt, ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return r;
}

#if KILN_HAVE_OSMESA || KILN_HAVE_EGL
/* An environment variable set for the duration of one screen creation
 * and then put back as it was. Called with `lock` held. */
typedef struct env_save {
    const char *name;
    char *old; /* strdup'd previous value, or NULL when it was unset */
    bool set;
} env_save;

static void env_push(env_save *s, const char *name, const char *value)
{
    const char *old = getenv(name);
    s->name = name;
    s->old = old ? strdup(old) : NULL;
    s->set = setenv(name, value, 1) == 0;
}

static void env_pop(env_save *s)
{
    if (s->set) {
        if (s->old)
            setenv(s->name, s->old, 1);
        else
            unsetenv(s->name);
    }
    free(s->old);
    s->old = NULL;
}

static void threads_push(env_save *s, uint32_t threads)
{
    char value[16];
    s->set = false;
    s->old = NULL;
    if (threads == 0)
        return;
    snprintf(value, sizeof value, "%u", (unsigned)threads);
    env_push(s, "LP_NUM_THREADS", value);
}

/* After the context is current: load the table and check the minimum. */
static kiln_result finish(kg_context *c, kg_gl *gl, void *(*get_proc)(const char *), char *err,
                          size_t errlen)
{
    char missing[128];
    bool loaded = kg_gl_load(gl, get_proc, missing, sizeof missing);
    const char *renderer = gl->GetString ? (const char *)gl->GetString(GL_RENDERER) : NULL;
    if (!renderer)
        return fail(err, errlen, KILN_E_DEVICE_LOST,
                    "the current GL context answers no GL_RENDERER");
    snprintf(c->renderer, sizeof c->renderer, "%s", renderer);
    if (gl->version < 33 || !gl->core)
        return fail(err, errlen, KILN_E_UNSUPPORTED, "%s gives GL %u.%u %s; kiln needs 3.3 core",
                    c->renderer, gl->version / 10, gl->version % 10,
                    gl->core ? "core" : "compatibility");
    if (!loaded)
        return fail(err, errlen, KILN_E_UNSUPPORTED, "%s lacks %s", c->renderer, missing);
    return KILN_OK;
}
#endif

/* ---- OSMesa ---- */

#if KILN_HAVE_OSMESA
static void *osmesa_proc(const char *name)
{
    OSMESAproc f = OSMesaGetProcAddress(name);
    void *p;
    memcpy(&p, &f, sizeof p);
    return p;
}

static OSMesaContext osmesa_new(int major, int minor)
{
    /* No depth, stencil or accumulation: the dummy framebuffer is never
     * drawn to, FBOs carry the real attachments. */
    /* clang-format off */
    const int attribs[] = {
        OSMESA_FORMAT, OSMESA_RGBA,
        OSMESA_DEPTH_BITS, 0,
        OSMESA_STENCIL_BITS, 0,
        OSMESA_ACCUM_BITS, 0,
        OSMESA_PROFILE, OSMESA_CORE_PROFILE,
        OSMESA_CONTEXT_MAJOR_VERSION, major,
        OSMESA_CONTEXT_MINOR_VERSION, minor,
        0};
    /* clang-format on */
    return OSMesaCreateContextAttribs(attribs, NULL);
}

static void osmesa_release(kg_context *c)
{
    /* Unbind first, so the thread's current context never points at a
     * destroyed one. */
    OSMesaMakeCurrent(NULL, NULL, 0, 0, 0);
    OSMesaDestroyContext(c->osmesa);
    c->osmesa = NULL;
}

static kiln_result osmesa_create(kg_context *c, uint32_t threads, kg_gl *gl, char *err,
                                 size_t errlen)
{
    env_save env = {0};
    pthread_mutex_lock(&lock);
    /* OSMesa makes its llvmpipe screen inside the process's first context
     * creation (call_once) and keeps it until exit. */
    bool first = !osmesa_screen_made;
    if (first)
        threads_push(&env, threads);
    else
        c->threads_ignored = threads > 0;
    c->osmesa = osmesa_new(4, 5);
    if (!c->osmesa)
        c->osmesa = osmesa_new(3, 3);
    osmesa_screen_made = true;
    if (first)
        env_pop(&env);
    pthread_mutex_unlock(&lock);
    if (!c->osmesa)
        return fail(err, errlen, KILN_E_UNSUPPORTED,
                    "OSMesaCreateContextAttribs gave neither a 4.5 nor a 3.3 core context");
    if (!OSMesaMakeCurrent(c->osmesa, &c->pixel, GL_UNSIGNED_BYTE, 1, 1)) {
        OSMesaDestroyContext(c->osmesa);
        c->osmesa = NULL;
        return fail(err, errlen, KILN_E_DEVICE_LOST, "OSMesaMakeCurrent failed");
    }
    kiln_result r = finish(c, gl, osmesa_proc, err, errlen);
    if (r != KILN_OK)
        osmesa_release(c);
    return r;
}
#endif

/* ---- surfaceless EGL ---- */

#if KILN_HAVE_EGL
static void *egl_proc(const char *name)
{
    void (*f)(void) = eglGetProcAddress(name);
    void *p;
    memcpy(&p, &f, sizeof p);
    return p;
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *s = list; s && (s = strstr(s, word)) != NULL; s += n) {
        if ((s == list || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\0'))
            return true;
    }
    return false;
}

/* The surfaceless display, initialized. Called with `lock` held.
 *
 * kiln initializes it when it finds it not initialized, and never
 * terminates it. eglGetPlatformDisplay returns the same surfaceless
 * EGLDisplay to every caller in the process, and EGL 1.5 does not count
 * initializations: an eglTerminate would destroy the contexts of anyone
 * else using it. Each terminate also unloads swrast_dri.so, which loses an
 * allocation (LeakSanitizer: 128 bytes per cycle, Mesa 22.3). And keeping
 * it gives OSMesa's rule: one llvmpipe screen per provider and process,
 * its threads fixed by whoever made it. */
static kiln_result egl_display_get(uint32_t threads, bool *threads_ignored, EGLDisplay *out,
                                   char *err, size_t errlen)
{
    if (egl_display == EGL_NO_DISPLAY) {
        const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
        if (!has_word(client, "EGL_MESA_platform_surfaceless"))
            return fail(err, errlen, KILN_E_UNSUPPORTED,
                        "EGL has no EGL_MESA_platform_surfaceless (Mesa's libEGL is needed)");
        /* EGL 1.5's eglGetPlatformDisplay takes EGLAttrib, the extension's
         * EGLint; with no attributes they are the same call. */
        bool ext = has_word(client, "EGL_EXT_platform_base");
        void *p = egl_proc(ext ? "eglGetPlatformDisplayEXT" : "eglGetPlatformDisplay");
        EGLDisplay dpy = EGL_NO_DISPLAY;
        if (p && ext) {
            PFNEGLGETPLATFORMDISPLAYEXTPROC get;
            memcpy(&get, &p, sizeof p);
            dpy = get(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        } else if (p) {
            PFNEGLGETPLATFORMDISPLAYPROC get;
            memcpy(&get, &p, sizeof p);
            dpy = get(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        }
        if (dpy == EGL_NO_DISPLAY)
            return fail(err, errlen, KILN_E_UNSUPPORTED,
                        "eglGetPlatformDisplay(surfaceless) failed");
        egl_display = dpy;
    }
    *out = egl_display;
    if (eglQueryString(egl_display, EGL_VERSION)) {
        /* Initialized (by kiln before, or by someone else): its screen
         * exists. */
        *threads_ignored = threads > 0;
        return KILN_OK;
    }
    /* The screen is made here: the thread count, and software rendering
     * rather than a GPU render node, are decided by this call. */
    env_save env, soft = {0};
    threads_push(&env, threads);
    if (!getenv("LIBGL_ALWAYS_SOFTWARE"))
        env_push(&soft, "LIBGL_ALWAYS_SOFTWARE", "true");
    EGLBoolean ok = eglInitialize(egl_display, NULL, NULL);
    env_pop(&soft);
    env_pop(&env);
    if (!ok)
        return fail(err, errlen, KILN_E_UNSUPPORTED,
                    "eglInitialize(surfaceless) failed: EGL error 0x%x", (unsigned)eglGetError());
    return KILN_OK;
}

static EGLContext egl_new(EGLDisplay dpy, EGLConfig cfg, int major, int minor)
{
    /* clang-format off */
    const EGLint attribs[] = {
        EGL_CONTEXT_MAJOR_VERSION, major,
        EGL_CONTEXT_MINOR_VERSION, minor,
        EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
        EGL_NONE};
    /* clang-format on */
    return eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, attribs);
}

static void egl_release(kg_context *c)
{
    eglMakeCurrent(c->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(c->dpy, c->egl);
    c->egl = EGL_NO_CONTEXT;
    /* The thread's EGL state (bound API, last error) would otherwise live
     * until the thread exits. */
    eglReleaseThread();
}

static kiln_result egl_create(kg_context *c, uint32_t threads, kg_gl *gl, char *err, size_t errlen)
{
    EGLDisplay dpy = EGL_NO_DISPLAY;
    pthread_mutex_lock(&lock);
    kiln_result r = egl_display_get(threads, &c->threads_ignored, &dpy, err, errlen);
    pthread_mutex_unlock(&lock);
    if (r != KILN_OK)
        return r;
    c->dpy = dpy;

    const char *exts = eglQueryString(dpy, EGL_EXTENSIONS);
    const char *why = NULL;
    EGLConfig cfg = EGL_NO_CONFIG_KHR;
    if (!has_word(exts, "EGL_KHR_surfaceless_context"))
        why = "EGL lacks EGL_KHR_surfaceless_context";
    else if (!has_word(exts, "EGL_KHR_create_context"))
        why = "EGL lacks EGL_KHR_create_context";
    else if (!eglBindAPI(EGL_OPENGL_API))
        why = "eglBindAPI(EGL_OPENGL_API) failed";
    else if (!has_word(exts, "EGL_KHR_no_config_context")) {
        /* Any config will do, as nothing draws to a surface; one that
         * could make a pbuffer is what every driver offers. */
        /* clang-format off */
        const EGLint want[] = {
            EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
            EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
            EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8,
            EGL_NONE};
        /* clang-format on */
        EGLint count = 0;
        if (!eglChooseConfig(dpy, want, &cfg, 1, &count) || count < 1)
            why = "eglChooseConfig found no pbuffer-capable OpenGL config";
    }
    if (!why) {
        c->egl = egl_new(dpy, cfg, 4, 5);
        if (c->egl == EGL_NO_CONTEXT)
            c->egl = egl_new(dpy, cfg, 3, 3);
        if (c->egl == EGL_NO_CONTEXT)
            why = "eglCreateContext gave neither a 4.5 nor a 3.3 core context";
    }
    if (why) {
        eglReleaseThread();
        return fail(err, errlen, KILN_E_UNSUPPORTED, "%s", why);
    }
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, c->egl)) {
        egl_release(c);
        return fail(err, errlen, KILN_E_DEVICE_LOST, "eglMakeCurrent(no surface) failed");
    }
    r = finish(c, gl, egl_proc, err, errlen);
    if (r != KILN_OK)
        egl_release(c);
    return r;
}
#endif

/* ---- the interface ---- */

bool kg_provider_built(kg_provider_kind kind)
{
    switch (kind) {
    case KG_PROVIDER_AUTO:
        return KILN_HAVE_OSMESA || KILN_HAVE_EGL;
    case KG_PROVIDER_OSMESA:
        return KILN_HAVE_OSMESA;
    case KG_PROVIDER_EGL:
        return KILN_HAVE_EGL;
    }
    return false;
}

kiln_result kg_context_create(kg_provider_kind kind, uint32_t threads, kg_gl *gl, kg_context **out,
                              char *err, size_t errlen)
{
    *out = NULL;
    memset(gl, 0, sizeof *gl);
    if (errlen)
        err[0] = '\0';
    bool from_env = false;
    if (kind == KG_PROVIDER_AUTO) {
        const char *env = getenv("KILN_GL_PROVIDER");
        from_env = env && env[0];
        if (env && strcmp(env, "osmesa") == 0)
            kind = KG_PROVIDER_OSMESA;
        else if (env && strcmp(env, "egl") == 0)
            kind = KG_PROVIDER_EGL;
        else if (env && env[0])
            return fail(err, errlen, KILN_E_INVALID_ARG,
                        "KILN_GL_PROVIDER=%s is not a GL provider: use osmesa or egl", env);
        else
            kind = KILN_HAVE_OSMESA ? KG_PROVIDER_OSMESA : KG_PROVIDER_EGL;
    }
    if (kind != KG_PROVIDER_OSMESA && kind != KG_PROVIDER_EGL)
        return fail(err, errlen, KILN_E_INVALID_ARG, "not a kg_provider_kind");
    if (!kg_provider_built(kind)) {
        const char *name = kind == KG_PROVIDER_OSMESA ? "osmesa" : "egl";
        return fail(err, errlen, KILN_E_UNSUPPORTED,
                    "%s%s%sthe %s GL provider is not built: install %s and rebuild",
                    from_env ? "KILN_GL_PROVIDER=" : "", from_env ? name : "",
                    from_env ? ", but " : "", name,
                    kind == KG_PROVIDER_OSMESA ? "libosmesa6-dev" : "libegl-dev");
    }

    kg_context *c = calloc(1, sizeof *c);
    if (!c)
        return fail(err, errlen, KILN_E_OUT_OF_MEMORY, "out of memory for a GL context");
    c->kind = kind;
    kiln_result r = KILN_E_UNSUPPORTED;
#if KILN_HAVE_OSMESA
    if (kind == KG_PROVIDER_OSMESA)
        r = osmesa_create(c, threads, gl, err, errlen);
#endif
#if KILN_HAVE_EGL
    if (kind == KG_PROVIDER_EGL)
        r = egl_create(c, threads, gl, err, errlen);
#endif
    if (r != KILN_OK) {
        memset(gl, 0, sizeof *gl);
        free(c);
        return r;
    }
    *out = c;
    return KILN_OK;
}

void kg_context_destroy(kg_context *c)
{
    if (!c)
        return;
#if KILN_HAVE_OSMESA
    if (c->kind == KG_PROVIDER_OSMESA)
        osmesa_release(c);
#endif
#if KILN_HAVE_EGL
    if (c->kind == KG_PROVIDER_EGL)
        egl_release(c);
#endif
    free(c);
}

const char *kg_context_provider(const kg_context *c)
{
    return c->kind == KG_PROVIDER_OSMESA ? "osmesa" : "egl";
}

const char *kg_context_renderer(const kg_context *c) { return c->renderer; }

bool kg_context_threads_ignored(const kg_context *c) { return c->threads_ignored; }

GLuint kg_gl_compile(const kg_gl *gl, GLenum type, const char *src, size_t len, char *info, size_t info_size)
{
    GLuint s = gl->CreateShader(type);
    const GLchar *text = src;
    GLint n = (GLint)len;
    gl->ShaderSource(s, 1, &text, &n);
    gl->CompileShader(s);
    GLint ok = 0;
    gl->GetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (ok)
        return s;
    if (info_size) {
        info[0] = 0;
        gl->GetShaderInfoLog(s, (GLsizei)info_size, NULL, info);
    }
    gl->DeleteShader(s);
    return 0;
}
