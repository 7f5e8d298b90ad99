/*
 * gl/glapi: the table of GL functions the osmesa backend calls, and its
 * loader.
 *
 * Why a table: libOSMesa exports every gl* symbol, and so do libGL and
 * libOpenGL, which surfaceless EGL would use; linking one of them
 * directly would bind kiln to that library's dispatch. Every GL call goes
 * through a kg_gl filled from the provider's GetProcAddress instead
 * (provider.h), so one binary works with either provider and links no GL
 * library at all. <GL/glcorearb.h> is included WITHOUT GL_GLEXT_PROTOTYPES:
 * it then declares only the PFNGL...PROC types, and a stray direct gl*
 * call is an implicit declaration that -Wall reports.
 *
 * Contract:
 * - kg_gl_load runs with the context current on the calling thread: it
 *   asks that context for its version and extensions.
 * - A kg_gl belongs to one context. Its functions may be called only on
 *   the thread where that context is current (the backend's GL thread).
 * - Every REQ entry is non-NULL after a successful load. An OPT entry is
 *   NULL when the context lacks its version and extension: callers test
 *   it (gl->PolygonOffsetClamp ? ... : ...).
 * - Mesa's GetProcAddress returns a dispatch stub for any gl* name, even
 *   one the context does not support (OSMesaGetProcAddress and
 *   eglGetProcAddress both give non-NULL for "glThisDoesNotExist"), so a
 *   non-NULL pointer proves nothing.
 *   Each entry therefore names the GL version that made it core and the
 *   extension that provides it earlier; the loader keeps the pointer only
 *   when the context has one or the other.
 */
#ifndef KILN_GL_GLAPI_H
#define KILN_GL_GLAPI_H

#ifdef GL_GLEXT_PROTOTYPES
#error "src/gl calls GL only through kg_gl: build without GL_GLEXT_PROTOTYPES"
#endif
#include <GL/glcorearb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(type, name, need, version, extension): the function gl<name>, of the
 * PFNGL...PROC type `type`; need is REQ or OPT; present when the
 * context's version (10 * major + minor) is at least `version`, or it
 * lists `extension` (NULL: none; versions up to 33 are always present,
 * as the providers never accept less than a 3.3 core context).
 * Add a function by adding a line here; nothing else changes. */
