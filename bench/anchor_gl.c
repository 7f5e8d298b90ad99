/* anchor_gl: bench_raster's scenes in raw GL (anchor_gl.h says what and
 * why). Every call goes through the kg_gl table of the context, the same
 * functions the osmesa backend calls, minus the backend. */
#include "anchor_gl.h"

#include "gl/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEPARATOR "//--- fragment\n"

/* The layouts the anchor draws with: one vertex array object each. */
enum { VAO_SMALL, VAO_MID, VAO_QUAD, VAO_MESH, VAO_COUNT };
/* GL_EXT_texture_compression_s3tc's GL_COMPRESSED_RGBA_S3TC_DXT1_EXT
 * (<GL/glcorearb.h> leaves extension formats out); llvmpipe has it. */
#define ANCHOR_DXT1_RGBA 0x83F1
/* PROG_MESH: the TEXTURE effect again, with u_cb0 the mesh's matrix. */
enum { PROG_COLOR, PROG_TEX, PROG_MESH, PROG_COUNT };

struct anchor_gl {
    kg_gl gl;
    kg_context *ctx;
    uint32_t width, height;
    float clear_color[4];
    uint32_t small_tris, mid_tris, quad_vertices, layers, mesh_vertices;
    GLuint fbo, color, depth, tex, tex_bc1, tex_mips, sampler, sampler_tri, sampler_point;
    GLuint ms_fbo, ms_color, ms_depth; /* 0 without the multisampled framebuffer */
    const char *ms_missing;            /* why not, or NULL */
    GLuint vb[VAO_COUNT], vao[VAO_COUNT];
    GLuint prog[PROG_COUNT];
    anchor_gl_scene scene; /* the one last bound */
    uint32_t samples;      /* its samples a pixel: 1 or 4 */
};

/* ---- programs ---- */

static GLuint compile(const kg_gl *gl, GLenum type, const char *src, size_t len, char *err,
                      size_t errlen)
{
    char info[512];
    GLuint sh = kg_gl_compile(gl, type, src, len, info, sizeof info);
    if (!sh)
        snprintf(err, errlen, "the %s shader does not compile: %s",
                 type == GL_VERTEX_SHADER ? "vertex" : "fragment", info);
    return sh;
}

/* The effect's GLSL: the vertex shader before the separator line, the
 * fragment shader after it; attribute k bound to location k, as
 * draw.c's each_decl finds them; u_cb0 the rows of `matrix` (row-major,
 * NULL: the identity), u_tex0 unit 0. */
static GLuint program(const kg_gl *gl, kiln_effect effect, const char *attrib1, const float *matrix,
                      char *err, size_t errlen)
{
    kiln_vertex_shader_desc vsd;
    kiln_pixel_shader_desc psd;
    if (kiln_effect_get(effect, &vsd, &psd) != KILN_OK || !vsd.glsl || !psd.glsl) {
        snprintf(err, errlen, "kiln_effect_get gave no GLSL");
        return 0;
    }
    const char *vsep = strstr(vsd.glsl, SEPARATOR), *psep = strstr(psd.glsl, SEPARATOR);
    if (!vsep || !psep) {
        snprintf(err, errlen, "the effect's GLSL has no line \"//--- fragment\"");
        return 0;
    }
    const char *fs = psep + strlen(SEPARATOR);
    GLuint v = compile(gl, GL_VERTEX_SHADER, vsd.glsl, (size_t)(vsep - vsd.glsl), err, errlen);
    GLuint f = v ? compile(gl, GL_FRAGMENT_SHADER, fs, strlen(fs), err, errlen) : 0;
    if (!f) {
        if (v)
            gl->DeleteShader(v);
        return 0;
    }
    GLuint p = gl->CreateProgram();
    gl->AttachShader(p, v);
    gl->AttachShader(p, f);
    gl->BindAttribLocation(p, 0, "a_position");
    gl->BindAttribLocation(p, 1, attrib1);
    gl->LinkProgram(p);
    gl->DeleteShader(v);
    gl->DeleteShader(f);
    GLint ok = 0;
    gl->GetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char info[512] = "";
        gl->GetProgramInfoLog(p, sizeof info, NULL, info);
        snprintf(err, errlen, "the effect's GLSL does not link: %s", info);
        gl->DeleteProgram(p);
        return 0;
    }
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    GLint cb = gl->GetUniformLocation(p, "u_cb0");
    if (cb >= 0)
        gl->ProgramUniform4fv(p, cb, 4, matrix ? matrix : identity);
    GLint tex = gl->GetUniformLocation(p, "u_tex0");
    if (tex >= 0)
        gl->ProgramUniform1i(p, tex, 0);
    return p;
}

