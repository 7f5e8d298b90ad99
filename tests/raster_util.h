/*
 * Helpers shared by the test_raster_*.c programs (drawing through the public
 * API). Header-only: each test includes it once.
 *
 * - Shaders: ru_vs_pass (position = input 0, varying k = input k + 1),
 *   ru_ps_vary (target r = varying r % nvary), ru_ps_cb (target r = PS cb0
 *   float4 r), ru_ps_none (no outputs). Their counts travel in the desc's
 *   user pointer, so one function serves every count.
 * - ru_pipe: a VS + layout (float4 elements, slot 0, interleaved) + PS.
 * - Targets: ru_rt / ru_ds create a texture with its view(s); ru_read reads
 *   a subresource back through a STAGING copy (rows tightly packed).
 * - ru_draw: uploads vertices into a fresh vertex buffer, binds it in slot
 *   0 and draws; the buffer is destroyed at once (its storage lives until
 *   the draw has executed).
 * - ru_clip: pixel coordinates to clip space for a viewport covering a
 *   W x H target (w = 1).
 * - ru_target_2d: one color target, its whole viewport, culling off,
 *   triangle lists.
 */
#ifndef KILN_TEST_RASTER_UTIL_H
#define KILN_TEST_RASTER_UTIL_H

#include "harness.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define RU_USER(a, b) ((void *)(uintptr_t)((uint32_t)(a) | ((uint32_t)(b) << 8)))
#define RU_LO(u) ((uint32_t)((uintptr_t)(u)&0xffu))
#define RU_HI(u) ((uint32_t)(((uintptr_t)(u) >> 8) & 0xffu))

/* user: RU_USER(num_inputs, num_varyings) */
static inline void ru_vs_pass(const kiln_vs_args *a)
{
    uint32_t nin = RU_LO(a->user), nv = RU_HI(a->user);
    for (uint32_t v = 0; v < a->count; v++) {
        const float *in = a->in + (size_t)v * a->in_stride;
        float *out = a->out + (size_t)v * a->out_stride;
        for (int c = 0; c < 4; c++)
            out[c] = in[c];
        for (uint32_t k = 0; k < nv; k++)
            for (int c = 0; c < 4; c++)
                out[4 + 4 * k + c] = k + 1 < nin ? in[4 * (k + 1) + c] : 0.0f;
    }
}

/* user: RU_USER(num_outputs, num_varyings >= 1) */
static inline void ru_ps_vary(kiln_ps_args *a)
{
    uint32_t nout = RU_LO(a->user), nv = RU_HI(a->user);
    for (uint32_t r = 0; r < nout; r++)
        for (int c = 0; c < 4; c++)
            for (int i = 0; i < KILN_PS_BLOCK; i++)
                KILN_PS_COLOR(a, r, c)[i] = KILN_PS_VARYING(a, r % nv, c)[i];
}

/* user: RU_USER(num_outputs, 0); target r gets PS cb0 floats [4r, 4r + 4). */
static inline void ru_ps_cb(kiln_ps_args *a)
{
    uint32_t nout = RU_LO(a->user);
    const float *cb = a->cb && a->cb[0] ? (const float *)a->cb[0] : NULL;
    for (uint32_t r = 0; r < nout; r++)
        for (int c = 0; c < 4; c++) {
            float v = cb && a->cb_size[0] >= 16 * (r + 1) ? cb[4 * r + c] : 0.0f;
            for (int i = 0; i < KILN_PS_BLOCK; i++)
                KILN_PS_COLOR(a, r, c)[i] = v;
        }
}

static inline void ru_ps_none(kiln_ps_args *a) { (void)a; }

typedef struct ru_pipe {
    kiln_vertex_shader vs;
    kiln_input_layout il;
    kiln_pixel_shader ps;
    uint32_t nin, stride; /* float4 inputs; bytes per vertex */
} ru_pipe;

static inline kiln_vertex_shader ru_make_vs(kiln_device *dev, uint32_t nin, uint32_t nvary)
{
    kiln_vertex_shader_desc d = {ru_vs_pass, nin, nvary, NULL, RU_USER(nin, nvary)};
    kiln_vertex_shader vs = {0};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &d, &vs), KILN_OK);
    return vs;
}

static inline kiln_input_layout ru_make_layout(kiln_device *dev, kiln_vertex_shader vs,
                                               uint32_t nin)
{
    kiln_input_layout_desc d;
    memset(&d, 0, sizeof d);
    d.num_elements = nin;
    for (uint32_t e = 0; e < nin; e++)
        d.elements[e] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 16 * e, 0, 0};
    kiln_input_layout il = {0};
    CHECK_RESULT(kiln_create_input_layout(dev, &d, vs, &il), KILN_OK);
    return il;
}