/* clang-format off */
#define KG_GL_FUNCTIONS(X)                                                                         \
    /* queries */                                                                                  \
    X(PFNGLGETERRORPROC, GetError, REQ, 10, NULL)                                                  \
    X(PFNGLGETSTRINGPROC, GetString, REQ, 10, NULL)                                                \
    X(PFNGLGETSTRINGIPROC, GetStringi, REQ, 30, NULL)                                              \
    X(PFNGLGETINTEGERVPROC, GetIntegerv, REQ, 10, NULL)                                            \
    X(PFNGLGETFLOATVPROC, GetFloatv, REQ, 10, NULL)                                                \
    X(PFNGLDEBUGMESSAGECALLBACKPROC, DebugMessageCallback, OPT, 43, "GL_KHR_debug")                \
    /* fixed-function state */                                                                     \
    X(PFNGLENABLEPROC, Enable, REQ, 10, NULL)                                                      \
    X(PFNGLDISABLEPROC, Disable, REQ, 10, NULL)                                                    \
    X(PFNGLENABLEIPROC, Enablei, REQ, 30, NULL)                                                    \
    X(PFNGLDISABLEIPROC, Disablei, REQ, 30, NULL)                                                  \
    X(PFNGLVIEWPORTPROC, Viewport, REQ, 10, NULL)                                                  \
    X(PFNGLVIEWPORTINDEXEDFPROC, ViewportIndexedf, REQ, 41, "GL_ARB_viewport_array")               \
    X(PFNGLDEPTHRANGEFPROC, DepthRangef, REQ, 41, "GL_ARB_ES2_compatibility")                      \
    X(PFNGLDEPTHRANGEINDEXEDPROC, DepthRangeIndexed, REQ, 41, "GL_ARB_viewport_array")             \
    X(PFNGLSCISSORPROC, Scissor, REQ, 10, NULL)                                                    \
    X(PFNGLCLIPCONTROLPROC, ClipControl, REQ, 45, "GL_ARB_clip_control")                           \
    X(PFNGLPOLYGONMODEPROC, PolygonMode, REQ, 10, NULL)                                            \
    X(PFNGLPOLYGONOFFSETPROC, PolygonOffset, REQ, 11, NULL)                                        \
    X(PFNGLPOLYGONOFFSETCLAMPPROC, PolygonOffsetClamp, OPT, 46, "GL_ARB_polygon_offset_clamp")     \
    X(PFNGLPROVOKINGVERTEXPROC, ProvokingVertex, REQ, 32, NULL)                                    \
    X(PFNGLCULLFACEPROC, CullFace, REQ, 10, NULL)                                                  \
    X(PFNGLFRONTFACEPROC, FrontFace, REQ, 10, NULL)                                                \
    X(PFNGLLINEWIDTHPROC, LineWidth, REQ, 10, NULL)                                                \
    X(PFNGLPOINTSIZEPROC, PointSize, REQ, 10, NULL)                                                \
    X(PFNGLDEPTHFUNCPROC, DepthFunc, REQ, 10, NULL)                                                \
    X(PFNGLDEPTHMASKPROC, DepthMask, REQ, 10, NULL)                                                \
    X(PFNGLSTENCILFUNCSEPARATEPROC, StencilFuncSeparate, REQ, 20, NULL)                            \
    X(PFNGLSTENCILOPSEPARATEPROC, StencilOpSeparate, REQ, 20, NULL)                                \
    X(PFNGLSTENCILMASKSEPARATEPROC, StencilMaskSeparate, REQ, 20, NULL)                            \
    X(PFNGLCOLORMASKIPROC, ColorMaski, REQ, 30, NULL)                                              \
    X(PFNGLBLENDFUNCSEPARATEIPROC, BlendFuncSeparatei, REQ, 40, "GL_ARB_draw_buffers_blend")       \
    X(PFNGLBLENDEQUATIONSEPARATEIPROC, BlendEquationSeparatei,                                     \
      REQ, 40, "GL_ARB_draw_buffers_blend")                                                        \
    X(PFNGLBLENDCOLORPROC, BlendColor, REQ, 14, NULL)                                              \
    X(PFNGLBLENDFUNCSEPARATEPROC, BlendFuncSeparate, REQ, 14, NULL)                                \
    X(PFNGLBLENDEQUATIONSEPARATEPROC, BlendEquationSeparate, REQ, 20, NULL)                        \
    X(PFNGLCOLORMASKPROC, ColorMask, REQ, 10, NULL)                                                \
    X(PFNGLPRIMITIVERESTARTINDEXPROC, PrimitiveRestartIndex, REQ, 31, NULL)                        \
    X(PFNGLMEMORYBARRIERPROC, MemoryBarrier, REQ, 42, "GL_ARB_shader_image_load_store")            \
    X(PFNGLFINISHPROC, Finish, REQ, 10, NULL)                                                      \
    X(PFNGLFLUSHPROC, Flush, REQ, 10, NULL)                                                        \
    /* pixels and clears */                                                                        \
    X(PFNGLPIXELSTOREIPROC, PixelStorei, REQ, 10, NULL)                                            \
    X(PFNGLREADPIXELSPROC, ReadPixels, REQ, 10, NULL)                                              \
    X(PFNGLREADBUFFERPROC, ReadBuffer, REQ, 10, NULL)                                              \
    X(PFNGLDRAWBUFFERSPROC, DrawBuffers, REQ, 20, NULL)                                            \
    X(PFNGLCLEARBUFFERFVPROC, ClearBufferfv, REQ, 30, NULL)                                        \
    X(PFNGLCLEARBUFFERIVPROC, ClearBufferiv, REQ, 30, NULL)                                        \
    X(PFNGLCLEARBUFFERFIPROC, ClearBufferfi, REQ, 30, NULL)                                        \
    X(PFNGLCLEARCOLORPROC, ClearColor, REQ, 10, NULL)                                              \
    X(PFNGLCLEARPROC, Clear, REQ, 10, NULL)                                                        \
    /* textures */                                                                                 \
    X(PFNGLCREATETEXTURESPROC, CreateTextures, REQ, 45, "GL_ARB_direct_state_access")              \
    X(PFNGLDELETETEXTURESPROC, DeleteTextures, REQ, 11, NULL)                                      \
    X(PFNGLGENTEXTURESPROC, GenTextures, REQ, 11, NULL)                                            \
    X(PFNGLTEXTURESTORAGE2DPROC, TextureStorage2D, REQ, 45, "GL_ARB_direct_state_access")          \
    X(PFNGLTEXTURESTORAGE3DPROC, TextureStorage3D, REQ, 45, "GL_ARB_direct_state_access")          \
    X(PFNGLTEXTURESUBIMAGE2DPROC, TextureSubImage2D, REQ, 45, "GL_ARB_direct_state_access")        \
    X(PFNGLCOMPRESSEDTEXTURESUBIMAGE2DPROC, CompressedTextureSubImage2D, REQ, 45, "GL_ARB_direct_state_access") \
    X(PFNGLTEXTURESUBIMAGE3DPROC, TextureSubImage3D, REQ, 45, "GL_ARB_direct_state_access")        \
    X(PFNGLTEXTUREVIEWPROC, TextureView, REQ, 43, "GL_ARB_texture_view")                           \
    X(PFNGLTEXTUREBUFFERPROC, TextureBuffer, REQ, 45, "GL_ARB_direct_state_access")                \
    X(PFNGLBINDTEXTUREUNITPROC, BindTextureUnit, REQ, 45, "GL_ARB_direct_state_access")            \
    X(PFNGLGETTEXTURESUBIMAGEPROC, GetTextureSubImage, REQ, 45, "GL_ARB_get_texture_sub_image")    \
    X(PFNGLGETTEXTUREIMAGEPROC, GetTextureImage, REQ, 45, "GL_ARB_direct_state_access")            \
    X(PFNGLGENERATETEXTUREMIPMAPPROC, GenerateTextureMipmap,                                       \
      REQ, 45, "GL_ARB_direct_state_access")                                                       \
    X(PFNGLTEXTUREPARAMETERIPROC, TextureParameteri, REQ, 45, "GL_ARB_direct_state_access")        \
    X(PFNGLCOPYIMAGESUBDATAPROC, CopyImageSubData, REQ, 43, "GL_ARB_copy_image")                   \
    /* samplers */                                                                                 \
    X(PFNGLCREATESAMPLERSPROC, CreateSamplers, REQ, 45, "GL_ARB_direct_state_access")              \
    X(PFNGLDELETESAMPLERSPROC, DeleteSamplers, REQ, 33, NULL)                                      \
    X(PFNGLSAMPLERPARAMETERIPROC, SamplerParameteri, REQ, 33, NULL)                                \
    X(PFNGLSAMPLERPARAMETERFPROC, SamplerParameterf, REQ, 33, NULL)                                \
    X(PFNGLSAMPLERPARAMETERFVPROC, SamplerParameterfv, REQ, 33, NULL)                              \
    X(PFNGLBINDSAMPLERPROC, BindSampler, REQ, 33, NULL)                                            \
    /* buffers */                                                                                  \
    X(PFNGLCREATEBUFFERSPROC, CreateBuffers, REQ, 45, "GL_ARB_direct_state_access")                \
    X(PFNGLDELETEBUFFERSPROC, DeleteBuffers, REQ, 15, NULL)                                        \
    X(PFNGLNAMEDBUFFERDATAPROC, NamedBufferData, REQ, 45, "GL_ARB_direct_state_access")            \
    X(PFNGLNAMEDBUFFERSUBDATAPROC, NamedBufferSubData, REQ, 45, "GL_ARB_direct_state_access")      \
    X(PFNGLNAMEDBUFFERSTORAGEPROC, NamedBufferStorage, REQ, 45, "GL_ARB_direct_state_access")      \
    X(PFNGLGETNAMEDBUFFERSUBDATAPROC, GetNamedBufferSubData,                                       \
      REQ, 45, "GL_ARB_direct_state_access")                                                       \
    X(PFNGLBINDBUFFERPROC, BindBuffer, REQ, 15, NULL)                                              \
    X(PFNGLBINDBUFFERRANGEPROC, BindBufferRange, REQ, 30, NULL)                                    \
    /* framebuffers */                                                                             \
    X(PFNGLCREATEFRAMEBUFFERSPROC, CreateFramebuffers, REQ, 45, "GL_ARB_direct_state_access")      \
    X(PFNGLDELETEFRAMEBUFFERSPROC, DeleteFramebuffers, REQ, 30, NULL)                              \
    X(PFNGLBINDFRAMEBUFFERPROC, BindFramebuffer, REQ, 30, NULL)                                    \
    X(PFNGLNAMEDFRAMEBUFFERTEXTUREPROC, NamedFramebufferTexture,                                   \
      REQ, 45, "GL_ARB_direct_state_access")                                                       \
    X(PFNGLNAMEDFRAMEBUFFERTEXTURELAYERPROC, NamedFramebufferTextureLayer, REQ, 45,                \
      "GL_ARB_direct_state_access")                                                                \
    X(PFNGLNAMEDFRAMEBUFFERDRAWBUFFERSPROC, NamedFramebufferDrawBuffers, REQ, 45,                  \
      "GL_ARB_direct_state_access")                                                                \
    X(PFNGLNAMEDFRAMEBUFFERREADBUFFERPROC, NamedFramebufferReadBuffer, REQ, 45,                    \
      "GL_ARB_direct_state_access")                                                                \
    X(PFNGLCHECKNAMEDFRAMEBUFFERSTATUSPROC, CheckNamedFramebufferStatus, REQ, 45,                  \
      "GL_ARB_direct_state_access")                                                                \
    X(PFNGLBLITNAMEDFRAMEBUFFERPROC, BlitNamedFramebuffer, REQ, 45, "GL_ARB_direct_state_access")  \
    X(PFNGLNAMEDFRAMEBUFFERRENDERBUFFERPROC, NamedFramebufferRenderbuffer, REQ, 45,                \
      "GL_ARB_direct_state_access")                                                                \
    X(PFNGLCREATERENDERBUFFERSPROC, CreateRenderbuffers, REQ, 45, "GL_ARB_direct_state_access")    \
    X(PFNGLDELETERENDERBUFFERSPROC, DeleteRenderbuffers, REQ, 30, NULL)                            \
    X(PFNGLNAMEDRENDERBUFFERSTORAGEMULTISAMPLEPROC, NamedRenderbufferStorageMultisample, REQ, 45,  \
      "GL_ARB_direct_state_access")                                                                \
    /* vertex input and draws */                                                                   \
    X(PFNGLCREATEVERTEXARRAYSPROC, CreateVertexArrays, REQ, 45, "GL_ARB_direct_state_access")      \
    X(PFNGLDELETEVERTEXARRAYSPROC, DeleteVertexArrays, REQ, 30, NULL)                              \
    X(PFNGLBINDVERTEXARRAYPROC, BindVertexArray, REQ, 30, NULL)                                    \
    X(PFNGLENABLEVERTEXATTRIBARRAYPROC, EnableVertexAttribArray, REQ, 20, NULL)                    \
    X(PFNGLDISABLEVERTEXATTRIBARRAYPROC, DisableVertexAttribArray, REQ, 20, NULL)                  \
    X(PFNGLVERTEXATTRIBPOINTERPROC, VertexAttribPointer, REQ, 20, NULL)                            \
    X(PFNGLVERTEXATTRIBIPOINTERPROC, VertexAttribIPointer, REQ, 30, NULL)                          \
    X(PFNGLVERTEXATTRIBDIVISORPROC, VertexAttribDivisor, REQ, 33, NULL)                            \
    X(PFNGLVERTEXATTRIBFORMATPROC, VertexAttribFormat,                                             \
      REQ, 43, "GL_ARB_vertex_attrib_binding")                                                     \
    X(PFNGLVERTEXATTRIBBINDINGPROC, VertexAttribBinding,                                           \
      REQ, 43, "GL_ARB_vertex_attrib_binding")                                                     \
    X(PFNGLBINDVERTEXBUFFERPROC, BindVertexBuffer,                                                 \
      REQ, 43, "GL_ARB_vertex_attrib_binding")                                                     \
    X(PFNGLVERTEXBINDINGDIVISORPROC, VertexBindingDivisor,                                         \
      REQ, 43, "GL_ARB_vertex_attrib_binding")                                                     \
    X(PFNGLVERTEXATTRIB4FPROC, VertexAttrib4f, REQ, 20, NULL)                                      \
    X(PFNGLDRAWARRAYSPROC, DrawArrays, REQ, 11, NULL)                                              \
    X(PFNGLDRAWELEMENTSPROC, DrawElements, REQ, 11, NULL)                                          \
    X(PFNGLDRAWARRAYSINSTANCEDBASEINSTANCEPROC, DrawArraysInstancedBaseInstance, REQ, 42,          \
      "GL_ARB_base_instance")                                                                      \
    X(PFNGLDRAWELEMENTSINSTANCEDBASEVERTEXBASEINSTANCEPROC,                                        \
      DrawElementsInstancedBaseVertexBaseInstance, REQ, 42, "GL_ARB_base_instance")                \
    /* shaders and programs */                                                                     \
    X(PFNGLCREATESHADERPROC, CreateShader, REQ, 20, NULL)                                          \
    X(PFNGLSHADERSOURCEPROC, ShaderSource, REQ, 20, NULL)                                          \
    X(PFNGLCOMPILESHADERPROC, CompileShader, REQ, 20, NULL)                                        \
    X(PFNGLGETSHADERIVPROC, GetShaderiv, REQ, 20, NULL)                                            \
    X(PFNGLGETSHADERINFOLOGPROC, GetShaderInfoLog, REQ, 20, NULL)                                  \
    X(PFNGLDELETESHADERPROC, DeleteShader, REQ, 20, NULL)                                          \
    X(PFNGLCREATEPROGRAMPROC, CreateProgram, REQ, 20, NULL)                                        \
    X(PFNGLATTACHSHADERPROC, AttachShader, REQ, 20, NULL)                                          \
    X(PFNGLBINDATTRIBLOCATIONPROC, BindAttribLocation, REQ, 20, NULL)                              \
    X(PFNGLBINDFRAGDATALOCATIONPROC, BindFragDataLocation, REQ, 30, NULL)                          \
    X(PFNGLLINKPROGRAMPROC, LinkProgram, REQ, 20, NULL)                                            \
    X(PFNGLGETPROGRAMIVPROC, GetProgramiv, REQ, 20, NULL)                                          \
    X(PFNGLGETPROGRAMINFOLOGPROC, GetProgramInfoLog, REQ, 20, NULL)                                \
    X(PFNGLDELETEPROGRAMPROC, DeleteProgram, REQ, 20, NULL)                                        \
    X(PFNGLUSEPROGRAMPROC, UseProgram, REQ, 20, NULL)                                              \
    X(PFNGLGETUNIFORMLOCATIONPROC, GetUniformLocation, REQ, 20, NULL)                              \
    X(PFNGLGETACTIVEUNIFORMPROC, GetActiveUniform, REQ, 20, NULL)                                  \
    X(PFNGLGETUNIFORMBLOCKINDEXPROC, GetUniformBlockIndex, REQ, 31, NULL)                          \
    X(PFNGLUNIFORMBLOCKBINDINGPROC, UniformBlockBinding, REQ, 31, NULL)                            \
    X(PFNGLUNIFORM1IPROC, Uniform1i, REQ, 20, NULL)                                                \
    X(PFNGLUNIFORM4FVPROC, Uniform4fv, REQ, 20, NULL)                                              \
    X(PFNGLPROGRAMUNIFORM4FVPROC, ProgramUniform4fv, REQ, 41, "GL_ARB_separate_shader_objects")    \
    X(PFNGLPROGRAMUNIFORM1IPROC, ProgramUniform1i, REQ, 41, "GL_ARB_separate_shader_objects")