/* ---- vertex input ---- */

/* A buffer with `size` bytes of `data`, and a vertex array reading
 * attribute 0 as 3 floats at offset 0 and attribute 1 as `size1` x `type1`
 * at offset1, both from binding 0 with `stride`. */
static void vertex_input(anchor_gl *a, int slot, const void *data, size_t size, GLuint stride,
                         GLint size1, GLenum type1, GLboolean norm1, GLuint offset1)
{
    const kg_gl *gl = &a->gl;
    gl->CreateBuffers(1, &a->vb[slot]);
    gl->NamedBufferStorage(a->vb[slot], (GLsizeiptr)size, data, 0);
    gl->CreateVertexArrays(1, &a->vao[slot]);
    gl->BindVertexArray(a->vao[slot]);
    gl->VertexAttribFormat(0, 3, GL_FLOAT, GL_FALSE, 0);
    gl->VertexAttribBinding(0, 0);
    gl->EnableVertexAttribArray(0);
    gl->VertexAttribFormat(1, size1, type1, norm1, offset1);
    gl->VertexAttribBinding(1, 0);
    gl->EnableVertexAttribArray(1);
    gl->BindVertexBuffer(0, a->vb[slot], 0, (GLsizei)stride);
    gl->BindVertexArray(0);
}

/* ---- the multisampled framebuffer ---- */

static void multisample_delete(anchor_gl *a)
{
    const kg_gl *gl = &a->gl;
    GLuint rb[2] = {a->ms_color, a->ms_depth};
    gl->DeleteRenderbuffers(2, rb); /* 0 names are ignored */
    gl->DeleteFramebuffers(1, &a->ms_fbo);
    a->ms_fbo = a->ms_color = a->ms_depth = 0;
}

/* 4x GL_RGBA8 and GL_DEPTH_COMPONENT32F renderbuffers of the target's
 * size behind a framebuffer of their own. Returns NULL, or why not (then
 * nothing is left of it and the 1x scenes are unaffected). */
