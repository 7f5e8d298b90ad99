/*
 * test_gl_provider: src/gl/provider.h gives a usable GL context from every
 * provider built in, and D3D's conventions hold in it without any flip.
 *
 * For each provider (named directly and through KILN_GL_PROVIDER):
 * - the context is 3.3 core or newer, with GL_ARB_clip_control;
 * - with glClipControl(GL_UPPER_LEFT, GL_ZERO_TO_ONE), a triangle in the
 *   top-left of clip space (y > 0) lands in the FIRST rows of the
 *   glReadPixels memory, at the left: memory row 0 is D3D's top row;
 * - winding is judged as seen on screen: the same clockwise triangle is
 *   drawn with glFrontFace(GL_CW) and culled with GL_CCW (D3D10's
 *   FrontCounterClockwise = FALSE maps to GL_CW as is);
 * - two contexts one after the other, and two alive at once on two threads
 *   (also one of each provider), all draw correctly;
 * - `threads` reaches llvmpipe (counted as its "llvmpipe-N" threads, on
 *   Linux) when the provider makes its screen, the screen outlives the
 *   context, and a later `threads` is reported as ignored.
 * A bad KILN_GL_PROVIDER fails with KILN_E_INVALID_ARG and a message.
 * Exits 77 (skipped) when kiln is built without a GL provider.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, pthread_barrier_t */
#include "harness.h"

#include <stdio.h>

#if !KILN_HAVE_GL

int main(void)
{
    printf("test_gl_provider: skipped, kiln is built without a GL provider "
           "(install libosmesa6-dev or libegl-dev)\n");
    return 77;
}

#else

#include "gl/provider.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define W 8
#define H 8

static const char *kind_name(kg_provider_kind k)
{
    return k == KG_PROVIDER_OSMESA ? "osmesa" : "egl";
}

/* Rasterizer threads of every llvmpipe screen in the process, -1 when
 * they cannot be counted (no /proc). */
static int llvmpipe_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], comm[32] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f) && strncmp(comm, "llvmpipe-", 9) == 0)
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* A thread count llvmpipe would not choose by itself (LP_NUM_THREADS,
 * else one per CPU), so that counting them proves `threads` got there. */
static uint32_t unusual_threads(long above)
{
    const char *env = getenv("LP_NUM_THREADS");
    long def = env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);
    long t = def + above;
    if (t > 32) /* llvmpipe's cap in Mesa 22.3 */
        t = def - above >= 1 ? def - above : 1;
    return (uint32_t)t;
}

/* llvmpipe_threads() once it reaches `want`, or after 5 s. Each thread
 * names itself once running, so right after the context is created some
 * may still carry the process name. */
static int llvmpipe_threads_reach(int want)
{
    int n = llvmpipe_threads();
    for (int i = 0; i < 5000 && n >= 0 && n != want; i++) {
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        n = llvmpipe_threads();
    }
    return n;
}

static GLuint shader(const kg_gl *gl, GLenum stage, const char *src, char *log, size_t loglen)
{
    GLuint s = gl->CreateShader(stage);
    GLint ok = 0;
    gl->ShaderSource(s, 1, &src, NULL);
    gl->CompileShader(s);
    gl->GetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        gl->GetShaderInfoLog(s, (GLsizei)loglen, NULL, log);
        gl->DeleteShader(s);
        return 0;
    }
    return s;
}

/* What one context's checks found; filled on the context's thread and
 * CHECKed on the main thread (the harness counters are not atomic). */
typedef struct draw_result {
    bool created, version_ok, clip_control, upper_left, cw_drawn, ccw_culled, no_error;
    int top_left_red, top_right_red, bottom_left_red, first_rows_red, last_rows_red;
    bool pixels_ok;
    char renderer[128];
    char why[256];
} draw_result;

/* The same clockwise-on-screen triangle (top-left corner of clip space,
 * y > 0) drawn into an RGBA8 texture with `front` as the front face and
 * back faces culled; the pixels read back with memory row 0 first. */
