/* Scenes on the GL thread: programs from the shaders' GLSL, kd_state
 * translated to GL state, clears and draws into one framebuffer object.
 *
 * Conventions the shaders' GLSL follows (kiln.h, effects.c):
 * - The vertex desc's string up to a line "//--- fragment" is the vertex
 *   shader; the pixel desc's string after that line (or all of it, when
 *   there is none) is the fragment shader.
 * - The k-th `attribute` (or global `in`) of the vertex shader is input
 *   element k; the k-th global `out` of a #version 130+ fragment shader is
 *   render target k (gl_FragColor writes them all).
 * - Constant buffer N of the vertex stage is `uniform vec4 u_cb<N>[n]`, of
 *   the pixel stage `uniform vec4 u_ps_cb<N>[n]`; shader resource N is
 *   `uniform sampler2D u_tex<N>`, sampled with sampler N.
 */
#include "gl.h"

#include <stdio.h>
#include <string.h>

#define SEPARATOR "//--- fragment\n"
#define MAX_CB_VEC4 4096 /* a 64 KiB constant buffer */

typedef struct kg_program {
    struct kg_program *next;
    const char *vs_src, *ps_src;  /* the descs' strings (identity) */
    char *vs_copy, *ps_copy;      /* and their text when compiled */
    size_t vs_len, ps_len;
    GLuint prog;                  /* 0: failed (logged once) */
    GLint vs_cb[KILN_MAX_CONSTANT_BUFFERS], ps_cb[KILN_MAX_CONSTANT_BUFFERS]; /* locations, -1 none */
    GLint vs_cb_n[KILN_MAX_CONSTANT_BUFFERS], ps_cb_n[KILN_MAX_CONSTANT_BUFFERS];
} kg_program;

/* ---- programs ---- */

static void stage_text(const char *src, bool vertex, const char **out, size_t *len)
{
    const char *sep = strstr(src, SEPARATOR);
    if (!sep) {
        *out = src;
        *len = strlen(src);
    } else if (vertex) {
        *out = src;
        *len = (size_t)(sep - src);
    } else {
        *out = sep + strlen(SEPARATOR);
        *len = strlen(*out);
    }
}

/* Calls fn(name, index) for each global declaration with `qualifier`
 * (attribute/in/out) at the start of a line, in order. */
static void each_decl(const char *src, size_t len, const char *const *quals, int nquals,
                      void (*fn)(void *arg, const char *name, uint32_t index), void *arg)
{
    uint32_t index = 0;
    const char *p = src, *end = src + len;
    while (p < end) {
        const char *line_end = memchr(p, '\n', (size_t)(end - p));
        if (!line_end)
            line_end = end;
        const char *q = p;
        while (q < line_end && (*q == ' ' || *q == '\t'))
            q++;
        for (int k = 0; k < nquals; k++) {
            size_t ql = strlen(quals[k]);
            if ((size_t)(line_end - q) > ql && !memcmp(q, quals[k], ql) && (q[ql] == ' ' || q[ql] == '\t')) {
                /* The name is the identifier before ';' (or '['). */
                const char *semi = memchr(q, ';', (size_t)(line_end - q));
                if (!semi)
                    break;
                const char *e = semi;
                const char *br = memchr(q, '[', (size_t)(semi - q));
                if (br)
                    e = br;
                while (e > q && (e[-1] == ' ' || e[-1] == '\t'))
                    e--;
                const char *b = e;
                while (b > q && (b[-1] == '_' || (b[-1] >= '0' && b[-1] <= '9') || (b[-1] >= 'a' && b[-1] <= 'z') ||
                                 (b[-1] >= 'A' && b[-1] <= 'Z')))
                    b--;
                char name[128];
                size_t n = (size_t)(e - b);
                if (n && n < sizeof name) {
                    memcpy(name, b, n);
                    name[n] = 0;
                    fn(arg, name, index++);
                }
                break;
            }
        }
        p = line_end + 1;
    }
}

typedef struct bind_arg {
    const kg_gl *gl;
    GLuint prog;
} bind_arg;

static void bind_attrib(void *arg, const char *name, uint32_t index)
{
    bind_arg *b = arg;
    b->gl->BindAttribLocation(b->prog, index, name);
}

static void bind_output(void *arg, const char *name, uint32_t index)
{
    bind_arg *b = arg;
    b->gl->BindFragDataLocation(b->prog, index, name);
}