static const char *multisample_create(anchor_gl *a)
{
    const kg_gl *gl = &a->gl;
    GLint max = 0;
    gl->GetIntegerv(GL_MAX_SAMPLES, &max);
    if (max < 4)
        return "GL_MAX_SAMPLES is below 4";
    gl->CreateRenderbuffers(1, &a->ms_color);
    gl->NamedRenderbufferStorageMultisample(a->ms_color, 4, GL_RGBA8, (GLsizei)a->width,
                                            (GLsizei)a->height);
    gl->CreateRenderbuffers(1, &a->ms_depth);
    gl->NamedRenderbufferStorageMultisample(a->ms_depth, 4, GL_DEPTH_COMPONENT32F,
                                            (GLsizei)a->width, (GLsizei)a->height);
    gl->CreateFramebuffers(1, &a->ms_fbo);
    gl->NamedFramebufferRenderbuffer(a->ms_fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, a->ms_color);
    gl->NamedFramebufferRenderbuffer(a->ms_fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, a->ms_depth);
    GLenum buf = GL_COLOR_ATTACHMENT0;
    gl->NamedFramebufferDrawBuffers(a->ms_fbo, 1, &buf);
    gl->NamedFramebufferReadBuffer(a->ms_fbo, GL_COLOR_ATTACHMENT0);
    const char *why = NULL;
    if (gl->CheckNamedFramebufferStatus(a->ms_fbo, GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
        why = "the 4x RGBA8 + DEPTH_COMPONENT32F framebuffer is not complete";
    if (gl->GetError() != GL_NO_ERROR)
        why = "GL reported an error while making the 4x framebuffer";
    if (why)
        multisample_delete(a);
    return why;
}

/* ---- the anchor ---- */

kiln_result anchor_gl_create(const anchor_gl_desc *d, anchor_gl **out, char *err, size_t errlen)
{
    *out = NULL;
    anchor_gl *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return KILN_E_OUT_OF_MEMORY;
    }
    kiln_result r = kg_context_create(KG_PROVIDER_AUTO, d->threads, &a->gl, &a->ctx, err, errlen);
    if (r != KILN_OK) {
        free(a);
        return r;
    }
    const kg_gl *gl = &a->gl;
    a->width = d->width;
    a->height = d->height;
    memcpy(a->clear_color, d->clear_color, sizeof a->clear_color);
    a->small_tris = d->small_tris;
    a->mid_tris = d->mid_tris;
    a->quad_vertices = d->quad_vertices;
    a->layers = d->layers;
    a->mesh_vertices = d->mesh ? d->mesh_vertices : 0;
    a->scene = ANCHOR_GL_SMALL;
    a->samples = 1;

    /* D3D10's conventions, as the backend sets them: clip-space y up is
     * the first row in memory, depth is [0, 1]. */
    gl->ClipControl(GL_UPPER_LEFT, GL_ZERO_TO_ONE);
    gl->PixelStorei(GL_UNPACK_ALIGNMENT, 1);
    gl->PixelStorei(GL_PACK_ALIGNMENT, 1);

    /* The targets. */
    gl->CreateTextures(GL_TEXTURE_2D, 1, &a->color);
    gl->TextureStorage2D(a->color, 1, GL_RGBA8, (GLsizei)d->width, (GLsizei)d->height);
    gl->CreateTextures(GL_TEXTURE_2D, 1, &a->depth);
    gl->TextureStorage2D(a->depth, 1, GL_DEPTH_COMPONENT32F, (GLsizei)d->width, (GLsizei)d->height);
    gl->CreateFramebuffers(1, &a->fbo);
    gl->NamedFramebufferTexture(a->fbo, GL_COLOR_ATTACHMENT0, a->color, 0);
    gl->NamedFramebufferTexture(a->fbo, GL_DEPTH_ATTACHMENT, a->depth, 0);
    GLenum buf = GL_COLOR_ATTACHMENT0;
    gl->NamedFramebufferDrawBuffers(a->fbo, 1, &buf);
    gl->NamedFramebufferReadBuffer(a->fbo, GL_COLOR_ATTACHMENT0);
    gl->BindFramebuffer(GL_FRAMEBUFFER, a->fbo);
    gl->Viewport(0, 0, (GLsizei)d->width, (GLsizei)d->height);
    gl->DepthRangef(0.0f, 1.0f);

    /* The texture and its sampler: bilinear, nearest of the one mip. */
    gl->CreateTextures(GL_TEXTURE_2D, 1, &a->tex);
    gl->TextureStorage2D(a->tex, 1, GL_RGBA8, (GLsizei)d->tex_size, (GLsizei)d->tex_size);
    gl->TextureSubImage2D(a->tex, 0, 0, 0, (GLsizei)d->tex_size, (GLsizei)d->tex_size, GL_RGBA,
                          GL_UNSIGNED_BYTE, d->texels);
    if (d->bc1) { /* D3D10's BC1 is S3TC's DXT1 with alpha: the same bytes */
        gl->CreateTextures(GL_TEXTURE_2D, 1, &a->tex_bc1);
        gl->TextureStorage2D(a->tex_bc1, 1, ANCHOR_DXT1_RGBA, (GLsizei)d->tex_size, (GLsizei)d->tex_size);
        gl->CompressedTextureSubImage2D(a->tex_bc1, 0, 0, 0, (GLsizei)d->tex_size, (GLsizei)d->tex_size,
                                        ANCHOR_DXT1_RGBA, (GLsizei)(d->tex_size / 4 * (d->tex_size / 4) * 8),
                                        d->bc1);
    }
    gl->CreateSamplers(1, &a->sampler);
    gl->SamplerParameteri(a->sampler, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_NEAREST);
    gl->SamplerParameteri(a->sampler, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    gl->SamplerParameteri(a->sampler, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    gl->SamplerParameteri(a->sampler, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    gl->CreateSamplers(1, &a->sampler_point);
    gl->SamplerParameteri(a->sampler_point, GL_TEXTURE_MIN_FILTER, GL_NEAREST_MIPMAP_NEAREST);
    gl->SamplerParameteri(a->sampler_point, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    gl->SamplerParameteri(a->sampler_point, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    gl->SamplerParameteri(a->sampler_point, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    gl->BindTextureUnit(0, a->tex);
    gl->BindSampler(0, a->sampler);
    if (d->mesh) { /* (e): the caller's mip chain, trilinear, REPEAT */
        gl->CreateTextures(GL_TEXTURE_2D, 1, &a->tex_mips);
        gl->TextureStorage2D(a->tex_mips, (GLsizei)d->mip_count, GL_RGBA8, (GLsizei)d->tex_size,
                             (GLsizei)d->tex_size);
        for (uint32_t k = 0; k < d->mip_count; k++) {
            GLsizei n = (GLsizei)(d->tex_size >> k ? d->tex_size >> k : 1);
            gl->TextureSubImage2D(a->tex_mips, (GLint)k, 0, 0, n, n, GL_RGBA, GL_UNSIGNED_BYTE,
                                  d->mips[k]);
        }
        gl->CreateSamplers(1, &a->sampler_tri);
        gl->SamplerParameteri(a->sampler_tri, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
        gl->SamplerParameteri(a->sampler_tri, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        gl->SamplerParameteri(a->sampler_tri, GL_TEXTURE_WRAP_S, GL_REPEAT);
        gl->SamplerParameteri(a->sampler_tri, GL_TEXTURE_WRAP_T, GL_REPEAT);
    }

    /* Vertex data, uploaded once. */
    vertex_input(a, VAO_SMALL, d->small, (size_t)d->color_stride * 3 * d->small_tris,
                 d->color_stride, 4, GL_UNSIGNED_BYTE, GL_TRUE, d->color_offset);
    vertex_input(a, VAO_MID, d->mid, (size_t)d->color_stride * 3 * d->mid_tris, d->color_stride, 4,
                 GL_UNSIGNED_BYTE, GL_TRUE, d->color_offset);
    vertex_input(a, VAO_QUAD, d->quad, (size_t)d->quad_stride * d->quad_vertices, d->quad_stride, 2,
                 GL_FLOAT, GL_FALSE, d->uv_offset);
    if (d->mesh)
        vertex_input(a, VAO_MESH, d->mesh, (size_t)d->quad_stride * d->mesh_vertices,
                     d->quad_stride, 2, GL_FLOAT, GL_FALSE, d->uv_offset);

    /* Fixed-function state common to all scenes (the rest: anchor_gl_bind). */
    gl->Disable(GL_CULL_FACE);
    gl->Disable(GL_SCISSOR_TEST);
    gl->Disable(GL_STENCIL_TEST);
    gl->BlendFuncSeparate(GL_ONE, GL_ONE, GL_ONE, GL_ONE);
    gl->BlendEquationSeparate(GL_FUNC_ADD, GL_FUNC_ADD);
    gl->DepthFunc(GL_LESS);

    a->prog[PROG_COLOR] = program(gl, KILN_EFFECT_VERTEX_COLOR, "a_color", NULL, err, errlen);
    a->prog[PROG_TEX] =
        a->prog[PROG_COLOR] ? program(gl, KILN_EFFECT_TEXTURE, "a_texcoord", NULL, err, errlen) : 0;
    if (a->prog[PROG_TEX] && d->mesh)
        a->prog[PROG_MESH] = program(gl, KILN_EFFECT_TEXTURE, "a_texcoord", d->proj, err, errlen);
    if (!a->prog[PROG_TEX] || (d->mesh && !a->prog[PROG_MESH])) {
        anchor_gl_destroy(a);
        return KILN_E_UNSUPPORTED;
    }
    if (gl->CheckNamedFramebufferStatus(a->fbo, GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(err, errlen, "the RGBA8 + DEPTH_COMPONENT32F framebuffer is not complete");
        anchor_gl_destroy(a);
        return KILN_E_UNSUPPORTED;
    }
    GLenum e = gl->GetError();
    if (e != GL_NO_ERROR) {
        snprintf(err, errlen, "GL error 0x%04x while setting up", (unsigned)e);
        anchor_gl_destroy(a);
        return e == GL_OUT_OF_MEMORY ? KILN_E_OUT_OF_MEMORY : KILN_E_UNSUPPORTED;
    }
    a->ms_missing = d->samples == 4 ? multisample_create(a) : "not asked for (desc.samples)";
    anchor_gl_bind(a, ANCHOR_GL_SMALL, 1);
    *out = a;
    return KILN_OK;
}

void anchor_gl_destroy(anchor_gl *a)
{
    if (!a)
        return;
    const kg_gl *gl = &a->gl;
    for (int i = 0; i < PROG_COUNT; i++)
        if (a->prog[i])
            gl->DeleteProgram(a->prog[i]);
    gl->DeleteVertexArrays(VAO_COUNT, a->vao);
    gl->DeleteBuffers(VAO_COUNT, a->vb);
    GLuint samplers[3] = {a->sampler, a->sampler_tri, a->sampler_point};
    gl->DeleteSamplers(3, samplers); /* 0 names are ignored */
    GLuint tex[5] = {a->color, a->depth, a->tex, a->tex_bc1, a->tex_mips};
    gl->DeleteTextures(5, tex);
    gl->DeleteFramebuffers(1, &a->fbo);
    multisample_delete(a);
    kg_context_destroy(a->ctx);
    free(a);
}

static bool is_layers(anchor_gl_scene sc)
{
    return sc == ANCHOR_GL_LAYERS || sc == ANCHOR_GL_LAYERS_BLEND || sc == ANCHOR_GL_LAYERS_ALPHA ||
           sc == ANCHOR_GL_LAYERS_BC1 || sc == ANCHOR_GL_LAYERS_POINT;
}

bool anchor_gl_bind(anchor_gl *a, anchor_gl_scene sc, uint32_t samples)
{
    const kg_gl *gl = &a->gl;
    if ((samples != 1 && samples != 4) || (samples == 4 && !a->ms_fbo) ||
        (sc == ANCHOR_GL_LAYERS_BC1 && !a->tex_bc1) ||
        (sc == ANCHOR_GL_MESH && !a->mesh_vertices) || (unsigned)sc >= ANCHOR_GL_SCENE_COUNT)
        return false;
    a->scene = sc;
    a->samples = samples;
    gl->BindFramebuffer(GL_FRAMEBUFFER, samples == 4 ? a->ms_fbo : a->fbo);
    gl->BindTextureUnit(0, sc == ANCHOR_GL_LAYERS_BC1 ? a->tex_bc1
                           : sc == ANCHOR_GL_MESH     ? a->tex_mips
                                                      : a->tex);
    gl->BindSampler(0, sc == ANCHOR_GL_MESH           ? a->sampler_tri
                       : sc == ANCHOR_GL_LAYERS_POINT ? a->sampler_point
                                                      : a->sampler);
    if (is_layers(sc)) {
        gl->UseProgram(a->prog[PROG_TEX]);
        gl->BindVertexArray(a->vao[VAO_QUAD]);
        /* Depth writes off too, as the backend sets them for a disabled
         * depth test: GL would write no depth either way, but the mask is
         * part of the state llvmpipe compiles and bins with. */
        gl->Disable(GL_DEPTH_TEST);
        gl->DepthMask(GL_FALSE);
        if (sc == ANCHOR_GL_LAYERS_BLEND)
            gl->BlendFuncSeparate(GL_ONE, GL_ONE, GL_ONE, GL_ONE);
        else if (sc == ANCHOR_GL_LAYERS_ALPHA)
            gl->BlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_SRC_ALPHA,
                                  GL_ONE_MINUS_SRC_ALPHA);
        if (sc == ANCHOR_GL_LAYERS_BLEND || sc == ANCHOR_GL_LAYERS_ALPHA)
            gl->Enable(GL_BLEND);
        else
            gl->Disable(GL_BLEND);
    } else {
        bool mesh = sc == ANCHOR_GL_MESH;
        gl->UseProgram(a->prog[mesh ? PROG_MESH : PROG_COLOR]);
        gl->BindVertexArray(a->vao[mesh ? VAO_MESH : sc == ANCHOR_GL_MID ? VAO_MID : VAO_SMALL]);
        gl->Enable(GL_DEPTH_TEST);
        gl->DepthMask(GL_TRUE);
        gl->Disable(GL_BLEND);
    }
    return true;
}

const char *anchor_gl_multisample_missing(const anchor_gl *a) { return a->ms_missing; }

void anchor_gl_draw_frame(anchor_gl *a)
{
    const kg_gl *gl = &a->gl;
    static const float one = 1.0f;
    bool layers = is_layers(a->scene);
    gl->ClearBufferfv(GL_COLOR, 0, a->clear_color);
    /* The depth clear obeys the depth mask, which the layer scenes keep
     * off: on around the clear, as the backend's clear and next draw do. */
    if (layers)
        gl->DepthMask(GL_TRUE);
    gl->ClearBufferfv(GL_DEPTH, 0, &one);
    if (layers)
        gl->DepthMask(GL_FALSE);
    switch (a->scene) {
    case ANCHOR_GL_SMALL:
        gl->DrawArrays(GL_TRIANGLES, 0, (GLsizei)(3 * a->small_tris));
        break;
    case ANCHOR_GL_MID:
        gl->DrawArrays(GL_TRIANGLES, 0, (GLsizei)(3 * a->mid_tris));
        break;
    case ANCHOR_GL_LAYERS:
    case ANCHOR_GL_LAYERS_POINT:
    case ANCHOR_GL_LAYERS_BC1:
    case ANCHOR_GL_LAYERS_BLEND:
    case ANCHOR_GL_LAYERS_ALPHA:
        for (uint32_t l = 0; l < a->layers; l++)
            gl->DrawArrays(GL_TRIANGLES, 0, (GLsizei)a->quad_vertices);
        break;
    case ANCHOR_GL_DRAWS:
        for (uint32_t i = 0; i < a->small_tris; i++)
            gl->DrawArrays(GL_TRIANGLES, (GLint)(3 * i), 3);
        break;
    case ANCHOR_GL_MESH:
        gl->DrawArrays(GL_TRIANGLES, 0, (GLsizei)a->mesh_vertices);
        break;
    default:
        break;
    }
    if (a->samples == 4) /* the resolve: each pixel's samples averaged into the 1x texture */
        gl->BlitNamedFramebuffer(a->ms_fbo, a->fbo, 0, 0, (GLint)a->width, (GLint)a->height, 0, 0,
                                 (GLint)a->width, (GLint)a->height, GL_COLOR_BUFFER_BIT,
                                 GL_NEAREST);
}

void anchor_gl_finish(anchor_gl *a) { a->gl.Finish(); }

bool anchor_gl_readback(anchor_gl *a, uint8_t *img)
{
    const kg_gl *gl = &a->gl;
    gl->Finish();
    if (gl->GetError() != GL_NO_ERROR)
        return false;
    size_t size = (size_t)a->width * a->height * 4;
    gl->GetTextureSubImage(a->color, 0, 0, 0, 0, (GLsizei)a->width, (GLsizei)a->height, 1, GL_RGBA,
                           GL_UNSIGNED_BYTE, (GLsizei)size, img);
    return gl->GetError() == GL_NO_ERROR;
}

const char *anchor_gl_provider(const anchor_gl *a) { return kg_context_provider(a->ctx); }
const char *anchor_gl_renderer(const anchor_gl *a) { return kg_context_renderer(a->ctx); }
bool anchor_gl_threads_ignored(const anchor_gl *a) { return kg_context_threads_ignored(a->ctx); }
