/*
 * gl/provider: a GL context for the osmesa backend, from one of two
 * providers of Mesa's llvmpipe:
 *
 *   osmesa  libOSMesa (Mesa up to 25.0; Debian: libosmesa6-dev)
 *   egl     surfaceless EGL, EGL_MESA_platform_surfaceless (Mesa's
 *           replacement for OSMesa from 25.1 on; Debian: libegl-dev)
 *
 * Which ones exist is fixed at build time (KILN_HAVE_OSMESA,
 * KILN_HAVE_EGL, set by gl.cmake); which one a context uses is chosen at
 * run time (kg_provider_kind, or the environment variable
 * KILN_GL_PROVIDER=osmesa|egl for KG_PROVIDER_AUTO).
 *
 * Contract:
 * - A context is created current on the calling thread, stays current on
 *   it, and is destroyed on it. The backend calls this on its dedicated GL
 *   thread and never moves the context. Nothing here is shared between
 *   contexts: no share lists, each has its own objects.
 * - Any number of contexts may exist at once, on different threads, with
 *   either provider; creation and destruction may race freely (one
 *   process-wide mutex orders the parts that need it).
 * - Both providers render with the default framebuffer of a 1x1 dummy
 *   (OSMesa) or no surface at all (EGL): all rendering goes to FBOs.
 *
 * llvmpipe's threads. llvmpipe reads LP_NUM_THREADS once, when it creates
 * its screen (pipe_screen), and has that many rasterizer threads
 * ("llvmpipe-N", plus as many unnamed compute threads and a disk-cache
 * thread) running by the time the screen's first context exists. Every context on a screen
 * shares its one rasterizer: contexts bin in parallel on their own
 * threads, their scenes rasterize one at a time, in queue order. There is
 * one screen per provider and process, kept until exit:
 *   osmesa  libOSMesa makes its screen inside the process's first
 *           OSMesaCreateContext* (call_once) and frees it at exit;
 *   egl     eglGetPlatformDisplay(surfaceless) is one EGLDisplay for the
 *           whole process, its screen made by eglInitialize; kiln
 *           initializes it when it finds it uninitialized and never
 *           terminates it (provider.c says why).
 * So the first kg_context_create of each provider in the process fixes
 * the thread count for the process; a later `threads` > 0 is ignored (the
 * context is still created) and kg_context_threads_ignored says so. The
 * same holds when something else in the process made the screen first:
 * kiln sees that for EGL (the display is already initialized), not for
 * OSMesa. Verified with Mesa 22.3 by counting the "llvmpipe-N" threads:
 * 3 after a first OSMesa context asked for 3, still 3 after it was
 * destroyed and after a second asked for 1; EGL alike, on its own screen.
 *
 * During screen creation LP_NUM_THREADS is set with setenv under the
 * mutex and then restored to its previous value (or unset), so it leaks
 * into no other GL user; another thread reading the environment at that
 * moment is the one hazard (setenv is not thread-safe in POSIX). `threads`
 * = 0 leaves the environment alone: the user's LP_NUM_THREADS, else one
 * rasterizer thread per CPU. llvmpipe caps the count (LP_MAX_THREADS, 32
 * in Mesa 22.3: asking for 40 gives 32), and its LP_NUM_THREADS=0
 * (rasterize on the calling thread) cannot be asked for here: 0 means the
 * default.
 *
 * The EGL provider asks for software rendering. Surfaceless EGL otherwise
 * loads the driver of the first GPU render node it finds (e.g. radeonsi),
 * and only when that fails ("DRI2: failed to load driver", as on a
 * machine without /dev/dri) does eglInitialize retry with software,
 * swrast_dri.so = llvmpipe. Mesa's documented switch,
 * LIBGL_ALWAYS_SOFTWARE=true, is set like LP_NUM_THREADS, only around
 * eglInitialize, unless the user set LIBGL_ALWAYS_SOFTWARE (any value:
 * theirs wins, e.g. =false to try a GPU). GALLIUM_DRIVER (llvmpipe by
 * default, softpipe, zink...) is left to the user for both providers;
 * kg_context_renderer tells what was picked.
 */
#ifndef KILN_GL_PROVIDER_H
#define KILN_GL_PROVIDER_H

#include "glapi.h"
#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kg_provider_kind {
    KG_PROVIDER_AUTO = 0, /* KILN_GL_PROVIDER, else OSMesa when built in, else EGL */
    KG_PROVIDER_OSMESA,
    KG_PROVIDER_EGL
} kg_provider_kind;

/* One GL context and what it was made current with. Opaque. */
typedef struct kg_context kg_context;

/* Creates a GL context on the calling thread and makes it current: GL 4.5
 * core when the implementation has it, else at least 3.3 core with
 * GL_ARB_clip_control and GL_ARB_direct_state_access; then loads *gl for
 * it (every REQ entry of glapi.h present).
 *
 * `kind` AUTO reads KILN_GL_PROVIDER: "osmesa" or "egl" picks that one;
 * unset or empty means OSMesa when built in, else EGL; any other value is
 * an error. `threads` > 0 asks llvmpipe for that many rasterizer threads
 * (see the header comment for when that takes effect); 0 leaves it to
 * llvmpipe.
 *
 * On success *out is the context and KILN_OK is returned. On failure *out
 * is NULL, *gl is zeroed, nothing stays current or allocated, a one-line
 * reason is written to err (errlen bytes; err may be NULL if errlen is 0),
 * and the result is:
 *   KILN_E_UNSUPPORTED   the provider is not built in (also when
 *                        KILN_GL_PROVIDER names it), or this GL cannot give
 *                        the context (no surfaceless platform, no 3.3 core,
 *                        a required function or extension missing)
 *   KILN_E_INVALID_ARG   `kind` or KILN_GL_PROVIDER is not a provider
 *   KILN_E_OUT_OF_MEMORY the context record could not be allocated
 *   KILN_E_DEVICE_LOST   the GL created a context and then failed to make
 *                        it current or to answer
 */
kiln_result kg_context_create(kg_provider_kind kind, uint32_t threads, kg_gl *gl, kg_context **out,
                              char *err, size_t errlen);

/* Releases the context and destroys it, with every GL object it holds. On
 * the thread that created it, after the caller's last GL call. NULL is a
 * no-op. */
void kg_context_destroy(kg_context *c);

/* "osmesa" or "egl". */
const char *kg_context_provider(const kg_context *c);

/* The context's GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)";
 * valid as long as the context. */
const char *kg_context_renderer(const kg_context *c);

/* True when `threads` > 0 was asked for but the provider's llvmpipe
 * screen already existed, so the asked count did not apply. */
bool kg_context_threads_ignored(const kg_context *c);

/* Whether the provider is compiled into this library (AUTO: either). */
bool kg_provider_built(kg_provider_kind kind);

#endif