static void log_gl(kg_device *d, const char *what, const char *info)
{
    kb_log(d->env, KILN_LOG_LEVEL_ERROR, KILN_LOG_GL_SHADER_FAILED, "kiln_draw", "%s: %s", what, info);
}

static GLuint compile(kg_device *d, GLenum type, const char *src, size_t len)
{
    char info[1024];
    GLuint sh = kg_gl_compile(&d->gl, type, src, len, info, sizeof info);
    if (!sh)
        log_gl(d, type == GL_VERTEX_SHADER ? "vertex shader GLSL does not compile" : "pixel shader GLSL does not compile",
               info);
    return sh;
}

static GLuint link(kg_device *d, kg_program *p, const char *vs, size_t vs_len, const char *ps, size_t ps_len)
{
    const kg_gl *gl = &d->gl;
    GLuint v = compile(d, GL_VERTEX_SHADER, vs, vs_len);
    GLuint f = v ? compile(d, GL_FRAGMENT_SHADER, ps, ps_len) : 0;
    if (!f) {
        if (v)
            gl->DeleteShader(v);
        return 0;
    }
    GLuint prog = gl->CreateProgram();
    gl->AttachShader(prog, v);
    gl->AttachShader(prog, f);
    bind_arg b = {gl, prog};
    static const char *const in_quals[] = {"attribute", "in"};
    static const char *const out_quals[] = {"out"};
    each_decl(vs, vs_len, in_quals, 2, bind_attrib, &b);
    each_decl(ps, ps_len, out_quals, 1, bind_output, &b);
    gl->LinkProgram(prog);
    gl->DeleteShader(v);
    gl->DeleteShader(f);
    GLint ok = 0;
    gl->GetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        char info[1024] = "";
        gl->GetProgramInfoLog(prog, sizeof info, NULL, info);
        log_gl(d, "the shaders' GLSL does not link", info);
        gl->DeleteProgram(prog);
        return 0;
    }
    for (int i = 0; i < KILN_MAX_CONSTANT_BUFFERS; i++)
        p->vs_cb[i] = p->ps_cb[i] = -1;
    GLint count = 0;
    gl->GetProgramiv(prog, GL_ACTIVE_UNIFORMS, &count);
    for (GLint u = 0; u < count; u++) {
        char name[128];
        GLint size = 0;
        GLenum type = 0;
        gl->GetActiveUniform(prog, (GLuint)u, sizeof name, NULL, &size, &type, name);
        char *br = strchr(name, '[');
        if (br)
            *br = 0;
        unsigned slot;
        char tail;
        GLint loc = gl->GetUniformLocation(prog, name);
        if (sscanf(name, "u_cb%u%c", &slot, &tail) == 1 && slot < KILN_MAX_CONSTANT_BUFFERS && type == GL_FLOAT_VEC4) {
            p->vs_cb[slot] = loc;
            p->vs_cb_n[slot] = size;
        } else if (sscanf(name, "u_ps_cb%u%c", &slot, &tail) == 1 && slot < KILN_MAX_CONSTANT_BUFFERS &&
                   type == GL_FLOAT_VEC4) {
            p->ps_cb[slot] = loc;
            p->ps_cb_n[slot] = size;
        } else if (sscanf(name, "u_tex%u%c", &slot, &tail) == 1 && slot < KG_SRV_SLOTS) {
            gl->ProgramUniform1i(prog, loc, (GLint)slot);
        }
    }
    return prog;
}

