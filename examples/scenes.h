/*
 * scenes.h - what the kiln_demo runner (kiln_demo.c), the golden-image test
 * (tests/test_golden.c) and the scenes share.
 *
 *   demo.c          the demo core: errors, objects a scene owns, pipeline
 *                   helpers, and demo_render, which runs a scene and reads
 *                   the last frame back
 *   scenes.c        the scene table and the copy scenes (clears, uploads,
 *                   copies, DYNAMIC maps), each with a CPU reference
 *   scenes_draw.c   draw scenes: "triangle", "cube", "rtt"
 *   scenes_stream.c draw scenes that stream data through DYNAMIC buffers:
 *                   "objects", "particles"
 *   scenes_occlusion.c draw scene "occlusion": occlusion queries and
 *                   predication
 *   scenes_so.c     draw scene "swirl": particles stepped by stream output
 *   scenes_sprites.c draw scene "sprites": point sprites a geometry
 *                   shader expands
 *   scenes_skybox.c draw scene "skybox": six faces rendered in one layered
 *                   draw, then sampled as a sky
 *   scenes_srgb.c   draw scene "srgb": linear ramps into an sRGB target
 *   scenes_msaa.c   draw scene "msaa": 4x multisampling and resolve
 *   scenes_shadow.c draw scene "shadow": a depth-only pass into a shadow
 *                   map, then comparison sampling (scenes_shadow.h)
 *   mat4.h          the little matrix math the draw scenes need
 *
 * A scene records one frame into the runner's canvas texture with kiln
 * calls. It is a deterministic function of the frame number: no clock, no
 * unseeded randomness, and no dependence on the frames rendered before it,
 * so frame f looks the same whatever --frames led to it. Copy scenes also
 * know on the CPU what a frame must look like (`expect`). Draw scenes have
 * no CPU reference (expect is NULL): tests/test_golden.c compares them with
 * the images in tests/golden/ instead, rendered at DEMO_GOLDEN_W x
 * DEMO_GOLDEN_H, frames 0 .. DEMO_GOLDEN_FRAMES - 1 (scripts/bless-golden.sh
 * rewrites those images; docs/golden.md).
 *
 * Scenes create their kiln objects through the demo_new_* helpers, which
 * record them; demo_render destroys them in reverse order when the scene
 * ends. Every kiln call goes through TRY: on failure it prints the call and
 * the result string and makes the enclosing function return -1, which stops
 * the run.
 *
 * Most scenes draw with the built-in effects only, which a capture names
 * without help; the geometry-shader scenes have shaders of their own and
 * register them by name (scene.register_shaders) so that their captures
 * replay. demo_render marks each frame's end with kiln_capture_frame.
 *
 * Everything here runs on one thread (the one that owns the demo).
 */
#ifndef KILN_DEMO_SCENES_H
#define KILN_DEMO_SCENES_H

#include "kiln.h"

#include <stddef.h>
#include <stdint.h>

/* Every color texture of the demo: the byte order PNG wants. */
#define DEMO_FORMAT KILN_FORMAT_R8G8B8A8_UNORM
#define DEMO_MAX_OWNED 64
#define DEMO_MAX_SCENES 24

/* What tests/test_golden.c renders and `kiln_demo --golden` writes. */
#define DEMO_GOLDEN_W 320u
#define DEMO_GOLDEN_H 180u
#define DEMO_GOLDEN_FRAMES 8u /* frames 0..7; the image is frame 7 */

typedef enum demo_owned_kind {
    DEMO_OWNED_TEXTURE,
    DEMO_OWNED_BUFFER,
    DEMO_OWNED_RTV,
    DEMO_OWNED_DSV,
    DEMO_OWNED_SRV,
    DEMO_OWNED_VS,
    DEMO_OWNED_PS,
    DEMO_OWNED_GS,
    DEMO_OWNED_LAYOUT,
    DEMO_OWNED_RASTERIZER,
    DEMO_OWNED_DEPTH_STENCIL,
    DEMO_OWNED_BLEND,
    DEMO_OWNED_SAMPLER
} demo_owned_kind;

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