static bool draw(const kg_gl *gl, GLenum front, uint8_t px[H][W][4], char *why, size_t whylen)
{
    static const char *vs =
        "#version 330 core\n"
        "const vec2 p[3] = vec2[3](vec2(-1.0, 1.0), vec2(0.0, 1.0), vec2(-1.0, 0.0));\n"
        "void main() { gl_Position = vec4(p[gl_VertexID], 0.5, 1.0); }\n";
    static const char *fs = "#version 330 core\n"
                            "out vec4 color;\n"
                            "void main() { color = vec4(1.0, 0.0, 0.0, 1.0); }\n";
    GLuint v = shader(gl, GL_VERTEX_SHADER, vs, why, whylen);
    GLuint f = v ? shader(gl, GL_FRAGMENT_SHADER, fs, why, whylen) : 0;
    if (!f) {
        if (v)
            gl->DeleteShader(v);
        return false;
    }
    GLuint prog = gl->CreateProgram(), tex = 0, fbo = 0, vao = 0;
    GLint linked = 0;
    gl->AttachShader(prog, v);
    gl->AttachShader(prog, f);
    gl->LinkProgram(prog);
    gl->DeleteShader(v);
    gl->DeleteShader(f);
    gl->GetProgramiv(prog, GL_LINK_STATUS, &linked);
    if (!linked) {
        gl->GetProgramInfoLog(prog, (GLsizei)whylen, NULL, why);
        gl->DeleteProgram(prog);
        return false;
    }

    gl->CreateTextures(GL_TEXTURE_2D, 1, &tex);
    gl->TextureStorage2D(tex, 1, GL_RGBA8, W, H);
    gl->CreateFramebuffers(1, &fbo);
    gl->NamedFramebufferTexture(fbo, GL_COLOR_ATTACHMENT0, tex, 0);
    bool ok = gl->CheckNamedFramebufferStatus(fbo, GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    if (!ok)
        snprintf(why, whylen, "the RGBA8 framebuffer is not complete");
    if (ok) {
        static const GLfloat blue[4] = {0, 0, 1, 1};
        gl->CreateVertexArrays(1, &vao);
        gl->BindVertexArray(vao);
        gl->BindFramebuffer(GL_FRAMEBUFFER, fbo);
        gl->Viewport(0, 0, W, H);
        gl->ClearBufferfv(GL_COLOR, 0, blue);
        gl->Enable(GL_CULL_FACE);
        gl->CullFace(GL_BACK);
        gl->FrontFace(front);
        gl->UseProgram(prog);
        gl->DrawArrays(GL_TRIANGLES, 0, 3);
        gl->NamedFramebufferReadBuffer(fbo, GL_COLOR_ATTACHMENT0);
        gl->PixelStorei(GL_PACK_ALIGNMENT, 1);
        gl->ReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, px);
        gl->UseProgram(0);
        gl->Disable(GL_CULL_FACE);
        gl->FrontFace(GL_CCW);
        gl->BindFramebuffer(GL_FRAMEBUFFER, 0);
        gl->BindVertexArray(0);
        gl->DeleteVertexArrays(1, &vao);
    }
    gl->DeleteFramebuffers(1, &fbo);
    gl->DeleteTextures(1, &tex);
    gl->DeleteProgram(prog);
    return ok;
}

static bool is_red(const uint8_t p[4])
{
    return p[0] == 255 && p[1] == 0 && p[2] == 0 && p[3] == 255;
}
static bool is_blue(const uint8_t p[4])
{
    return p[0] == 0 && p[1] == 0 && p[2] == 255 && p[3] == 255;
}