/* nvary varyings (float4 inputs 1..nvary), PS: kind 0 = vary (nvary >= 1),
 * 1 = cb, 2 = none (nout must be 0). */
enum { RU_PS_VARY = 0, RU_PS_CB = 1, RU_PS_NONE = 2 };
static inline ru_pipe ru_make_pipe(kiln_device *dev, uint32_t nvary, int ps_kind, uint32_t nout,
                                   uint32_t ps_flags)
{
    ru_pipe p;
    memset(&p, 0, sizeof p);
    p.nin = 1 + nvary;
    p.stride = 16 * p.nin;
    p.vs = ru_make_vs(dev, p.nin, nvary);
    p.il = ru_make_layout(dev, p.vs, p.nin);
    kiln_pixel_shader_desc pd = {0};
    pd.num_outputs = nout;
    pd.flags = ps_flags;
    if (ps_kind == RU_PS_VARY) {
        pd.fn = ru_ps_vary;
        pd.num_varyings = nvary;
        pd.user = RU_USER(nout, nvary);
    } else if (ps_kind == RU_PS_CB) {
        pd.fn = ru_ps_cb;
        pd.user = RU_USER(nout, 0);
    } else {
        pd.fn = ru_ps_none;
    }
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &p.ps), KILN_OK);
    return p;
}

static inline void ru_bind_pipe(kiln_context *ctx, const ru_pipe *p)
{
    CHECK_RESULT(kiln_vs_set_shader(ctx, p->vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, p->ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, p->il), KILN_OK);
}

static inline void ru_free_pipe(kiln_device *dev, ru_pipe *p)
{
    kiln_destroy_input_layout(dev, p->il);
    kiln_destroy_vertex_shader(dev, p->vs);
    kiln_destroy_pixel_shader(dev, p->ps);
}

/* ---- buffers ---- */

static inline kiln_buffer ru_buffer(kiln_device *dev, uint32_t bind, const void *data,
                                    uint32_t size)
{
    kiln_buffer_desc d = {size, KILN_USAGE_DEFAULT, bind, 0};
    kiln_subresource_data init = {data, 0};
    kiln_buffer b = {0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, data ? &init : NULL, &b), KILN_OK);
    return b;
}

/* A constant buffer holding `floats` (size rounded up to 16 bytes). */
static inline kiln_buffer ru_cbuffer(kiln_device *dev, const float *f, uint32_t nfloats)
{
    uint32_t size = (uint32_t)((nfloats * 4 + 15) & ~15u);
    float tmp[16384];
    memset(tmp, 0, size);
    memcpy(tmp, f, nfloats * 4);
    return ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, tmp, size);
}

/* Draws `n` vertices of `stride` bytes with `topology` from a fresh buffer
 * in slot 0. */
static inline void ru_draw(kiln_device *dev, kiln_context *ctx, const void *verts, uint32_t n,
                           uint32_t stride, kiln_topology topology)
{
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, verts, n * stride);
    uint32_t off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, topology), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, n, 0), KILN_OK);
    kiln_destroy_buffer(dev, vb);
}

/* ---- textures ---- */

typedef struct ru_tex {
    kiln_texture tex;
    kiln_rtv rtv;
    kiln_dsv dsv;
    kiln_srv srv;
    uint32_t w, h;
    kiln_format fmt;
} ru_tex;

static inline ru_tex ru_rt(kiln_device *dev, uint32_t w, uint32_t h, kiln_format fmt)
{
    ru_tex t;
    memset(&t, 0, sizeof t);
    t.w = w;
    t.h = h;
    t.fmt = fmt;
    kiln_texture2d_desc d = {.width = w,
                             .height = h,
                             .mip_levels = 1,
                             .array_size = 1,
                             .format = fmt,
                             .bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &t.tex), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, t.tex, NULL, &t.rtv), KILN_OK);
    return t;
}

/* A depth-stencil texture and its view; `data`, if not NULL, its first
 * contents (4-byte texels, rows w * 4 bytes apart). */
static inline ru_tex ru_ds_data(kiln_device *dev, uint32_t w, uint32_t h, kiln_format fmt,
                                const void *data)
{
    ru_tex t;
    memset(&t, 0, sizeof t);
    t.w = w;
    t.h = h;
    t.fmt = fmt;
    kiln_texture2d_desc d = {.width = w, .height = h, .mip_levels = 1, .array_size = 1, .format = fmt,
                             .bind_flags = KILN_BIND_DEPTH_STENCIL};
    kiln_subresource_data init = {data, w * 4};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, data ? &init : NULL, &t.tex), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, t.tex, NULL, &t.dsv), KILN_OK);
    return t;
}