/* ---- objects owned by the current scene (each returns 0 or -1) ---- */

/* A one-mip DEMO_FORMAT texture. */
int demo_new_texture(demo *d, uint32_t w, uint32_t h, uint32_t array_size, kiln_usage usage,
                     uint32_t bind, uint32_t cpu_access, kiln_texture *out);
/* Any texture; `init` as for kiln_create_texture2d. */
int demo_new_texture_desc(demo *d, const kiln_texture2d_desc *desc,
                          const kiln_subresource_data *init, kiln_texture *out);
/* As demo_new_texture_desc, but returns 1, reporting nothing, when the
 * backend cannot make such a texture (KILN_E_UNSUPPORTED: osmesa's missing
 * formats, multisampling): the scene then draws its fallback. */
int demo_try_texture_desc(demo *d, const kiln_texture2d_desc *desc,
                          const kiln_subresource_data *init, kiln_texture *out);
/* A TextureCube, zero-filled. */
int demo_new_texture_cube(demo *d, const kiln_texture_cube_desc *desc, kiln_texture *out);
/* A render-target view of mip 0 of one array slice. */
int demo_new_rtv(demo *d, kiln_texture t, uint32_t slice, kiln_rtv *out);
/* A depth-stencil view of mip 0; a shader-resource view of every mip. */
int demo_new_dsv(demo *d, kiln_texture t, kiln_dsv *out);
int demo_new_srv(demo *d, kiln_texture t, kiln_srv *out);
/* Views of any desc (array views: layered rendering, single slices). */
int demo_new_rtv_desc(demo *d, kiln_texture t, const kiln_rtv_desc *desc, kiln_rtv *out);
int demo_new_dsv_desc(demo *d, kiln_texture t, const kiln_dsv_desc *desc, kiln_dsv *out);
int demo_new_srv_desc(demo *d, kiln_texture t, const kiln_srv_desc *desc, kiln_srv *out);
/* A W x H depth texture of `format` with its view. */
int demo_new_depth(demo *d, uint32_t w, uint32_t h, kiln_format format, kiln_dsv *out);
/* `data` may be NULL (zero-filled), except for IMMUTABLE. */
int demo_new_buffer(demo *d, uint32_t size, kiln_usage usage, uint32_t bind, const void *data,
                    kiln_buffer *out);
int demo_new_rasterizer(demo *d, const kiln_rasterizer_desc *desc, kiln_rasterizer_state *out);
int demo_new_depth_stencil(demo *d, const kiln_depth_stencil_desc *desc,
                           kiln_depth_stencil_state *out);
int demo_new_blend(demo *d, const kiln_blend_desc *desc, kiln_blend_state *out);
int demo_new_sampler(demo *d, const kiln_sampler_desc *desc, kiln_sampler *out);

/* A built-in effect's shaders and an input layout for them. */
typedef struct demo_effect {
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout layout;
} demo_effect;

int demo_new_effect(demo *d, kiln_effect effect, const kiln_input_element *elements,
                    uint32_t num_elements, demo_effect *out);

/* Shaders of the scene's own (register their descs first: see
 * scene.register_shaders) and an input layout for a vertex shader. */
int demo_new_vertex_shader(demo *d, const kiln_vertex_shader_desc *desc, kiln_vertex_shader *out);
int demo_new_pixel_shader(demo *d, const kiln_pixel_shader_desc *desc, kiln_pixel_shader *out);
/* Returns 1, reporting nothing, when the backend has no geometry stage
 * (KILN_E_UNSUPPORTED: osmesa): the scene then draws its fallback. */
int demo_new_geometry_shader(demo *d, const kiln_geometry_shader_desc *desc,
                             kiln_geometry_shader *out);
int demo_new_layout(demo *d, kiln_vertex_shader vs, const kiln_input_element *elements,
                    uint32_t num_elements, kiln_input_layout *out);

/* ---- pipeline helpers ---- */