/* All checks on the context current on this thread. */
static void check_context(const kg_gl *gl, draw_result *r)
{
    r->version_ok = gl->version >= 33 && gl->core;
    r->clip_control = gl->version >= 45 || kg_gl_has_extension(gl, "GL_ARB_clip_control");
    if (!r->clip_control || !gl->ClipControl)
        return;
    gl->ClipControl(GL_UPPER_LEFT, GL_ZERO_TO_ONE);
    GLint origin = 0, depth = 0;
    gl->GetIntegerv(GL_CLIP_ORIGIN, &origin);
    gl->GetIntegerv(GL_CLIP_DEPTH_MODE, &depth);
    r->upper_left = origin == GL_UPPER_LEFT && depth == GL_ZERO_TO_ONE;

    uint8_t cw[H][W][4], ccw[H][W][4];
    memset(cw, 0, sizeof cw);
    memset(ccw, 0, sizeof ccw);
    if (!draw(gl, GL_CW, cw, r->why, sizeof r->why) ||
        !draw(gl, GL_CCW, ccw, r->why, sizeof r->why))
        return;
    r->no_error = gl->GetError() == GL_NO_ERROR;

    /* The triangle covers pixel (row j, column i) when i + j < 3 and
     * misses it when i + j > 3 (pixel centres on its hypotenuse, i + j ==
     * 3, are left to the fill rule). Row 0 is the first row in memory. */
    r->pixels_ok = true;
    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            bool red = is_red(cw[j][i]);
            if (j < H / 2 && red)
                r->first_rows_red++;
            if (j >= H / 2 && red)
                r->last_rows_red++;
            if ((i + j < 3 && !red) || (i + j > 3 && !is_blue(cw[j][i])))
                r->pixels_ok = false;
        }
    }
    r->top_left_red = is_red(cw[0][0]);
    r->top_right_red = is_red(cw[0][W - 1]);
    r->bottom_left_red = is_red(cw[H - 1][0]);
    r->cw_drawn = r->top_left_red;
    r->ccw_culled = true;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++)
            r->ccw_culled = r->ccw_culled && is_blue(ccw[j][i]);
}

static void report(const char *what, const draw_result *r)
{
    printf("  %s\n", what);
    CHECK(r->created);
    if (!r->created)
        return;
    CHECK(r->version_ok);
    CHECK(r->clip_control);
    CHECK(r->upper_left);
    CHECK(r->no_error);
    /* Memory row 0 is the top: the y > 0 triangle is in the first rows,
     * at the left, and nowhere in the last rows. */
    CHECK(r->top_left_red);
    CHECK(!r->top_right_red);
    CHECK(!r->bottom_left_red);
    CHECK(r->first_rows_red >= 6);
    CHECK_EQ_INT(r->last_rows_red, 0);
    CHECK(r->pixels_ok);
    CHECK(r->cw_drawn);
    CHECK(r->ccw_culled);
    if (r->why[0])
        fprintf(stderr, "    %s\n", r->why);
}

static void create_and_check(kg_provider_kind kind, uint32_t threads, const char *what,
                             bool *ignored)
{
    kg_gl gl;
    kg_context *c = NULL;
    char err[256];
    draw_result r = {0};
    kiln_result res = kg_context_create(kind, threads, &gl, &c, err, sizeof err);
    CHECK_RESULT(res, KILN_OK);
    if (res != KILN_OK) {
        fprintf(stderr, "    %s: %s\n", what, err);
        return;
    }
    r.created = true;
    if (ignored)
        *ignored = kg_context_threads_ignored(c);
    check_context(&gl, &r);
    report(what, &r);
    kg_context_destroy(c);
}

/* ---- the first context of each provider: versions, extensions, threads ---- */