static inline ru_tex ru_ds(kiln_device *dev, uint32_t w, uint32_t h, kiln_format fmt)
{
    return ru_ds_data(dev, w, h, fmt, NULL);
}

static inline void ru_free_tex(kiln_device *dev, ru_tex *t)
{
    if (t->rtv.id)
        kiln_destroy_rtv(dev, t->rtv);
    if (t->dsv.id)
        kiln_destroy_dsv(dev, t->dsv);
    if (t->srv.id)
        kiln_destroy_srv(dev, t->srv);
    kiln_destroy_texture(dev, t->tex);
    memset(t, 0, sizeof *t);
}

/* Reads subresource `sub` of `tex` into `out`, rows tightly packed.
 * Returns 1 on success. */
static inline int ru_read(kiln_device *dev, kiln_texture tex, uint32_t sub, void *out)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture2d_desc d;
    if (kiln_texture_get_desc(dev, tex, &d) != KILN_OK)
        return 0;
    kiln_texture2d_desc sd = d;
    sd.usage = KILN_USAGE_STAGING;
    sd.bind_flags = 0;
    sd.cpu_access = KILN_CPU_ACCESS_READ;
    kiln_texture st = {0};
    if (kiln_create_texture2d(dev, &sd, NULL, &st) != KILN_OK)
        return 0;
    int ok = 0;
    kiln_mapped_subresource m;
    if (kiln_copy_resource(ctx, kiln_texture_resource(st), kiln_texture_resource(tex)) == KILN_OK &&
        kiln_map(ctx, kiln_texture_resource(st), sub, KILN_MAP_READ, 0, &m) == KILN_OK) {
        uint32_t mip = sub % d.mip_levels;
        uint32_t w = d.width >> mip ? d.width >> mip : 1, h = d.height >> mip ? d.height >> mip : 1;
        size_t row = (size_t)w * kiln_format_size(d.format);
        for (uint32_t y = 0; y < h; y++)
            memcpy((unsigned char *)out + y * row,
                   (const unsigned char *)m.data + (size_t)y * m.row_pitch, row);
        ok = kiln_unmap(ctx, kiln_texture_resource(st), sub) == KILN_OK;
    }
    kiln_destroy_texture(dev, st);
    CHECK(ok);
    return ok;
}

/* Target reading helpers: whole first mip into a malloc'ed array. */
static inline float *ru_read_f32(kiln_device *dev, const ru_tex *t)
{
    float *p = calloc((size_t)t->w * t->h * (kiln_format_size(t->fmt) / 4), sizeof(float));
    ru_read(dev, t->tex, 0, p);
    return p;
}

static inline uint8_t *ru_read_bytes(kiln_device *dev, const ru_tex *t)
{
    uint8_t *p = calloc((size_t)t->w * t->h, kiln_format_size(t->fmt));
    ru_read(dev, t->tex, 0, p);
    return p;
}

/* ---- coordinates ---- */

/* Clip-space x, y (w = 1) of pixel position (px, py) for a viewport
 * (0, 0, W, H). */
static inline void ru_clip(double W, double H, double px, double py, float *out)
{
    out[0] = (float)(2.0 * px / W - 1.0);
    out[1] = (float)(1.0 - 2.0 * py / H);
}

/* One vertex: position (pixels -> clip, z, w = 1) + optional float4s. */
static inline float *ru_vtx(float *v, double W, double H, double px, double py, float z)
{
    ru_clip(W, H, px, py, v);
    v[2] = z;
    v[3] = 1.0f;
    return v + 4;
}

static inline void ru_set_viewport(kiln_context *ctx, float x, float y, float w, float h,
                                   float zmin, float zmax)
{
    kiln_viewport vp = {x, y, w, h, zmin, zmax};
    CHECK_RESULT(kiln_rs_set_viewport(ctx, &vp), KILN_OK);
}

static inline kiln_rasterizer_state ru_rs(kiln_device *dev, kiln_rasterizer_desc d)
{
    kiln_rasterizer_state s = {0};
    CHECK_RESULT(kiln_create_rasterizer_state(dev, &d, &s), KILN_OK);
    return s;
}

/* Draws to `rt` alone (no depth) over its whole size, culling off,
 * triangle lists; returns the rasterizer state to destroy. */
static inline kiln_rasterizer_state ru_target_2d(kiln_device *dev, kiln_context *ctx,
                                                 const ru_tex *rt)
{
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt->rtv, (kiln_dsv){0}), KILN_OK);
    kiln_viewport vp = {0, 0, (float)rt->w, (float)rt->h, 0, 1};
    CHECK_RESULT(kiln_rs_set_viewport(ctx, &vp), KILN_OK);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    return rs;
}