/* Binds the effect's layout and shaders. */
int demo_bind_effect(demo *d, const demo_effect *e);
/* One render target (and a depth-stencil view, or {0}) with a viewport
 * covering all of its w x h texels. */
int demo_bind_target(demo *d, kiln_rtv rtv, kiln_dsv dsv, uint32_t w, uint32_t h);
/* Unbinds everything and restores every default state, so a frame starts
 * from a known pipeline and destroyed objects are never left bound. */
int demo_reset_pipeline(demo *d);
/* Replaces a DYNAMIC buffer's contents: Map WRITE_DISCARD, copy, Unmap. */
int demo_write_discard(demo *d, kiln_buffer b, const void *data, size_t size);

/* ---- running ---- */

static inline kiln_resource demo_res(kiln_texture t) { return kiln_texture_resource(t); }
static inline kiln_resource demo_buf(kiln_buffer b) { return kiln_buffer_resource(b); }

typedef struct scene {
    const char *name;
    const char *summary;
    size_t state_size; /* the runner passes setup a zeroed block this big */
    int (*setup)(demo *d, void *state);
    void (*teardown)(void *state); /* frees what setup allocated; may be NULL;
                                      called even when setup failed */
    /* Records frame f into canvas (W x H, DEMO_FORMAT, DEFAULT, render
     * target and shader resource; zero-filled when the scene starts). The
     * pipeline is reset (demo_reset_pipeline) before each frame. */
    int (*frame)(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f);
    /* What frame f must look like: W * H tightly packed RGBA8 texels. NULL
     * for draw scenes, which tests/test_golden.c checks against
     * tests/golden/NAME.png instead. */
    void (*expect)(const demo *d, uint32_t f, uint8_t *img);
    /* Registers the scene's own shader descs by name on `dev`
     * (kiln_capture_register_*_shader), so that a capture of the scene
     * names them and a replay can create them; NULL for scenes that use
     * the built-in effects only. demo_render calls it before setup. */
    kiln_result (*register_shaders)(kiln_device *dev);
} scene;

/* Every scene, in --list order (scenes.c). */
extern const scene *const demo_scenes[];
extern const size_t demo_num_scenes;

/* The draw scenes, defined in scenes_draw.c and scenes_stream.c. */
extern const scene demo_scene_triangle, demo_scene_cube, demo_scene_rtt;
extern const scene demo_scene_objects, demo_scene_particles;
extern const scene demo_scene_occlusion; /* scenes_occlusion.c */
extern const scene demo_scene_swirl;     /* scenes_so.c */

extern const scene demo_scene_sprites; /* scenes_sprites.c */
extern const scene demo_scene_skybox;  /* scenes_skybox.c */
extern const scene demo_scene_srgb;    /* scenes_srgb.c */
extern const scene demo_scene_msaa;    /* scenes_msaa.c */
extern const scene demo_scene_shadow;  /* scenes_shadow.c */

/* Every scene's register_shaders on `dev`: what a replay of any scene's
 * capture needs before its first record (a kcap_replay setup_fn). */
kiln_result demo_register_shaders(kiln_device *dev);

/* Scenes without a CPU reference are the golden-image scenes. */
static inline int demo_scene_is_golden(const scene *sc) { return sc->expect == NULL; }

/* Called after each frame is recorded (f = 1..frames); may be NULL. */
typedef void (*demo_progress_fn)(const char *scene, uint32_t f, uint32_t frames, void *user);

/* Runs `sc` on d->dev at d->w x d->h: creates the canvas, sets the scene
 * up, records frames 0 .. frames - 1, reads the last one back into `pixels`
 * (W * H * 4 bytes, RGBA8, tightly packed), tears the scene down and
 * destroys what it created. *record_ms (may be NULL) receives the time from
 * the first frame to the end of the readback. Returns 0 or -1 (reported). */
int demo_render(demo *d, const scene *sc, uint32_t frames, uint8_t *pixels,
                demo_progress_fn progress, void *progress_user, double *record_ms);

#endif
