/* GL copies of storages: the format table, uploads when the CPU bytes
 * moved on, read-backs when the CPU needs what GL rendered. All on the GL
 * thread. */
#include "gl.h"

#include <string.h>

static const kg_format formats[KILN_FORMAT_COUNT] = {
    [KILN_FORMAT_R8G8B8A8_UNORM] = {GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4},
    /* Stored as RGBA: GL swizzles BGRA bytes on upload and read-back, so
     * sampling and blending see the channels D3D10 names. */
    [KILN_FORMAT_B8G8R8A8_UNORM] = {GL_RGBA8, GL_BGRA, GL_UNSIGNED_BYTE, 4},
    [KILN_FORMAT_R8_UNORM] = {GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1},
    [KILN_FORMAT_R32_FLOAT] = {GL_R32F, GL_RED, GL_FLOAT, 4},
    [KILN_FORMAT_R32G32_FLOAT] = {GL_RG32F, GL_RG, GL_FLOAT, 8},
    [KILN_FORMAT_R32G32B32A32_FLOAT] = {GL_RGBA32F, GL_RGBA, GL_FLOAT, 16},
    [KILN_FORMAT_D32_FLOAT] = {GL_DEPTH_COMPONENT32F, GL_DEPTH_COMPONENT, GL_FLOAT, 4},
    /* kiln's words hold depth in bits 0..23 and stencil in 24..31; GL's
     * UNSIGNED_INT_24_8 holds depth in 8..31 and stencil in 0..7: rotated
     * on the way in and out. */
    [KILN_FORMAT_D24_UNORM_S8_UINT] = {GL_DEPTH24_STENCIL8, GL_DEPTH_STENCIL, GL_UNSIGNED_INT_24_8, 4},
};

const kg_format *kg_format_of(kiln_format f)
{
    if ((unsigned)f >= KILN_FORMAT_COUNT || !formats[f].internal)
        return NULL;
    return &formats[f];
}

static uint32_t to_gl_ds(uint32_t w) { return (w << 8) | (w >> 24); }
static uint32_t from_gl_ds(uint32_t w) { return (w >> 8) | (w << 24); }

static void upload(kg_device *d, const kres_resource *res, kg_mirror *m)
{
    const kg_gl *gl = &d->gl;
    kres_storage *st = m->st;
    unsigned gen = atomic_load_explicit(&st->gen, memory_order_acquire);
    if (!m->is_texture) {
        gl->NamedBufferSubData(m->name, 0, (GLsizeiptr)st->size, st->data);
        m->gen = gen;
        return;
    }
    const kg_format *f = kg_format_of(res->format);
    uint8_t *tmp = NULL;
    size_t tmp_size = 0;
    for (uint32_t s = 0; s < res->array_size; s++) {
        for (uint32_t l = 0; l < res->mip_levels; l++) {
            const kres_subresource *sub = &res->subs[l + s * res->mip_levels];
            const uint8_t *src = st->data + sub->offset;
            if (res->format == KILN_FORMAT_D24_UNORM_S8_UINT) {
                if (tmp_size < sub->size) {
                    kb_free(d->env, tmp, tmp_size);
                    tmp = kb_alloc(d->env, sub->size);
                    tmp_size = tmp ? sub->size : 0;
                    if (!tmp)
                        return; /* stays stale: the draw reads old depth */
                }
                for (size_t i = 0; i < sub->size / 4; i++) {
                    uint32_t w;
                    memcpy(&w, src + 4 * i, 4);
                    w = to_gl_ds(w);
                    memcpy(tmp + 4 * i, &w, 4);
                }
                src = tmp;
            }
            gl->PixelStorei(GL_UNPACK_ROW_LENGTH, (GLint)(sub->row_pitch / f->size));
            gl->TextureSubImage3D(m->name, (GLint)l, 0, 0, (GLint)s, (GLsizei)sub->width, (GLsizei)sub->height, 1,
                                  f->format, f->type, src);
        }
    }
    gl->PixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    kb_free(d->env, tmp, tmp_size);
    m->gen = gen;
}

kg_mirror *kg_mirror_get(kg_device *d, const kres_resource *res, kres_storage *st)
{
    const kg_gl *gl = &d->gl;
    kg_mirror *m = st->mirror;
    if (!m) {
        bool tex = res->base.type != KRES_TYPE_BUFFER;
        const kg_format *f = tex ? kg_format_of(res->format) : NULL;
        if (tex && !f)
            return NULL;
        m = kb_calloc(d->env, sizeof *m);
        if (!m)
            return NULL;
        m->st = st;
        m->is_texture = tex;
        m->format = res->format;
        m->width = res->width;
        m->height = res->height;
        m->levels = res->mip_levels;
        m->layers = res->array_size;
        m->subs = res->subs;
        if (tex) {
            gl->CreateTextures(GL_TEXTURE_2D_ARRAY, 1, &m->name);
            gl->TextureStorage3D(m->name, (GLsizei)res->mip_levels, f->internal, (GLsizei)res->width,
                                 (GLsizei)res->height, (GLsizei)res->array_size);
        } else {
            gl->CreateBuffers(1, &m->name);
            gl->NamedBufferStorage(m->name, (GLsizeiptr)(st->size ? st->size : 1), NULL, GL_DYNAMIC_STORAGE_BIT);
        }
        if (gl->GetError() != GL_NO_ERROR) {
            if (tex)
                gl->DeleteTextures(1, &m->name);
            else
                gl->DeleteBuffers(1, &m->name);
            kb_free(d->env, m, sizeof *m);
            return NULL;
        }
        atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
        m->dev = d;
        upload(d, res, m);
        st->mirror = m;
        st->mirror_release = kg_mirror_release;
        return m;
    }
    if (!atomic_load_explicit(&st->backend_newer, memory_order_acquire) &&
        m->gen != atomic_load_explicit(&st->gen, memory_order_acquire))
        upload(d, res, m);
    return m;
}

