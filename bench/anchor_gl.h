/*
 * anchor_gl - bench_raster's scenes in raw GL, without kiln: the anchor
 * that the osmesa backend is measured against.
 *
 * The osmesa backend turns kiln's command stream into GL calls on Mesa's
 * llvmpipe (src/gl). Beside it, this renders the same scenes with the same
 * vertex data, texture bytes and states, written directly against GL as an
 * application would, through a context of its own from kg_context_create
 * (src/gl/provider.h; the functions come from kg_gl, glapi.h). Whatever
 * the osmesa backend costs above this is the backend's own overhead.
 *
 * What it issues, as src/gl/draw.c does for bench_raster's scenes:
 * glClipControl(GL_UPPER_LEFT, GL_ZERO_TO_ONE); one framebuffer object with
 * an RGBA8 color texture and a DEPTH_COMPONENT32F texture of width x height;
 * vertex buffers and the texture uploaded once at creation; the GLSL of
 * kiln's built-in effects (kiln_effect_get: VERTEX_COLOR, TEXTURE), split
 * at the line "//--- fragment", attributes bound in declaration order
 * (a_position 0, a_color / a_texcoord 1), u_cb0 = the identity matrix rows,
 * u_tex0 = unit 0; culling off; depth LESS + write for the triangle scenes
 * and the mesh, depth off for the layer scenes, blending ONE + ONE for
 * LAYERS_BLEND; the layers' sampler: LINEAR / LINEAR with the nearest mip
 * (of one level), CLAMP; LAYERS_POINT's: NEAREST / NEAREST (the nearest
 * mip), CLAMP. The mesh (e): u_cb0 = the caller's perspective
 * matrix rows (a program of its own), a texture with the caller's mip
 * chain (the bytes kiln_generate_mips made), sampled LINEAR_MIPMAP_LINEAR
 * with REPEAT (kiln's trilinear WRAP sampler as src/gl/draw.c maps it).
 *
 * Multisampling (desc.samples = 4): a second framebuffer object with 4x
 * GL_RGBA8 and GL_DEPTH_COMPONENT32F renderbuffers
 * (glNamedRenderbufferStorageMultisample, GL_MULTISAMPLE left at its
 * default, on). A scene bound with 4 samples draws into it, and its frame
 * ends with glBlitNamedFramebuffer (color, GL_NEAREST) into the 1x color
 * texture: GL's resolve, as kiln_resolve_subresource is kiln's.
 *
 * A frame (anchor_gl_draw_frame, then anchor_gl_finish) is: clear color,
 * clear depth to 1.0, the scene's draws, the resolve for a 4x scene,
 * glFinish. State and buffers are bound by anchor_gl_bind, outside the
 * frame, like bench_raster's scene_bind.
 *
 * Thread rules: the context is created current on the calling thread and
 * stays current there; every function here must be called on that thread,
 * which must not make another GL context current meanwhile. llvmpipe's
 * rasterizer thread count is fixed by the first context of a provider in
 * the process (provider.h): when another context came first (an osmesa
 * device), `threads` may be ignored, and anchor_gl_threads_ignored says so.
 *
 * Built only when kiln has its osmesa backend (CMake: KILN_HAVE_GL).
 */
#ifndef KILN_BENCH_ANCHOR_GL_H
#define KILN_BENCH_ANCHOR_GL_H

#include "kiln.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum anchor_gl_scene {
    ANCHOR_GL_SMALL,        /* (a): the small triangles, one draw */
    ANCHOR_GL_MID,          /* (b): the mid triangles, one draw */
    ANCHOR_GL_LAYERS,       /* (c), (c/ps): `layers` quads, blending off */
    ANCHOR_GL_LAYERS_BLEND, /* (c+): the same, blending ONE + ONE */
    ANCHOR_GL_LAYERS_ALPHA, /* (c+a): the same, SRC_ALPHA + ONE_MINUS_SRC_ALPHA */
    ANCHOR_GL_DRAWS,        /* (d): the small triangles, one draw each */
    ANCHOR_GL_LAYERS_BC1,   /* (c/bc1): (c) with the BC1 texture (S3TC DXT1, RGBA) */
    ANCHOR_GL_MESH,         /* (e): the perspective mesh, trilinear, one draw */
    ANCHOR_GL_LAYERS_POINT, /* (c/pt): (c) with the NEAREST sampler */
    ANCHOR_GL_SCENE_COUNT
} anchor_gl_scene;