static char *dup_text(kg_device *d, const char *s, size_t n)
{
    char *c = kb_alloc(d->env, n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

/* The fragment shader of a depth-only draw (no pixel shader): writes no
 * color (apply_fixed masks every target off as well), in the vertex
 * shader's #version so the two link. */
static void depth_only_text(const char *vs, size_t vs_len, char *buf, size_t cap, const char **out, size_t *len)
{
    const char *ver = vs_len >= 9 ? strstr(vs, "#version") : NULL;
    int n = 0;
    if (ver && ver < vs + vs_len) {
        const char *eol = memchr(ver, '\n', (size_t)(vs + vs_len - ver));
        n = snprintf(buf, cap, "%.*s\nvoid main() {}\n", (int)(eol ? eol - ver : vs + vs_len - ver), ver);
    } else {
        n = snprintf(buf, cap, "void main() {}\n");
    }
    *out = buf;
    *len = n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static kg_program *program_for(kg_device *d, const kd_state *s)
{
    const char *vs, *ps;
    size_t vs_len, ps_len;
    char depth_only[96];
    stage_text(s->vs_glsl, true, &vs, &vs_len);
    if (s->ps_glsl)
        stage_text(s->ps_glsl, false, &ps, &ps_len);
    else
        depth_only_text(vs, vs_len, depth_only, sizeof depth_only, &ps, &ps_len);
    for (kg_program *p = d->programs; p; p = p->next)
        if (p->vs_src == s->vs_glsl && p->ps_src == s->ps_glsl && p->vs_len == vs_len && p->ps_len == ps_len &&
            !memcmp(p->vs_copy, vs, vs_len) && !memcmp(p->ps_copy, ps, ps_len))
            return p;
    kg_program *p = kb_calloc(d->env, sizeof *p);
    if (!p)
        return NULL;
    p->vs_copy = dup_text(d, vs, vs_len);
    p->ps_copy = dup_text(d, ps, ps_len);
    if (!p->vs_copy || !p->ps_copy) {
        kb_free(d->env, p->vs_copy, vs_len + 1);
        kb_free(d->env, p->ps_copy, ps_len + 1);
        kb_free(d->env, p, sizeof *p);
        return NULL;
    }
    p->vs_src = s->vs_glsl;
    p->ps_src = s->ps_glsl;
    p->vs_len = vs_len;
    p->ps_len = ps_len;
    p->prog = link(d, p, vs, vs_len, ps, ps_len); /* 0 stays cached: logged once */
    p->next = d->programs;
    d->programs = p;
    return p;
}

void kg_programs_free(kg_device *d)
{
    while (d->programs) {
        kg_program *p = d->programs;
        d->programs = p->next;
        if (p->prog)
            d->gl.DeleteProgram(p->prog);
        kb_free(d->env, p->vs_copy, p->vs_len + 1);
        kb_free(d->env, p->ps_copy, p->ps_len + 1);
        kb_free(d->env, p, sizeof *p);
    }
    kb_free(d->env, d->cb_scratch, sizeof(float) * 4 * MAX_CB_VEC4);
    d->cb_scratch = NULL;
}

/* ---- state translation ---- */

static GLenum compare(kiln_compare c)
{
    static const GLenum t[] = {GL_LESS,    GL_NEVER,    GL_LESS,   GL_EQUAL,  GL_LEQUAL,
                               GL_GREATER, GL_NOTEQUAL, GL_GEQUAL, GL_ALWAYS};
    return (unsigned)c < sizeof t / sizeof *t ? t[c] : GL_ALWAYS;
}

static GLenum stencil_op(kiln_stencil_op o)
{
    static const GLenum t[] = {GL_KEEP, GL_KEEP, GL_ZERO, GL_REPLACE, GL_INCR, GL_DECR, GL_INVERT, GL_INCR_WRAP, GL_DECR_WRAP};
    return (unsigned)o < sizeof t / sizeof *t ? t[o] : GL_KEEP;
}

static GLenum blend_factor(kiln_blend_factor f)
{
    static const GLenum t[] = {GL_ONE,
                               GL_ZERO,
                               GL_ONE,
                               GL_SRC_COLOR,
                               GL_ONE_MINUS_SRC_COLOR,
                               GL_SRC_ALPHA,
                               GL_ONE_MINUS_SRC_ALPHA,
                               GL_DST_ALPHA,
                               GL_ONE_MINUS_DST_ALPHA,
                               GL_DST_COLOR,
                               GL_ONE_MINUS_DST_COLOR,
                               GL_SRC_ALPHA_SATURATE,
                               GL_CONSTANT_COLOR,
                               GL_ONE_MINUS_CONSTANT_COLOR};
    return (unsigned)f < sizeof t / sizeof *t ? t[f] : GL_ONE;
}

static GLenum blend_op(kiln_blend_op o)
{
    static const GLenum t[] = {GL_FUNC_ADD, GL_FUNC_ADD, GL_FUNC_SUBTRACT, GL_FUNC_REVERSE_SUBTRACT, GL_MIN, GL_MAX};
    return (unsigned)o < sizeof t / sizeof *t ? t[o] : GL_FUNC_ADD;
}

static GLenum address(kiln_address a)
{
    switch (a) {
    case KILN_ADDRESS_WRAP: return GL_REPEAT;
    case KILN_ADDRESS_MIRROR: return GL_MIRRORED_REPEAT;
    case KILN_ADDRESS_BORDER: return GL_CLAMP_TO_BORDER;
    default: return GL_CLAMP_TO_EDGE;
    }
}

static GLenum topology(kiln_topology t)
{
    switch (t) {
    case KILN_TOPOLOGY_POINT_LIST: return GL_POINTS;
    case KILN_TOPOLOGY_LINE_LIST: return GL_LINES;
    case KILN_TOPOLOGY_LINE_STRIP: return GL_LINE_STRIP;
    case KILN_TOPOLOGY_TRIANGLE_STRIP: return GL_TRIANGLE_STRIP;
    default: return GL_TRIANGLES;
    }
}

static void set_cap(const kg_gl *gl, GLenum cap, bool on)
{
    if (on)
        gl->Enable(cap);
    else
        gl->Disable(cap);
}

/* Rasterizer, depth-stencil and blend state of a draw. */
static void apply_fixed(kg_device *d, const kd_state *s, uint32_t nrt)
{
    const kg_gl *gl = &d->gl;
    gl->PolygonMode(GL_FRONT_AND_BACK, s->fill == KILN_FILL_WIREFRAME ? GL_LINE : GL_FILL);
    set_cap(gl, GL_CULL_FACE, s->cull != KILN_CULL_NONE);
    gl->CullFace(s->cull == KILN_CULL_FRONT ? GL_FRONT : GL_BACK);
    /* ARB_clip_control defines facing on the flipped window coordinates,
     * so GL's winding names the orientation as the image is seen, like
     * D3D10's (checked by the "triangle" scene, clockwise and culled BACK). */
    gl->FrontFace(s->front_ccw ? GL_CCW : GL_CW);
    set_cap(gl, GL_DEPTH_CLAMP, !s->depth_clip);
    bool bias = s->depth_bias != 0 || s->slope_bias != 0.0f;
    set_cap(gl, GL_POLYGON_OFFSET_FILL, bias);
    set_cap(gl, GL_POLYGON_OFFSET_LINE, bias);
    set_cap(gl, GL_POLYGON_OFFSET_POINT, bias);
    if (bias) {
        if (gl->PolygonOffsetClamp)
            gl->PolygonOffsetClamp(s->slope_bias, (float)s->depth_bias, s->depth_bias_clamp);
        else
            gl->PolygonOffset(s->slope_bias, (float)s->depth_bias);
    }
    gl->ViewportIndexedf(0, s->vp.x, s->vp.y, s->vp.width, s->vp.height);
    gl->DepthRangef(s->vp.min_depth, s->vp.max_depth);
    set_cap(gl, GL_SCISSOR_TEST, s->scissor_enable);
    if (s->scissor_enable) {
        int32_t w = s->scissor.right - s->scissor.left, h = s->scissor.bottom - s->scissor.top;
        gl->Scissor(s->scissor.left, s->scissor.top, w > 0 ? w : 0, h > 0 ? h : 0);
    }
    set_cap(gl, GL_DEPTH_TEST, s->depth_enable);
    gl->DepthMask(s->depth_write ? GL_TRUE : GL_FALSE);
    gl->DepthFunc(compare(s->depth_func));
    set_cap(gl, GL_STENCIL_TEST, s->stencil_enable);
    const kd_stencil_face *faces[2] = {&s->front, &s->back};
    const GLenum which[2] = {GL_FRONT, GL_BACK};
    for (int f = 0; f < 2; f++) {
        gl->StencilFuncSeparate(which[f], compare(faces[f]->func), (GLint)s->stencil_ref, s->stencil_read);
        gl->StencilOpSeparate(which[f], stencil_op(faces[f]->fail), stencil_op(faces[f]->zfail),
                              stencil_op(faces[f]->pass));
    }
    gl->StencilMaskSeparate(GL_FRONT_AND_BACK, s->stencil_write);
    for (uint32_t r = 0; r < nrt; r++) {
        const kd_blend_rt *b = &s->blend[r];
        if (b->enable)
            gl->Enablei(GL_BLEND, r);
        else
            gl->Disablei(GL_BLEND, r);
        gl->BlendFuncSeparatei(r, blend_factor(b->src), blend_factor(b->dst), blend_factor(b->src_a),
                               blend_factor(b->dst_a));
        gl->BlendEquationSeparatei(r, blend_op(b->op), blend_op(b->op_a));
        /* A target the shader does not write keeps its contents. */
        uint32_t m = r < s->ps_outputs ? b->write_mask : 0;
        gl->ColorMaski(r, (m & 1) != 0, (m & 2) != 0, (m & 4) != 0, (m & 8) != 0);
    }
    gl->BlendColor(s->blend_factor[0], s->blend_factor[1], s->blend_factor[2], s->blend_factor[3]);
}

static void apply_sampler(kg_device *d, uint32_t unit, const kd_sampler *sm)
{
    const kg_gl *gl = &d->gl;
    GLuint o = d->samplers[unit];
    bool lin = sm->min_filter == KILN_FILTER_LINEAR, mip_lin = sm->mip_filter == KILN_FILTER_LINEAR;
    GLenum min = lin ? (mip_lin ? GL_LINEAR_MIPMAP_LINEAR : GL_LINEAR_MIPMAP_NEAREST)
                     : (mip_lin ? GL_NEAREST_MIPMAP_LINEAR : GL_NEAREST_MIPMAP_NEAREST);
    gl->SamplerParameteri(o, GL_TEXTURE_MIN_FILTER, (GLint)min);
    gl->SamplerParameteri(o, GL_TEXTURE_MAG_FILTER, sm->mag_filter == KILN_FILTER_LINEAR ? GL_LINEAR : GL_NEAREST);
    gl->SamplerParameteri(o, GL_TEXTURE_WRAP_S, (GLint)address(sm->address_u));
    gl->SamplerParameteri(o, GL_TEXTURE_WRAP_T, (GLint)address(sm->address_v));
    gl->SamplerParameterf(o, GL_TEXTURE_LOD_BIAS, sm->mip_lod_bias);
    gl->SamplerParameterf(o, GL_TEXTURE_MIN_LOD, sm->min_lod);
    gl->SamplerParameterf(o, GL_TEXTURE_MAX_LOD, sm->max_lod);
    gl->SamplerParameterfv(o, GL_TEXTURE_BORDER_COLOR, sm->border);
    /* a comparison sampler: GLSL's shadow samplers compare (ref func texel) */
    gl->SamplerParameteri(o, GL_TEXTURE_COMPARE_MODE, sm->cmp ? GL_COMPARE_REF_TO_TEXTURE : GL_NONE);
    if (sm->cmp)
        gl->SamplerParameteri(o, GL_TEXTURE_COMPARE_FUNC, (GLint)compare(sm->cmp));
    gl->BindSampler(unit, o);
}

/* Vertex element formats: components, type, normalized. */
static bool element_format(kiln_format f, GLint *size, GLenum *type, GLboolean *norm)
{
    *norm = GL_FALSE;
    *type = GL_FLOAT;
    switch (f) {
    case KILN_FORMAT_R32_FLOAT: *size = 1; return true;
    case KILN_FORMAT_R32G32_FLOAT: *size = 2; return true;
    case KILN_FORMAT_R32G32B32_FLOAT: *size = 3; return true;
    case KILN_FORMAT_R32G32B32A32_FLOAT: *size = 4; return true;
    case KILN_FORMAT_R8G8B8A8_UNORM: *size = 4; *type = GL_UNSIGNED_BYTE; *norm = GL_TRUE; return true;
    case KILN_FORMAT_B8G8R8A8_UNORM: *size = GL_BGRA; *type = GL_UNSIGNED_BYTE; *norm = GL_TRUE; return true;
    default: return false;
    }
}

static void upload_cb(kg_device *d, GLuint prog, GLint loc, GLint n, const kres_storage *st)
{
    if (loc < 0 || n <= 0)
        return;
    if (n > MAX_CB_VEC4)
        n = MAX_CB_VEC4;
    size_t want = (size_t)n * 16, have = st ? st->size : 0;
    if (have > want)
        have = want;
    if (have)
        memcpy(d->cb_scratch, st->data, have);
    /* D3D10 reads zeros past the end of a constant buffer. */
    memset((uint8_t *)d->cb_scratch + have, 0, want - have);
    d->gl.ProgramUniform4fv(prog, loc, n, d->cb_scratch);
}

static bool same_inputs(const kd_draw *a, const kd_draw *b)
{
    return a->state == b->state && a->indexed == b->indexed && a->bind->ib_st == b->bind->ib_st && kd_draw_same_storages(a, b);
}

static void issue_draw(const kg_gl *gl, const kd_draw *dw)
{
    const kd_state *s = dw->state;
    GLenum mode = topology(s->topology);
    if (dw->indexed) {
        bool i16 = s->ib_format == KILN_INDEX_UINT16;
        uintptr_t off = s->ib_offset + (uintptr_t)dw->start * (i16 ? 2u : 4u);
        gl->DrawElementsInstancedBaseVertexBaseInstance(mode, (GLsizei)dw->count, i16 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT,
                                                       (const void *)off, (GLsizei)dw->instances, dw->base_vertex,
                                                       dw->start_instance);
    } else {
        gl->DrawArraysInstancedBaseInstance(mode, (GLint)dw->start, (GLsizei)dw->count, (GLsizei)dw->instances,
                                            dw->start_instance);
    }
}

/* One draw; false (with a reason) when it cannot run. A draw with the
 * previous one's state block and storages (a stream of small draws) only
 * issues its draw call: everything else is bound already. */
static bool run_draw(kg_device *d, const kd_draw *dw, const kd_draw **prev, const kd_state **applied, uint32_t nrt,
                     const char **why)
{
    const kg_gl *gl = &d->gl;
    const kd_state *s = dw->state;
    if (*prev && *applied == s && same_inputs(*prev, dw)) {
        issue_draw(gl, dw);
        return true;
    }
    *prev = NULL;
    kg_program *p = program_for(d, s);
    if (!p) {
        *why = "out of memory for a GL program";
        return false;
    }
    if (!p->prog) {
        *why = "the shaders' GLSL failed to compile or link (logged with GL_SHADER_FAILED)";
        return false;
    }
    if (*applied != s) {
        apply_fixed(d, s, nrt);
        for (uint32_t i = 0; i < KILN_MAX_SAMPLERS; i++)
            apply_sampler(d, i, &s->samp[i]);
        *applied = s;
    }
    gl->UseProgram(p->prog);
    for (int i = 0; i < KILN_MAX_CONSTANT_BUFFERS; i++) {
        upload_cb(d, p->prog, p->vs_cb[i], p->vs_cb_n[i], dw->bind->vs_cb_st[i]);
        upload_cb(d, p->prog, p->ps_cb[i], p->ps_cb_n[i], dw->bind->ps_cb_st[i]);
    }
    /* Views up to the highest bound slot (the API refuses slots past
     * KG_SRV_SLOTS here); units above it that the last draw used are
     * unbound. */
    for (uint32_t i = 0; i < KG_SRV_SLOTS; i++) {
        const kres_view *v = i < s->nsrv ? s->srv[i] : NULL;
        GLuint t = 0;
        if (!v && !d->bound_tex[i])
            continue;
        if (v && dw->bind->srv_st[i]) {
            kg_mirror *m = kg_mirror_get(d, v->res, dw->bind->srv_st[i]);
            if (m)
                t = kg_mirror_view(d, m, GL_TEXTURE_2D, v->format, v->first_mip, v->num_mips, v->first_slice, 1);
            if (!t) {
                *why = "a shader resource could not be made a GL texture";
                return false;
            }
        }
        gl->BindTextureUnit(i, t);
        d->bound_tex[i] = t;
    }
    for (uint32_t e = 0; e < KILN_MAX_INPUT_ELEMENTS; e++) {
        if (e >= s->nelems) {
            gl->DisableVertexAttribArray(e);
            continue;
        }
        const kd_element *el = &s->elems[e];
        GLint size;
        GLenum type;
        GLboolean norm;
        kres_storage *st = dw->bind->vb_st[el->slot];
        kg_mirror *m = st ? kg_mirror_get(d, s->vb[el->slot], st) : NULL;
        if (!m || !element_format(el->format, &size, &type, &norm)) {
            *why = "a vertex buffer could not be made a GL buffer";
            return false;
        }
        /* One binding per element: D3D10's step rate is per element, and
         * a stride of 0 must repeat one vertex (BindVertexBuffer keeps 0). */
        gl->VertexAttribFormat(e, size, type, norm, 0);
        gl->VertexAttribBinding(e, e);
        gl->BindVertexBuffer(e, m->name, (GLintptr)s->vb_offset[el->slot] + el->offset, (GLsizei)s->vb_stride[el->slot]);
        gl->VertexBindingDivisor(e, el->per_instance ? (el->step ? el->step : 1) : 0);
        gl->EnableVertexAttribArray(e);
    }
    if (dw->indexed) {
        kg_mirror *m = kg_mirror_get(d, s->ib, dw->bind->ib_st);
        if (!m) {
            *why = "the index buffer could not be made a GL buffer";
            return false;
        }
        gl->BindBuffer(GL_ELEMENT_ARRAY_BUFFER, m->name);
        /* D3D10 cuts strips at the all-ones index and only strips. */
        set_cap(gl, GL_PRIMITIVE_RESTART_FIXED_INDEX,
                s->topology == KILN_TOPOLOGY_LINE_STRIP || s->topology == KILN_TOPOLOGY_TRIANGLE_STRIP);
    }
    issue_draw(gl, dw);
    *prev = dw;
    return true;
}

/* A clear op: its packed texel back to the values GL clears with. */
static void run_clear(kg_device *d, const kd_scene *sc, const kd_op *op)
{
    const kg_gl *gl = &d->gl;
    gl->Disable(GL_SCISSOR_TEST);
    if (op->kind == KD_OP_CLEAR_RT) {
        kiln_format f = sc->rtv[op->rt]->format;
        float c[4] = {0, 0, 0, 1};
        const uint8_t *t = op->texel;
        switch (f) {
        case KILN_FORMAT_R8G8B8A8_UNORM:
            for (int i = 0; i < 4; i++)
                c[i] = t[i] / 255.0f;
            break;
        case KILN_FORMAT_B8G8R8A8_UNORM:
            c[0] = t[2] / 255.0f, c[1] = t[1] / 255.0f, c[2] = t[0] / 255.0f, c[3] = t[3] / 255.0f;
            break;
        case KILN_FORMAT_R8_UNORM: c[0] = t[0] / 255.0f; break;
        case KILN_FORMAT_R32_FLOAT: memcpy(c, t, 4); break;
        case KILN_FORMAT_R32G32_FLOAT: memcpy(c, t, 8); break;
        default: memcpy(c, t, 16); break;
        }
        gl->ColorMaski(op->rt, GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
        gl->ClearBufferfv(GL_COLOR, (GLint)op->rt, c);
        return;
    }
    uint32_t w;
    memcpy(&w, op->texel, 4);
    if (sc->dsv->format == KILN_FORMAT_D32_FLOAT) {
        float z;
        memcpy(&z, &w, 4);
        gl->DepthMask(GL_TRUE);
        gl->ClearBufferfv(GL_DEPTH, 0, &z);
        return;
    }
    if (op->mask & 0xffffffu) {
        float z = (float)((double)(w & 0xffffffu) / 16777215.0);
        gl->DepthMask(GL_TRUE);
        gl->ClearBufferfv(GL_DEPTH, 0, &z);
    }
    if (op->mask & 0xff000000u) {
        GLint st = (GLint)(w >> 24);
        gl->StencilMaskSeparate(GL_FRONT_AND_BACK, 0xff);
        gl->ClearBufferiv(GL_STENCIL, 0, &st);
    }
}

static bool bind_targets(kg_device *d, const kd_scene *sc, kq_cmd *cmd, kg_mirror **rt, kg_mirror **ds)
{
    const kg_gl *gl = &d->gl;
    GLenum bufs[KILN_MAX_RENDER_TARGETS];
    for (uint32_t i = 0; i < KILN_MAX_RENDER_TARGETS; i++) {
        const kres_view *v = i < sc->nrt ? sc->rtv[i] : NULL;
        rt[i] = v ? kg_mirror_get(d, v->res, kd_node_storage(cmd, v->res)) : NULL;
        if (v && !rt[i])
            return false;
        if (rt[i])
            gl->NamedFramebufferTextureLayer(d->fbo, GL_COLOR_ATTACHMENT0 + i, rt[i]->name, (GLint)v->first_mip,
                                             (GLint)v->first_slice);
        else
            gl->NamedFramebufferTexture(d->fbo, GL_COLOR_ATTACHMENT0 + i, 0, 0);
        bufs[i] = rt[i] ? GL_COLOR_ATTACHMENT0 + i : GL_NONE;
    }
    gl->NamedFramebufferDrawBuffers(d->fbo, KILN_MAX_RENDER_TARGETS, bufs);
    const kres_view *v = sc->dsv;
    *ds = v ? kg_mirror_get(d, v->res, kd_node_storage(cmd, v->res)) : NULL;
    if (v && !*ds)
        return false;
    gl->NamedFramebufferTexture(d->fbo, GL_DEPTH_STENCIL_ATTACHMENT, 0, 0);
    if (*ds)
        gl->NamedFramebufferTextureLayer(d->fbo,
                                         v->format == KILN_FORMAT_D24_UNORM_S8_UINT ? GL_DEPTH_STENCIL_ATTACHMENT
                                                                                     : GL_DEPTH_ATTACHMENT,
                                         (*ds)->name, (GLint)v->first_mip, (GLint)v->first_slice);
    gl->BindFramebuffer(GL_DRAW_FRAMEBUFFER, d->fbo);
    return gl->CheckNamedFramebufferStatus(d->fbo, GL_DRAW_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
}

kq_exec_result kg_run_scene(kg_device *d, kq_cmd *cmd)
{
    const kg_gl *gl = &d->gl;
    const kd_scene *sc = cmd->u.scene.scene;
    if (!d->cb_scratch && !(d->cb_scratch = kb_alloc(d->env, sizeof(float) * 4 * MAX_CB_VEC4))) {
        cmd->fail_reason = "out of memory for constant data";
        return KQ_EXEC_FAILED;
    }
    kg_mirror *rt[KILN_MAX_RENDER_TARGETS], *ds;
    if (!bind_targets(d, sc, cmd, rt, &ds)) {
        cmd->fail_reason = "the scene's targets could not be made a complete GL framebuffer";
        (void)gl->GetError();
        return KQ_EXEC_FAILED;
    }
    const kd_state *applied = NULL;
    const kd_draw *prev = NULL;
    const char *why = NULL;
    for (uint32_t i = 0; i < sc->nops; i++) {
        const kd_op *op = &sc->ops[i];
        if (op->kind == KD_OP_DRAW) {
            const char *w = NULL;
            if (!run_draw(d, op->draw, &prev, &applied, sc->nrt, &w) && !why)
                why = w; /* the other draws still run, as on soft */
        } else {
            run_clear(d, sc, op);
            applied = NULL; /* masks and scissor changed */
            prev = NULL;
        }
    }
    /* The command completes when llvmpipe has drawn it, not when the GL
     * calls were made: fences, kiln_finish and the benchmarks then mean
     * what they say (llvmpipe would otherwise still be rasterizing). */
    gl->Finish();
    for (uint32_t i = 0; i < KILN_MAX_RENDER_TARGETS; i++)
        if (rt[i])
            kg_mirror_written(rt[i]);
    if (ds)
        kg_mirror_written(ds);
    GLenum err = gl->GetError();
    if (!why && err != GL_NO_ERROR)
        why = err == GL_OUT_OF_MEMORY ? "GL ran out of memory" : "GL reported an error while drawing";
    if (why) {
        cmd->fail_reason = why;
        return KQ_EXEC_FAILED;
    }
    return KQ_EXEC_DONE;
}

kq_exec_result kg_run_mips(kg_device *d, kq_cmd *cmd)
{
    kq_node *n = &cmd->acc[0];
    kg_mirror *m = kg_mirror_get(d, n->res, n->st);
    GLuint view = m ? kg_mirror_view(d, m, GL_TEXTURE_2D_ARRAY, n->res->format, cmd->u.mips.first_mip,
                                     cmd->u.mips.num_mips, cmd->u.mips.first_slice, cmd->u.mips.num_slices)
                    : 0;
    if (!view) {
        cmd->fail_reason = "the texture could not be made a GL texture";
        return KQ_EXEC_FAILED;
    }
    d->gl.GenerateTextureMipmap(view);
    /* Mesa 22.3's llvmpipe: a read of the texture (not the view) soon
     * after sometimes saw mips not yet written (test_raster_async_osmesa,
     * about 1 run in 3 of one seed); waiting here made 12 of 12 agree. */
    d->gl.Finish();
    kg_mirror_written(m);
    if (d->gl.GetError() != GL_NO_ERROR) {
        cmd->fail_reason = "GL reported an error generating mips";
        return KQ_EXEC_FAILED;
    }
    return KQ_EXEC_DONE;
}