GLuint kg_mirror_view(kg_device *d, kg_mirror *m, GLenum target, kiln_format format, uint32_t first_mip,
                      uint32_t num_mips, uint32_t first_slice, uint32_t num_slices)
{
    for (uint32_t i = 0; i < m->nviews; i++) {
        const kg_view *v = &m->views[i];
        if (v->target == target && v->format == format && v->first_mip == first_mip && v->num_mips == num_mips &&
            v->first_slice == first_slice && v->num_slices == num_slices)
            return v->tex;
    }
    const kg_format *f = kg_format_of(format);
    if (!f)
        return 0;
    if (m->nviews == m->views_cap) {
        uint32_t cap = m->views_cap ? m->views_cap * 2 : 4;
        kg_view *n = kb_alloc(d->env, sizeof(kg_view) * cap);
        if (!n)
            return 0;
        if (m->nviews)
            memcpy(n, m->views, sizeof(kg_view) * m->nviews);
        kb_free(d->env, m->views, sizeof(kg_view) * m->views_cap);
        m->views = n;
        m->views_cap = cap;
    }
    const kg_gl *gl = &d->gl;
    GLuint t = 0;
    gl->GenTextures(1, &t);
    gl->TextureView(t, target, m->name, f->internal, first_mip, num_mips, first_slice, num_slices);
    if (gl->GetError() != GL_NO_ERROR) {
        gl->DeleteTextures(1, &t);
        return 0;
    }
    m->views[m->nviews++] = (kg_view){target, format, first_mip, num_mips, first_slice, num_slices, t};
    return t;
}

void kg_mirror_written(kg_mirror *m)
{
    m->gen = atomic_load_explicit(&m->st->gen, memory_order_acquire);
    atomic_store_explicit(&m->st->backend_newer, true, memory_order_release);
}

void kg_mirror_read_back(kg_device *d, kres_storage *st)
{
    kg_mirror *m = st->mirror;
    if (!m || !atomic_load_explicit(&st->backend_newer, memory_order_acquire))
        return;
    const kg_gl *gl = &d->gl;
    /* Every queued GL command done first: Mesa 22.3's llvmpipe sometimes
     * returned a render target's bytes from before the last scene that
     * drew into it through the framebuffer (test_raster_async_osmesa). */
    gl->Finish();
    if (!m->is_texture) {
        gl->GetNamedBufferSubData(m->name, 0, (GLsizeiptr)st->size, st->data);
    } else {
        const kg_format *f = kg_format_of(m->format);
        for (uint32_t s = 0; s < m->layers; s++) {
            for (uint32_t l = 0; l < m->levels; l++) {
                const kres_subresource *sub = &m->subs[l + s * m->levels];
                uint8_t *dst = st->data + sub->offset;
                gl->PixelStorei(GL_PACK_ROW_LENGTH, (GLint)(sub->row_pitch / f->size));
                gl->GetTextureSubImage(m->name, (GLint)l, 0, 0, (GLint)s, (GLsizei)sub->width,
                                       (GLsizei)sub->height, 1, f->format, f->type, (GLsizei)sub->size, dst);
                if (m->format == KILN_FORMAT_D24_UNORM_S8_UINT) {
                    for (size_t i = 0; i < sub->size / 4; i++) {
                        uint32_t x;
                        memcpy(&x, dst + 4 * i, 4);
                        x = from_gl_ds(x);
                        memcpy(dst + 4 * i, &x, 4);
                    }
                }
            }
        }
        gl->PixelStorei(GL_PACK_ROW_LENGTH, 0);
    }
    m->gen = atomic_load_explicit(&st->gen, memory_order_acquire);
    atomic_store_explicit(&st->backend_newer, false, memory_order_release);
}

void kg_mirror_free(kg_device *d, kg_mirror *m)
{
    const kg_gl *gl = &d->gl;
    for (uint32_t i = 0; i < m->nviews; i++)
        gl->DeleteTextures(1, &m->views[i].tex);
    if (m->is_texture)
        gl->DeleteTextures(1, &m->name);
    else
        gl->DeleteBuffers(1, &m->name);
    kb_free(d->env, m->views, sizeof(kg_view) * m->views_cap);
    kb_free(d->env, m, sizeof *m);
    kg_device_unref(d);
}