static inline kiln_blend_state ru_bs(kiln_device *dev, const kiln_blend_desc *d)
{
    kiln_blend_state s = {0};
    CHECK_RESULT(kiln_create_blend_state(dev, d, &s), KILN_OK);
    return s;
}

static inline kiln_depth_stencil_state ru_dss(kiln_device *dev, kiln_depth_stencil_desc d)
{
    kiln_depth_stencil_state s = {0};
    CHECK_RESULT(kiln_create_depth_stencil_state(dev, &d, &s), KILN_OK);
    return s;
}

/* Target blend b's factors, ops and write mask drawn from r (enable is the
 * caller's): kind 0 ADD of (ONE, ONE), 1 ADD of (SRC_ALPHA,
 * INV_SRC_ALPHA), else random factors and ops (color factors for alpha
 * replaced, as D3D10 refuses them there); the write mask all channels 7
 * times in 10, some 2 in 10, none 1 in 10. */
static inline void ru_blend_random(th_rng *r, int kind, kiln_blend_target *b)
{
    if (kind == 0) {
        b->src = b->dst = b->src_alpha = b->dst_alpha = KILN_BLEND_ONE;
    } else if (kind == 1) {
        b->src = b->src_alpha = KILN_BLEND_SRC_ALPHA;
        b->dst = b->dst_alpha = KILN_BLEND_INV_SRC_ALPHA;
    } else {
        b->src = (kiln_blend_factor)(1 + th_below(r, 13));
        b->dst = (kiln_blend_factor)(1 + th_below(r, 13));
        b->op = (kiln_blend_op)th_below(r, 6);
        b->src_alpha = (kiln_blend_factor)(1 + th_below(r, 13));
        b->dst_alpha = (kiln_blend_factor)(1 + th_below(r, 13));
        b->op_alpha = (kiln_blend_op)th_below(r, 6);
    }
    if (b->src_alpha == KILN_BLEND_SRC_COLOR || b->src_alpha == KILN_BLEND_INV_SRC_COLOR ||
        b->src_alpha == KILN_BLEND_DEST_COLOR || b->src_alpha == KILN_BLEND_INV_DEST_COLOR)
        b->src_alpha = KILN_BLEND_SRC_ALPHA;
    if (b->dst_alpha == KILN_BLEND_SRC_COLOR || b->dst_alpha == KILN_BLEND_INV_SRC_COLOR ||
        b->dst_alpha == KILN_BLEND_DEST_COLOR || b->dst_alpha == KILN_BLEND_INV_DEST_COLOR)
        b->dst_alpha = KILN_BLEND_INV_SRC_ALPHA;
    uint32_t m = th_below(r, 10);
    b->write_mask = m < 7   ? KILN_COLOR_WRITE_DEFAULT
                    : m < 9 ? 1u + th_below(r, 15)
                            : KILN_COLOR_WRITE_NONE;
}

/* Additive blending (ONE, ONE) on every target. */
static inline kiln_blend_state ru_bs_add(kiln_device *dev)
{
    kiln_blend_desc d;
    memset(&d, 0, sizeof d);
    for (int r = 0; r < KILN_MAX_RENDER_TARGETS; r++)
        d.rt[r] = (kiln_blend_target){1,
                                      KILN_BLEND_ONE,
                                      KILN_BLEND_ONE,
                                      KILN_BLEND_OP_ADD,
                                      KILN_BLEND_ONE,
                                      KILN_BLEND_ONE,
                                      KILN_BLEND_OP_ADD,
                                      0};
    return ru_bs(dev, &d);
}

static inline uint32_t ru_fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The float with bit pattern b. */
static inline float ru_bits_f(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* n D32_FLOAT depths for the depth-test tests: uniform in [0, 1], 0.5
 * often (where flat triangles at z = 0.5 meet equal operands), and now
 * and then a special one (NaN, -0, +0, +inf, -inf, a subnormal, 1). */
static inline void ru_random_depths(th_rng *r, float *d, int n)
{
    static const uint32_t special[] = {0x7fc00000u, 0x80000000u, 0x00000000u, 0x7f800000u,
                                       0xff800000u, 0x00000001u, 0x3f800000u};
    for (int i = 0; i < n; i++) {
        uint64_t k = th_below(r, 8);
        d[i] = k == 0   ? ru_bits_f(special[th_below(r, sizeof special / sizeof special[0])])
               : k == 1 ? 0.5f
                        : th_frand(r, 0.0f, 1.0f);
    }
}

#endif