/* clang-format on */

/* One context's functions, called as gl->Clear(...). Plain data: copy or
 * zero it freely; it owns nothing. */
typedef struct kg_gl {
    uint32_t version; /* the context's GL version, 10 * major + minor (45 = 4.5) */
    bool core;        /* a core-profile context */
#define KG_GL_FIELD(type, name, need, ver, ext) type name;
    KG_GL_FUNCTIONS(KG_GL_FIELD)
#undef KG_GL_FIELD
} kg_gl;

/* Fills *gl for the context current on the calling thread, resolving each
 * name "gl<name>" with get_proc (the provider's GetProcAddress, returning
 * NULL for an unknown name). Returns false when a REQ function is missing,
 * with "glName (GL x.y or GL_EXT_name)" for the first one written to
 * `missing` (n bytes, may be 0); the table is filled as far as it could be
 * either way. */
bool kg_gl_load(kg_gl *gl, void *(*get_proc)(const char *name), char *missing, size_t n);

/* Compiles one shader stage from `len` bytes of GLSL. Returns the shader,
 * or 0 with GL's info log in `info` (info_size bytes). */
GLuint kg_gl_compile(const kg_gl *gl, GLenum type, const char *src, size_t len, char *info, size_t info_size);

/* True when the context `gl` was loaded for lists extension `name`
 * (e.g. "GL_ARB_clip_control"). Same thread rule as any GL call. */
bool kg_gl_has_extension(const kg_gl *gl, const char *name);

#endif