/* The scenes' data, as bench_raster makes it. Vertex-colored triangles:
 * position R32G32B32_FLOAT at offset 0, color R8G8B8A8_UNORM (normalized)
 * at color_offset, color_stride bytes a vertex, 3 vertices a triangle.
 * The quad: position R32G32B32_FLOAT at 0, uv R32G32_FLOAT at uv_offset.
 * Everything is copied to GL by anchor_gl_create; the caller keeps its
 * memory. */
typedef struct anchor_gl_desc {
    uint32_t width, height; /* the target */
    uint32_t threads;       /* llvmpipe rasterizer threads to ask for (0: its default) */
    float clear_color[4];
    const void *small; /* (a), (d) */
    uint32_t small_tris;
    const void *mid; /* (b) */
    uint32_t mid_tris;
    uint32_t color_stride, color_offset;
    const void *quad; /* (c), (c+): drawn `layers` times */
    uint32_t quad_vertices, quad_stride, uv_offset;
    uint32_t layers;
    const uint8_t *texels; /* RGBA8, tex_size x tex_size, rows tightly packed */
    uint32_t tex_size;
    /* tex_size x tex_size in BC1 (D3D10's block layout, which is S3TC's
     * DXT1), rows of blocks tightly packed; NULL: no (c/bc1) scene */
    const uint8_t *bc1;
    /* (e): mesh_vertices vertices in the quad's layout (quad_stride,
     * uv_offset), 3 a triangle, drawn through `proj` (16 floats, row-major
     * as kiln's constant buffer: u_cb0's rows); the texture's levels
     * mips[0 .. mip_count - 1], level k RGBA8 of max(1, tex_size >> k)
     * texels on a side, rows tightly packed. NULL mesh: no (e) scene. */
    const void *mesh;
    uint32_t mesh_vertices;
    const float *proj;
    const uint8_t *const *mips;
    uint32_t mip_count;
    /* 4: also the multisampled framebuffer (4 samples a pixel) for the
     * scenes bound with 4 samples; 0 or 1: none. */
    uint32_t samples;
} anchor_gl_desc;

/* Opaque. */
typedef struct anchor_gl anchor_gl;

/* Creates the context (KG_PROVIDER_AUTO, as the osmesa backend) and every
 * GL object, current on the calling thread. On failure *out is NULL, a
 * one-line reason is in err (errlen bytes), and the result is
 * kg_context_create's, or KILN_E_UNSUPPORTED when a shader does not build
 * or the framebuffer is incomplete, or KILN_E_OUT_OF_MEMORY. */
kiln_result anchor_gl_create(const anchor_gl_desc *desc, anchor_gl **out, char *err, size_t errlen);

/* Deletes everything and destroys the context. NULL is a no-op. */
void anchor_gl_destroy(anchor_gl *a);

/* Framebuffer, program, vertex array, depth, blend and sampler state for
 * the scene drawn with `samples` samples a pixel (1, or 4 into the
 * multisampled framebuffer). Not part of a frame. False, with nothing
 * changed, when this anchor cannot draw it: a scene whose data the desc
 * left out, or 4 samples without the multisampled framebuffer
 * (anchor_gl_multisample_missing says why). */
bool anchor_gl_bind(anchor_gl *a, anchor_gl_scene sc, uint32_t samples);

/* NULL when the anchor has its multisampled framebuffer; otherwise a
 * one-line reason (not asked for, GL_MAX_SAMPLES below 4, incomplete). */
const char *anchor_gl_multisample_missing(const anchor_gl *a);

/* The frame's GL calls, for the scene last bound: clear color and depth,
 * the draws, and for 4 samples the resolving blit into the color texture.
 * Returns without waiting for them. */
void anchor_gl_draw_frame(anchor_gl *a);

/* glFinish: returns when every call before it has executed. */
void anchor_gl_finish(anchor_gl *a);

/* The (1x, resolved) color target, tightly packed (width * height * 4 bytes, first row
 * the top one, as bench_raster's readback). False, with nothing written,
 * when GL reported an error since the last call (the image would not be
 * the scene's). */
bool anchor_gl_readback(anchor_gl *a, uint8_t *img);

/* The context's provider ("osmesa" or "egl") and GL_RENDERER. */
const char *anchor_gl_provider(const anchor_gl *a);
const char *anchor_gl_renderer(const anchor_gl *a);

/* True when desc->threads > 0 was not applied because llvmpipe's screen
 * already existed (another context of the provider came first). */
bool anchor_gl_threads_ignored(const anchor_gl *a);

#endif