static void first_context(kg_provider_kind kind)
{
    int before = llvmpipe_threads();
    uint32_t threads = unusual_threads(kind == KG_PROVIDER_OSMESA ? 1 : 2);
    kg_gl gl;
    kg_context *c = NULL;
    char err[256];
    kiln_result res = kg_context_create(kind, threads, &gl, &c, err, sizeof err);
    CHECK_RESULT(res, KILN_OK);
    if (res != KILN_OK) {
        fprintf(stderr, "    %s: %s\n", kind_name(kind), err);
        return;
    }
    CHECK(strcmp(kg_context_provider(c), kind_name(kind)) == 0);
    CHECK(kg_context_renderer(c)[0] != '\0');
    CHECK(!kg_context_threads_ignored(c));
    static const char *const exts[] = {"GL_ARB_clip_control",         "GL_ARB_polygon_offset_clamp",
                                       "GL_EXT_polygon_offset_clamp", "GL_ARB_ES3_compatibility",
                                       "GL_ARB_texture_view",         "GL_ARB_base_instance",
                                       "GL_ARB_direct_state_access",  "GL_ARB_copy_image"};
    printf("%s: %s, %s, GLSL %s\n", kind_name(kind), kg_context_renderer(c),
           (const char *)gl.GetString(GL_VERSION),
           (const char *)gl.GetString(GL_SHADING_LANGUAGE_VERSION));
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        printf("  %-30s %s\n", exts[i], kg_gl_has_extension(&gl, exts[i]) ? "yes" : "no");
    /* GL_PRIMITIVE_RESTART_FIXED_INDEX (GL 4.3 / ES3 compatibility) is an
     * Enable cap, not an extension string. */
    gl.Enable(GL_PRIMITIVE_RESTART_FIXED_INDEX);
    printf("  %-30s %s\n", "PRIMITIVE_RESTART_FIXED_INDEX",
           gl.GetError() == GL_NO_ERROR ? "yes" : "no");
    gl.Disable(GL_PRIMITIVE_RESTART_FIXED_INDEX);
    printf("  %-30s %s\n", "PolygonOffsetClamp loaded", gl.PolygonOffsetClamp ? "yes" : "no");
    /* An OPT entry is loaded exactly when the context has it. */
    CHECK((gl.PolygonOffsetClamp != NULL) ==
          (gl.version >= 46 || kg_gl_has_extension(&gl, "GL_ARB_polygon_offset_clamp")));

    /* llvmpipe names its rasterizer threads "llvmpipe-N". The provider's
     * first screen was made by this call with `threads` of them, unless
     * the renderer is not llvmpipe (GALLIUM_DRIVER=softpipe) or the count
     * is invisible. */
    int after = llvmpipe_threads_reach(before + (int)threads);
    if (before >= 0 && strncmp(kg_context_renderer(c), "llvmpipe", 8) == 0)
        CHECK_EQ_INT(after - before, threads);
    printf("  llvmpipe rasterizer threads: %d -> %d (asked for %u)\n", before, after,
           (unsigned)threads);

    draw_result r = {.created = true};
    snprintf(r.renderer, sizeof r.renderer, "%s", kg_context_renderer(c));
    check_context(&gl, &r);
    report("first context draws", &r);
    kg_context_destroy(c);
    /* The screen, and so its threads, stays until exit with either
     * provider (provider.h). */
    int kept = llvmpipe_threads();
    if (before >= 0 && strncmp(r.renderer, "llvmpipe", 8) == 0)
        CHECK_EQ_INT(kept, after);
    printf("  after destroying it: %d\n", kept);
}

/* ---- two contexts alive at once, on two threads ---- */

typedef struct pair_arg {
    kg_provider_kind kind;
    uint32_t threads;
    pthread_barrier_t *both_alive;
    draw_result r;
    kiln_result res;
    bool ignored;
    char err[256];
} pair_arg;

static void *pair_thread(void *p)
{
    pair_arg *a = p;
    kg_gl gl;
    kg_context *c = NULL;
    a->res = kg_context_create(a->kind, a->threads, &gl, &c, a->err, sizeof a->err);
    a->r.created = a->res == KILN_OK;
    a->ignored = c && kg_context_threads_ignored(c);
    /* Both exist before either draws, and both draw before either goes. */
    pthread_barrier_wait(a->both_alive);
    if (c)
        check_context(&gl, &a->r);
    pthread_barrier_wait(a->both_alive);
    kg_context_destroy(c);
    return NULL;
}

static void two_at_once(kg_provider_kind k0, kg_provider_kind k1)
{
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, 2);
    pair_arg a[2] = {{.kind = k0, .threads = 1, .both_alive = &b},
                     {.kind = k1, .threads = 1, .both_alive = &b}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, pair_thread, &a[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b);
    /* Both screens exist by now: `threads` is ignored. */
    for (int i = 0; i < 2; i++)
        CHECK(a[i].res != KILN_OK || a[i].ignored);
    for (int i = 0; i < 2; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s and %s at once: the %s one", kind_name(k0), kind_name(k1),
                 i ? "second" : "first");
        CHECK_RESULT(a[i].res, KILN_OK);
        if (a[i].res != KILN_OK)
            fprintf(stderr, "    %s\n", a[i].err);
        report(what, &a[i].r);
    }
}

/* ---- KILN_GL_PROVIDER ---- */

static void env_selects(kg_provider_kind kind)
{
    kg_gl gl;
    kg_context *c = NULL;
    char err[256];
    setenv("KILN_GL_PROVIDER", kind_name(kind), 1);
    kiln_result res = kg_context_create(KG_PROVIDER_AUTO, 0, &gl, &c, err, sizeof err);
    unsetenv("KILN_GL_PROVIDER");
    if (!kg_provider_built(kind)) {
        /* Naming a provider that is not built in is UNSUPPORTED, with a
         * reason that says what to install. */
        CHECK_RESULT(res, KILN_E_UNSUPPORTED);
        CHECK(c == NULL);
        CHECK(strstr(err, "KILN_GL_PROVIDER") != NULL && strstr(err, "install") != NULL);
        printf("KILN_GL_PROVIDER=%s: %s\n", kind_name(kind), err);
        return;
    }
    CHECK_RESULT(res, KILN_OK);
    if (res != KILN_OK) {
        fprintf(stderr, "    %s\n", err);
        return;
    }
    CHECK(strcmp(kg_context_provider(c), kind_name(kind)) == 0);
    draw_result r = {.created = true};
    check_context(&gl, &r);
    report(kind == KG_PROVIDER_OSMESA ? "KILN_GL_PROVIDER=osmesa" : "KILN_GL_PROVIDER=egl", &r);
    kg_context_destroy(c);
}

static void env_rejects_unknown(void)
{
    kg_gl gl;
    kg_context *c = (kg_context *)&gl; /* must come back NULL */
    char err[256] = "";
    setenv("KILN_GL_PROVIDER", "vulkan", 1);
    CHECK_RESULT(kg_context_create(KG_PROVIDER_AUTO, 0, &gl, &c, err, sizeof err),
                 KILN_E_INVALID_ARG);
    unsetenv("KILN_GL_PROVIDER");
    CHECK(c == NULL);
    CHECK(strstr(err, "KILN_GL_PROVIDER") != NULL && strstr(err, "vulkan") != NULL);
    printf("KILN_GL_PROVIDER=vulkan: %s\n", err);
    /* Not a kind at all. */
    c = (kg_context *)&gl;
    CHECK_RESULT(kg_context_create((kg_provider_kind)99, 0, &gl, &c, err, sizeof err),
                 KILN_E_INVALID_ARG);
    CHECK(c == NULL);
    CHECK(err[0] != '\0');
}

/* AUTO without KILN_GL_PROVIDER (unset or empty): OSMesa when built in,
 * else EGL. */
static void auto_default(void)
{
    const char *want = kg_provider_built(KG_PROVIDER_OSMESA) ? "osmesa" : "egl";
    for (int empty = 0; empty < 2; empty++) {
        kg_gl gl;
        kg_context *c = NULL;
        char err[256];
        if (empty)
            setenv("KILN_GL_PROVIDER", "", 1);
        kiln_result res = kg_context_create(KG_PROVIDER_AUTO, 0, &gl, &c, err, sizeof err);
        unsetenv("KILN_GL_PROVIDER");
        CHECK_RESULT(res, KILN_OK);
        if (res != KILN_OK) {
            fprintf(stderr, "    %s\n", err);
            continue;
        }
        CHECK(strcmp(kg_context_provider(c), want) == 0);
        kg_context_destroy(c);
    }
}

int main(void)
{
    static const kg_provider_kind kinds[] = {KG_PROVIDER_OSMESA, KG_PROVIDER_EGL};
    if (!kg_provider_built(KG_PROVIDER_AUTO)) {
        printf("test_gl_provider: skipped, no GL provider built in\n");
        return 77;
    }
    /* The test decides which provider it asks for. */
    unsetenv("KILN_GL_PROVIDER");
    env_rejects_unknown();

    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        kg_provider_kind k = kinds[i];
        if (!kg_provider_built(k)) {
            printf("%s: not built in\n", kind_name(k));
            env_selects(k);
            continue;
        }
        first_context(k);
        /* One after another: the second creation finds the provider's
         * screen made, so its `threads` is ignored, and no thread is
         * added. */
        bool ignored = false;
        int before = llvmpipe_threads();
        create_and_check(k, 1, "a second context, after the first", &ignored);
        CHECK(ignored);
        CHECK_EQ_INT(llvmpipe_threads(), before);
        env_selects(k);
        two_at_once(k, k);
    }
    if (kg_provider_built(KG_PROVIDER_OSMESA) && kg_provider_built(KG_PROVIDER_EGL))
        two_at_once(KG_PROVIDER_OSMESA, KG_PROVIDER_EGL);
    auto_default();
    return th_exit();
}

#endif
