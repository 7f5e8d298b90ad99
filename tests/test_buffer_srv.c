/*
 * test_buffer_srv: typed buffer views (D3D10's Buffer<T>): creation and
 * its rules, Load and GetDimensions from the pixel and vertex stages,
 * sampling reading zeros, lock tracking, the osmesa refusal, capture.
 *
 * - Pixel stage, exact: eight views of eight formats in pixel slots 0..7
 *   (each with its own first_element, 10 elements, inside buffers that hold
 *   more on both sides); pixel (px, py) loads element px - 2 of slot py.
 *   Expected values come from this file's own decoders; elements -2, -1
 *   and 10..13 read zeros, as do rows whose slot is empty. A second pass
 *   checks GetDimensions (10 x 1, 1 level) and that Sample, SampleLevel
 *   and SampleCmp of a buffer view read zeros.
 * - Vertex stage, exact: points load element i - 1 of a view in vertex
 *   slot 3 (R16G16B16A16_FLOAT, first_element 2), and GetDimensions and
 *   SampleLevel there; the geometry stage loads the same elements through
 *   its own slot 6.
 * - Async equals serial: 24 draws, each after an update_subresource of a
 *   DEFAULT buffer and a WRITE_DISCARD Map of a DYNAMIC one, both read by
 *   the vertex stage; SERIAL (checked against the formula) and ASYNC with
 *   1 and 3 workers, bit for bit alike.
 * - Order without a gate: a draw held back by a vertex buffer this thread
 *   keeps mapped reads a buffer; an update of it queued meanwhile lands
 *   after the draw (which shows the old contents), and a Map DO_NOT_WAIT
 *   of a DYNAMIC buffer the draw reads reports WAS_STILL_DRAWING.
 * - Validation, each with its log id; osmesa refuses the view.
 * - Capture of the pixel-stage scene (CREATE_BUFFER_SRV records), replayed
 *   ASYNC and SERIAL to the same floats.
 */
#include "capture_util.h"
#include "raster_util.h"

#include <math.h>
#include <stdio.h>

enum { W = 16, H = 24, NEL = 10, NPS = 8, VS_SLOT = 3, NV = 14 };

/* ---- the test's own decoders (D3D10's conversion rules) ---- */

static float half_f(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(1024 + m), e - 25);
    return sign ? -v : v;
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static float rdf(const uint8_t *p)
{
    uint32_t u = rd32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void decode(kiln_format f, const uint8_t *p, float o[4])
{
    o[0] = o[1] = o[2] = 0.0f;
    o[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            o[c] = (float)p[c] / 255.0f;
        break;
    case KILN_FORMAT_R8G8B8A8_SNORM:
        for (int c = 0; c < 4; c++) {
            float v = (float)(int8_t)p[c] / 127.0f;
            o[c] = v < -1.0f ? -1.0f : v;
        }
        break;
    case KILN_FORMAT_R32_FLOAT: o[0] = rdf(p); break;
    case KILN_FORMAT_R32G32B32_FLOAT:
        for (int c = 0; c < 3; c++)
            o[c] = rdf(p + 4 * c);
        break;
    case KILN_FORMAT_R32G32B32A32_UINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)rd32(p + 4 * c);
        break;
    case KILN_FORMAT_R16G16B16A16_FLOAT:
        for (int c = 0; c < 4; c++)
            o[c] = half_f(rd16(p + 2 * c));
        break;
    case KILN_FORMAT_R10G10B10A2_UNORM: {
        uint32_t u = rd32(p);
        for (int c = 0; c < 3; c++)
            o[c] = (float)((u >> (10 * c)) & 1023u) / 1023.0f;
        o[3] = (float)(u >> 30) / 3.0f;
        break;
    }
    case KILN_FORMAT_R16_UNORM: o[0] = (float)rd16(p) / 65535.0f; break;
    default: abort();
    }
}

/* ---- the pixel-stage views ---- */

typedef struct view_spec {
    kiln_format format;
    uint32_t size, first;
} view_spec;

static const view_spec PS_VIEWS[NPS] = {
    {KILN_FORMAT_R8G8B8A8_UNORM, 4, 3},     {KILN_FORMAT_R32_FLOAT, 4, 0},
    {KILN_FORMAT_R32G32B32A32_UINT, 16, 1}, {KILN_FORMAT_R16G16B16A16_FLOAT, 8, 2},
    {KILN_FORMAT_R8G8B8A8_SNORM, 4, 1},     {KILN_FORMAT_R10G10B10A2_UNORM, 4, 0},
    {KILN_FORMAT_R32G32B32_FLOAT, 12, 1},   {KILN_FORMAT_R16_UNORM, 2, 5},
};

/* Bytes of a buffer of `n` elements of `f`, seeded: floats small
 * multiples of 1/8, halves finite (denormals included), others random. */
static void fill(kiln_format f, uint32_t n, uint32_t seed, uint8_t *out)
{
    th_rng rng = {0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0x100000001b3ull) ^ f};
    uint32_t size = kiln_format_size(f);
    for (uint32_t e = 0; e < n; e++) {
        uint8_t *p = out + (size_t)e * size;
        if (f == KILN_FORMAT_R32_FLOAT || f == KILN_FORMAT_R32G32B32_FLOAT) {
            for (uint32_t c = 0; c < size / 4; c++) {
                float v = (float)((int)th_below(&rng, 4000) - 2000) / 8.0f;
                memcpy(p + 4 * c, &v, 4);
            }
        } else if (f == KILN_FORMAT_R16G16B16A16_FLOAT) {
            for (int c = 0; c < 4; c++) {
                uint16_t h = (uint16_t)th_next(&rng);
                if (((h >> 10) & 31) == 31)
                    h &= 0x83ff; /* a denormal instead of INF / NaN */
                memcpy(p + 2 * c, &h, 2);
            }
        } else {
            for (uint32_t b = 0; b < size; b++)
                p[b] = (uint8_t)th_next(&rng);
        }
    }
}

static void ps_buf(kiln_ps_args *a)
{
    int mode = (int)(uintptr_t)a->user;
    int32_t x[KILN_PS_BLOCK], zero[KILN_PS_BLOCK] = {0};
    float u[KILN_PS_BLOCK], ref[KILN_PS_BLOCK], rgba[4 * KILN_PS_BLOCK], out[4 * KILN_PS_BLOCK];
    memset(out, 0, sizeof out);
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        x[i] = a->x + i % 4 - 2;
        u[i] = 0.5f;
        ref[i] = 0.5f;
    }
    for (int s = a->y; s < a->y + 4; s++) {
        int row = s - a->y;
        if (mode == 0) {
            kiln_ps_load(a, (uint32_t)s, x, zero, zero, rgba);
            for (int c = 0; c < 4; c++)
                memcpy(out + c * KILN_PS_BLOCK + 4 * row, rgba + c * KILN_PS_BLOCK + 4 * row, 4 * sizeof(float));
        } else { /* GetDimensions; Sample, SampleLevel, SampleCmp read zeros */
            uint32_t w, h, l;
            kiln_ps_get_dimensions(a, (uint32_t)s, 0, &w, &h, &l);
            float sum = 0.0f, smp[4 * KILN_PS_BLOCK], cmp[KILN_PS_BLOCK];
            kiln_ps_sample(a, (uint32_t)s, 0, u, u, smp);
            for (int k = 0; k < 4 * KILN_PS_BLOCK; k++)
                sum += fabsf(smp[k]);
            kiln_ps_sample_level(a, (uint32_t)s, 0, u, u, ref, smp);
            for (int k = 0; k < 4 * KILN_PS_BLOCK; k++)
                sum += fabsf(smp[k]);
            kiln_ps_sample_cmp(a, (uint32_t)s, 1, u, u, ref, cmp);
            for (int k = 0; k < KILN_PS_BLOCK; k++)
                sum += fabsf(cmp[k]);
            for (int i = 4 * row; i < 4 * row + 4; i++) {
                out[i] = (float)w;
                out[KILN_PS_BLOCK + i] = (float)h;
                out[2 * KILN_PS_BLOCK + i] = (float)l;
                out[3 * KILN_PS_BLOCK + i] = sum;
            }
        }
    }
    memcpy(a->color, out, sizeof out);
}

/* Input (i, kind, row, 0). Kind 0: element i - 1 of vertex slot VS_SLOT;
 * 1: its GetDimensions and the sum of SampleLevel's magnitudes; 2: the
 * red and green of element i of vertex slot 0 and the blue and alpha of
 * element i of slot 1. The point goes to pixel (i, row). */
static void vs_buf(const kiln_vs_args *a)
{
    uint32_t n = a->count;
    int32_t x[KILN_VS_BATCH] = {0}, x1[KILN_VS_BATCH] = {0}, zero[KILN_VS_BATCH] = {0};
    float ld[4 * KILN_VS_BATCH], l0[4 * KILN_VS_BATCH], l1[4 * KILN_VS_BATCH], sl[4 * KILN_VS_BATCH];
    float uv[KILN_VS_BATCH], lod[KILN_VS_BATCH] = {0};
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (int32_t)a->in[(size_t)i * a->in_stride];
        x1[i] = x[i] - 1;
        uv[i] = 0.5f;
    }
    kiln_vs_load(a, VS_SLOT, n, x1, zero, zero, ld);
    kiln_vs_load(a, 0, n, x, zero, zero, l0);
    kiln_vs_load(a, 1, n, x, zero, zero, l1);
    kiln_vs_sample_level(a, VS_SLOT, 0, n, uv, uv, lod, sl);
    uint32_t w, h, l;
    kiln_vs_get_dimensions(a, VS_SLOT, 3, &w, &h, &l);
    for (uint32_t i = 0; i < n; i++) {
        const float *in = a->in + (size_t)i * a->in_stride;
        float *o = a->out + (size_t)i * a->out_stride;
        o[0] = 2.0f * (in[0] + 0.5f) / W - 1.0f;
        o[1] = 1.0f - 2.0f * (in[2] + 0.5f) / H;
        o[2] = 0.5f;
        o[3] = 1.0f;
        int kind = (int)in[1];
        for (int c = 0; c < 4; c++)
            o[4 + c] = kind == 0 ? ld[(size_t)c * n + i]
                       : kind == 2 ? (c < 2 ? l0[(size_t)c * n + i] : l1[(size_t)c * n + i])
                                   : 0.0f;
        if (kind == 3) /* for the geometry stage: the index */
            o[4] = (float)x[i], o[5] = o[6] = o[7] = 0.0f;
        if (kind == 1) {
            float sum = 0.0f;
            for (int c = 0; c < 4; c++)
                sum += fabsf(sl[(size_t)c * n + i]);
            o[4] = (float)w, o[5] = (float)h, o[6] = (float)l, o[7] = sum;
        }
    }
}

/* Geometry stage: each point (vs_buf kind 3: varying x = i) is emitted
 * with element i - 1 of geometry slot GS_SLOT, or NaN when GetDimensions
 * there disagrees with the view. */
enum { GS_SLOT = 6 };
static void gs_buf(kiln_gs_args *a)
{
    int32_t x = (int32_t)a->in[4] - 1, zero = 0;
    float ld[4], out[8];
    kiln_gs_load(a, GS_SLOT, 1, &x, &zero, &zero, ld);
    uint32_t w, h, l;
    kiln_gs_get_dimensions(a, GS_SLOT, 0, &w, &h, &l);
    memcpy(out, a->in, 4 * sizeof(float));
    for (int c = 0; c < 4; c++)
        out[4 + c] = w == NEL && h == 1 && l == 1 ? ld[c] : NAN;
    kiln_gs_emit(a, out);
}
static const kiln_geometry_shader_desc GS_BUF = {
    .fn = gs_buf, .input = KILN_GS_INPUT_POINT, .output = KILN_GS_OUTPUT_POINT_LIST, .max_vertices = 1,
    .num_varyings = 1};

static const kiln_vertex_shader_desc POS_VS = {ru_vs_pass, 1, 0, NULL, RU_USER(1, 0)};
static const kiln_pixel_shader_desc LOAD_PS = {ps_buf, 0, 1, 0, NULL, (void *)0, 0};
static const kiln_pixel_shader_desc DIMS_PS = {ps_buf, 0, 1, 0, NULL, (void *)1, 0};
static const kiln_vertex_shader_desc BUF_VS = {vs_buf, 1, 1, NULL, NULL};
static const kiln_pixel_shader_desc PASS_PS = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};

static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "bsrv.pos", &POS_VS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "bsrv.load", &LOAD_PS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "bsrv.dims", &DIMS_PS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "bsrv.vs", &BUF_VS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "bsrv.pass", &PASS_PS), KILN_OK);
}

/* A buffer with the shader-resource bind holding `first + NEL + 2`
 * elements of seed `seed`, and its view of [first, +NEL). */
static kiln_buffer make_view(kiln_device *dev, const view_spec *v, uint32_t seed, uint8_t *bytes, kiln_srv *out)
{
    uint32_t n = v->first + NEL + 2;
    fill(v->format, n, seed, bytes);
    kiln_buffer b = ru_buffer(dev, KILN_BIND_SHADER_RESOURCE, bytes, n * v->size);
    CHECK_RESULT(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){v->format, v->first, NEL}, out), KILN_OK);
    return b;
}

/* Six vertices covering the viewport. */
static void full_quad(kiln_device *dev, kiln_context *ctx)
{
    static const float q[6][4] = {{-1, -1, 0.5f, 1}, {1, -1, 0.5f, 1}, {-1, 1, 0.5f, 1},
                                  {-1, 1, 0.5f, 1},  {1, -1, 0.5f, 1}, {1, 1, 0.5f, 1}};
    ru_draw(dev, ctx, q, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

static uint8_t ps_bytes[NPS][64 * 16];

/* The pixel-stage scene: Loads (rows 0..H-1), then GetDimensions and
 * sampling into a second target. Returns both images, H rows each. */
static float *ps_scene(kiln_device *dev, float **dims)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    register_shaders(dev, NULL);
    kiln_vertex_shader vs;
    kiln_pixel_shader load_ps, dims_ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &POS_VS, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &LOAD_PS, &load_ps), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &DIMS_PS, &dims_ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 1);
    kiln_buffer bufs[NPS];
    kiln_srv views[NPS];
    for (int s = 0; s < NPS; s++)
        bufs[s] = make_view(dev, &PS_VIEWS[s], (uint32_t)s, ps_bytes[s], &views[s]);
    kiln_sampler smp[2];
    kiln_sampler_desc sd = {0};
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp[0]), KILN_OK);
    sd.comparison_func = KILN_COMPARE_ALWAYS;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp[1]), KILN_OK);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    ru_tex rt2 = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    const float clear[4] = {-7, -7, -7, -7};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt2.rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, NPS, views), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 2, smp), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, load_ps), KILN_OK);
    full_quad(dev, ctx);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt2.rtv, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, dims_ps), KILN_OK);
    full_quad(dev, ctx);
    float *img = ru_read_f32(dev, &rt);
    *dims = ru_read_f32(dev, &rt2);
    kiln_srv none[NPS] = {{0}};
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, NPS, none), KILN_OK);
    for (int s = 0; s < NPS; s++) {
        kiln_destroy_srv(dev, views[s]);
        kiln_destroy_buffer(dev, bufs[s]);
    }
    kiln_destroy_sampler(dev, smp[0]);
    kiln_destroy_sampler(dev, smp[1]);
    ru_free_tex(dev, &rt);
    ru_free_tex(dev, &rt2);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, load_ps);
    kiln_destroy_pixel_shader(dev, dims_ps);
    return img;
}

static int check_ps(const float *img, const float *dims, const char *what)
{
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float want[4] = {0, 0, 0, 0}, wd[4] = {0, 0, 0, 0};
            int e = x - 2;
            if (y < NPS) {
                const view_spec *v = &PS_VIEWS[y];
                if (e >= 0 && e < NEL)
                    decode(v->format, ps_bytes[y] + (size_t)(v->first + (uint32_t)e) * v->size, want);
                wd[0] = NEL, wd[1] = 1, wd[2] = 1;
            }
            const float *got = img + 4 * (y * W + x), *gd = dims + 4 * (y * W + x);
            for (int c = 0; c < 4; c++) {
                if (got[c] != want[c] && bad++ < 6)
                    fprintf(stderr, "    %s: pixel (%d, %d) channel %d: got %.9g, want %.9g\n", what, x, y, c,
                            got[c], want[c]);
                if (gd[c] != wd[c] && bad++ < 6)
                    fprintf(stderr, "    %s dims: pixel (%d, %d) channel %d: got %.9g, want %.9g\n", what, x,
                            y, c, gd[c], wd[c]);
            }
        }
    th_check(bad == 0, what, __FILE__, __LINE__);
    return bad;
}

static void test_pixel_stage_and_capture(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 3);
    CHECK_RESULT(kiln_capture_begin(dev, "buffer_srv.kcap"), KILN_OK);
    float *dims, *img = ps_scene(dev, &dims);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);
    check_ps(img, dims, "pixel-stage Load of eight formats");

    size_t len;
    uint8_t *bytes = cu_read("buffer_srv.kcap", &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_BUFFER_SRV), NPS);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 2, register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        int found = 0;
        for (uint32_t k = 0; k < out.n; k++) {
            const cu_image *t = &out.v[k];
            if (t->kind != KCAP_IMAGE_TARGET || t->width != W || t->height != H || t->bpp != 16)
                continue;
            found += !memcmp(t->pixels, img, sizeof(float) * 4 * W * H);
            found += !memcmp(t->pixels, dims, sizeof(float) * 4 * W * H);
        }
        CHECK_EQ_INT(found, 2);
        cu_free(&out);
    }
    free(bytes);
    free(img);
    free(dims);
}

/* ---- the vertex stage ---- */

typedef struct vs_rig {
    kiln_context *ctx;
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout il;
    kiln_rasterizer_state rs;
    ru_tex rt;
} vs_rig;

static void vs_rig_init(kiln_device *dev, vs_rig *r)
{
    r->ctx = kiln_device_immediate_context(dev);
    CHECK_RESULT(kiln_create_vertex_shader(dev, &BUF_VS, &r->vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &PASS_PS, &r->ps), KILN_OK);
    r->il = ru_make_layout(dev, r->vs, 1);
    r->rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    r->rs = ru_target_2d(dev, r->ctx, &r->rt);
    const float clear[4] = {-7, -7, -7, -7};
    CHECK_RESULT(kiln_clear_rtv(r->ctx, r->rt.rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(r->ctx, r->vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(r->ctx, r->ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(r->ctx, r->il), KILN_OK);
}

static void vs_rig_free(kiln_device *dev, vs_rig *r)
{
    ru_free_tex(dev, &r->rt);
    kiln_destroy_rasterizer_state(dev, r->rs);
    kiln_destroy_input_layout(dev, r->il);
    kiln_destroy_vertex_shader(dev, r->vs);
    kiln_destroy_pixel_shader(dev, r->ps);
}

static void draw_points(kiln_device *dev, kiln_context *ctx, const float (*p)[4], uint32_t n)
{
    ru_draw(dev, ctx, p, n, 16, KILN_TOPOLOGY_POINT_LIST);
}

static void test_vertex_stage(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    vs_rig r;
    vs_rig_init(dev, &r);
    static const view_spec v = {KILN_FORMAT_R16G16B16A16_FLOAT, 8, 2};
    static uint8_t bytes[64 * 8];
    kiln_srv view;
    kiln_buffer b = make_view(dev, &v, 77, bytes, &view);
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, VS_SLOT, 1, &view), KILN_OK);
    float p[2 * NV][4];
    for (int i = 0; i < 2 * NV; i++)
        p[i][0] = (float)(i % NV), p[i][1] = (float)(i / NV), p[i][2] = (float)(i / NV), p[i][3] = 0;
    draw_points(dev, r.ctx, (const float(*)[4])p, 2 * NV);
    float *img = ru_read_f32(dev, &r.rt);
    int bad = 0;
    for (int i = 0; i < NV; i++) {
        float want[4] = {0, 0, 0, 0};
        if (i - 1 >= 0 && i - 1 < NEL)
            decode(v.format, bytes + (size_t)(v.first + (uint32_t)i - 1) * v.size, want);
        const float wd[4] = {NEL, 1, 1, 0};
        for (int c = 0; c < 4; c++) {
            bad += img[4 * i + c] != want[c];
            bad += img[4 * (W + i) + c] != wd[c];
        }
    }
    th_check(bad == 0, "vertex-stage Load, GetDimensions, SampleLevel zeros", __FILE__, __LINE__);
    free(img);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, VS_SLOT, 1, &none), KILN_OK);

    /* the geometry stage, the same view in its slot GS_SLOT, row 4 */
    kiln_geometry_shader gs;
    CHECK_RESULT(kiln_create_geometry_shader(dev, &GS_BUF, &gs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(r.ctx, gs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader_resources(r.ctx, GS_SLOT, 1, &view), KILN_OK);
    for (int i = 0; i < NV; i++)
        p[i][0] = (float)i, p[i][1] = 3, p[i][2] = 4, p[i][3] = 0;
    draw_points(dev, r.ctx, (const float(*)[4])p, NV);
    img = ru_read_f32(dev, &r.rt);
    bad = 0;
    for (int i = 0; i < NV; i++) {
        float want[4] = {0, 0, 0, 0};
        if (i - 1 >= 0 && i - 1 < NEL)
            decode(v.format, bytes + (size_t)(v.first + (uint32_t)i - 1) * v.size, want);
        for (int c = 0; c < 4; c++)
            bad += img[4 * (4 * W + i) + c] != want[c];
    }
    th_check(bad == 0, "geometry-stage Load and GetDimensions", __FILE__, __LINE__);
    free(img);
    CHECK_RESULT(kiln_gs_set_shader_resources(r.ctx, GS_SLOT, 1, &none), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(r.ctx, (kiln_geometry_shader){0}), KILN_OK);
    kiln_destroy_geometry_shader(dev, gs);
    kiln_destroy_srv(dev, view);
    kiln_destroy_buffer(dev, b);
    vs_rig_free(dev, &r);
    kiln_device_destroy(dev);
}

/* ---- async equals serial, with updates and WRITE_DISCARD between draws ---- */

enum { NDRAWS = 24, NPT = 8 };

static float elem_b(uint32_t k, uint32_t e, int c) { return (float)(k * 100 + e * 10 + (uint32_t)c); }
static float elem_d(uint32_t k, uint32_t e, int c) { return -(float)(k * 1000 + e * 10 + (uint32_t)c) - 0.5f; }

static float *update_scene(kiln_device *dev)
{
    vs_rig r;
    vs_rig_init(dev, &r);
    kiln_buffer bd, dd;
    kiln_buffer_desc d = {NPT * 16, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &bd), KILN_OK);
    d = (kiln_buffer_desc){(NPT + 1) * 16, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE | KILN_BIND_VERTEX_BUFFER, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &dd), KILN_OK);
    kiln_srv views[2];
    CHECK_RESULT(kiln_create_buffer_srv(dev, bd, &(kiln_buffer_srv_desc){KILN_FORMAT_R32G32B32A32_FLOAT, 0, NPT},
                                        &views[0]),
                 KILN_OK);
    CHECK_RESULT(kiln_create_buffer_srv(dev, dd, &(kiln_buffer_srv_desc){KILN_FORMAT_R32G32B32A32_FLOAT, 1, NPT},
                                        &views[1]),
                 KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 0, 2, views), KILN_OK);
    for (uint32_t k = 0; k < NDRAWS; k++) {
        float b[NPT * 4];
        for (uint32_t e = 0; e < NPT; e++)
            for (int c = 0; c < 4; c++)
                b[e * 4 + c] = elem_b(k, e, c);
        CHECK_RESULT(kiln_update_subresource(r.ctx, kiln_buffer_resource(bd), 0, NULL, b, 0, 0), KILN_OK);
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(r.ctx, kiln_buffer_resource(dd), 0, KILN_MAP_WRITE_DISCARD, 0, &m), KILN_OK);
        float *f = m.data;
        for (uint32_t e = 0; e < NPT; e++)
            for (int c = 0; c < 4; c++)
                f[(e + 1) * 4 + c] = elem_d(k, e, c);
        CHECK_RESULT(kiln_unmap(r.ctx, kiln_buffer_resource(dd), 0), KILN_OK);
        float p[NPT][4];
        for (uint32_t i = 0; i < NPT; i++)
            p[i][0] = (float)i, p[i][1] = 2, p[i][2] = (float)k, p[i][3] = 0;
        draw_points(dev, r.ctx, (const float(*)[4])p, NPT);
    }
    float *img = ru_read_f32(dev, &r.rt);
    kiln_srv none[2] = {{0}};
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 0, 2, none), KILN_OK);
    kiln_destroy_srv(dev, views[0]);
    kiln_destroy_srv(dev, views[1]);
    kiln_destroy_buffer(dev, bd);
    kiln_destroy_buffer(dev, dd);
    vs_rig_free(dev, &r);
    return img;
}

static void test_async_equals_serial(void)
{
    kiln_device *s = th_device(KILN_EXEC_SERIAL, 0);
    float *ref = update_scene(s);
    kiln_device_destroy(s);
    int bad = 0;
    for (uint32_t k = 0; k < NDRAWS; k++)
        for (uint32_t i = 0; i < NPT; i++) {
            const float want[4] = {elem_b(k, i, 0), elem_b(k, i, 1), elem_d(k, i, 2), elem_d(k, i, 3)};
            bad += memcmp(ref + 4 * (k * W + i), want, 16) != 0;
        }
    CHECK_EQ_INT(bad, 0);
    for (uint32_t t = 1; t <= 3; t += 2) {
        kiln_device *a = th_device(KILN_EXEC_ASYNC, t);
        float *img = update_scene(a);
        CHECK(memcmp(img, ref, sizeof(float) * 4 * W * H) == 0);
        free(img);
        kiln_device_destroy(a);
    }
    free(ref);
}

/* ---- an update queued after a draw lands after it (no gate) ---- */

/* The draw reads its vertices from a DYNAMIC buffer this thread keeps
 * mapped (WRITE), so it cannot run before the Unmap. Queued meanwhile: an
 * update of the buffer the draw loads from (it must wait for the draw, so
 * the draw reads the old values) and Map DO_NOT_WAIT calls (one of a
 * DYNAMIC buffer the draw reads: WAS_STILL_DRAWING; one of a buffer it
 * does not read: at once). */
static void test_update_after_draw(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &POS_VS, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &LOAD_PS, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 1);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    float old[NEL], fresh[NEL];
    for (int e = 0; e < NEL; e++)
        old[e] = (float)e + 0.25f, fresh[e] = -100.0f - (float)e;
    kiln_buffer b = ru_buffer(dev, KILN_BIND_SHADER_RESOURCE, old, sizeof old);
    kiln_buffer dyn[2];
    kiln_buffer_desc d = {sizeof old, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &dyn[0]), KILN_OK);
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &dyn[1]), KILN_OK);
    kiln_srv views[2];
    CHECK_RESULT(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32_FLOAT, 0, NEL}, &views[0]),
                 KILN_OK);
    CHECK_RESULT(kiln_create_buffer_srv(dev, dyn[0], &(kiln_buffer_srv_desc){KILN_FORMAT_R32_FLOAT, 0, NEL},
                                        &views[1]),
                 KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 2, views), KILN_OK); /* rows 0 and 1 */
    static const float q[6][4] = {{-1, -1, 0.5f, 1}, {1, -1, 0.5f, 1}, {-1, 1, 0.5f, 1},
                                  {-1, 1, 0.5f, 1},  {1, -1, 0.5f, 1}, {1, 1, 0.5f, 1}};
    kiln_buffer vb;
    d = (kiln_buffer_desc){sizeof q, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &vb), KILN_OK);
    uint32_t stride = 16, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(vb), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    memcpy(m.data, q, sizeof q);
    CHECK_RESULT(kiln_draw(ctx, 6, 0), KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(b), 0, NULL, fresh, 0, 0), KILN_OK);
    if (mode == KILN_EXEC_ASYNC) { /* SERIAL drew at the update already */
        kiln_mapped_subresource m2;
        CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(dyn[0]), 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m2),
                     KILN_E_WAS_STILL_DRAWING);
        CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(dyn[1]), 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m2),
                     KILN_OK);
        CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(dyn[1]), 0), KILN_OK);
    }
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(vb), 0), KILN_OK);
    float *img = ru_read_f32(dev, &rt);
    int bad = 0;
    for (int e = 0; e < NEL; e++)
        bad += img[4 * (e + 2)] != old[e];
    CHECK_EQ_INT(bad, 0);
    free(img);
    /* a draw after the update reads the new values */
    CHECK_RESULT(kiln_draw(ctx, 6, 0), KILN_OK);
    img = ru_read_f32(dev, &rt);
    bad = 0;
    for (int e = 0; e < NEL; e++)
        bad += img[4 * (e + 2)] != fresh[e];
    CHECK_EQ_INT(bad, 0);
    free(img);
    kiln_srv none[2] = {{0}};
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 2, none), KILN_OK);
    kiln_destroy_srv(dev, views[0]);
    kiln_destroy_srv(dev, views[1]);
    kiln_destroy_buffer(dev, b);
    kiln_destroy_buffer(dev, dyn[0]);
    kiln_destroy_buffer(dev, dyn[1]);
    kiln_destroy_buffer(dev, vb);
    ru_free_tex(dev, &rt);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_device_destroy(dev);
}

/* ---- validation ---- */

static void test_validation(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    kiln_buffer b, plain, bad;
    kiln_buffer_desc d = {64, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &b), KILN_OK);
    d.bind_flags = KILN_BIND_VERTEX_BUFFER;
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &plain), KILN_OK);
    /* bind rules: any usage but STAGING, never with CONSTANT_BUFFER */
    d = (kiln_buffer_desc){64, KILN_USAGE_STAGING, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_FAILS(kiln_create_buffer(dev, &d, NULL, &bad), KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d = (kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE | KILN_BIND_CONSTANT_BUFFER, 0};
    CHECK_FAILS(kiln_create_buffer(dev, &d, NULL, &bad), KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_BIND);
    d = (kiln_buffer_desc){64, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE | KILN_BIND_VERTEX_BUFFER, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &bad), KILN_OK);
    kiln_destroy_buffer(dev, bad);
    uint8_t init[64] = {0};
    d = (kiln_buffer_desc){64, KILN_USAGE_IMMUTABLE, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, &(kiln_subresource_data){init, 0}, &bad), KILN_OK);
    kiln_destroy_buffer(dev, bad);

    kiln_srv v;
    kiln_buffer_srv_desc ok = {KILN_FORMAT_R32_FLOAT, 0, 16};
    CHECK_FAILS(kiln_create_buffer_srv(dev, plain, &ok, &v), KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    CHECK(v.id == 0);
    CHECK_FAILS(kiln_create_buffer_srv(dev, b, NULL, &v), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_create_buffer_srv(dev, b, &ok, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    static const kiln_format no[] = {KILN_FORMAT_UNKNOWN, KILN_FORMAT_D32_FLOAT, KILN_FORMAT_D24_UNORM_S8_UINT,
                                     KILN_FORMAT_D16_UNORM, KILN_FORMAT_BC1_UNORM, KILN_FORMAT_R8G8B8A8_UNORM_SRGB,
                                     (kiln_format)9999};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CHECK_FAILS(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){no[i], 0, 1}, &v), KILN_E_INVALID_ARG,
                    KILN_LOG_BUFFER_VIEW_FORMAT);
    CHECK_FAILS(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32_FLOAT, 0, 0}, &v),
                KILN_E_INVALID_ARG, KILN_LOG_BUFFER_VIEW_RANGE);
    CHECK_FAILS(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32_FLOAT, 1, 16}, &v),
                KILN_E_INVALID_ARG, KILN_LOG_BUFFER_VIEW_RANGE);
    CHECK_FAILS(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 5}, &v),
                KILN_E_INVALID_ARG, KILN_LOG_BUFFER_VIEW_RANGE);
    CHECK_FAILS(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32_FLOAT, 0xffffffffu, 2}, &v),
                KILN_E_INVALID_ARG, KILN_LOG_BUFFER_VIEW_RANGE);
    /* the last elements exactly */
    CHECK_RESULT(kiln_create_buffer_srv(dev, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32G32B32_FLOAT, 4, 1}, &v),
                 KILN_OK);
    /* a buffer view is no texture view: generate_mips refuses it */
    kiln_context *ctx = kiln_device_immediate_context(dev);
    CHECK_FAILS(kiln_generate_mips(ctx, v), KILN_E_INVALID_ARG, KILN_LOG_MIPS_NO_RT);
    CHECK_RESULT(kiln_destroy_srv(dev, v), KILN_OK);
    /* a texture is not a buffer, and kiln_create_srv takes no BUFFER dimension */
    ru_tex t = ru_rt(dev, 4, 4, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_create_buffer_srv(dev, (kiln_buffer){t.tex.id}, &ok, &v), KILN_E_INVALID_HANDLE);
    kiln_srv_desc sd = {0};
    sd.dimension = KILN_SRV_DIMENSION_BUFFER;
    CHECK_FAILS(kiln_create_srv(dev, t.tex, &sd, &v), KILN_E_INVALID_ARG, KILN_LOG_VIEW_DIMENSION);
    ru_free_tex(dev, &t);
    /* a buffer bound as a view and as a stream-output target */
    kiln_buffer so;
    d = (kiln_buffer_desc){256, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE | KILN_BIND_STREAM_OUTPUT, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &so), KILN_OK);
    CHECK_RESULT(kiln_create_buffer_srv(dev, so, &ok, &v), KILN_OK);
    kiln_vertex_shader vs;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &POS_VS, &vs), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 1);
    static const kiln_so_element sel[1] = {{0, 0, 4, 0}};
    kiln_so_desc sod = {sel, 1, 0};
    kiln_geometry_shader gs;
    CHECK_RESULT(kiln_create_geometry_shader_with_so(dev, NULL, &sod, &gs), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, gs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    uint32_t zero = 0;
    CHECK_RESULT(kiln_so_set_targets(ctx, 1, &so, &zero), KILN_OK);
    float pts[3][4] = {{0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 1}};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, pts, sizeof pts);
    uint32_t stride = 16;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &zero), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 3, 0), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader_resources(ctx, 5, 1, &v), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_HAZARD);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_vs_set_shader_resources(ctx, 5, 1, &none), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader_resources(ctx, 0, 1, &v), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_HAZARD);
    CHECK_RESULT(kiln_gs_set_shader_resources(ctx, 0, 1, &none), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 3, 0), KILN_OK);
    CHECK_RESULT(kiln_so_set_targets(ctx, 0, NULL, NULL), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, (kiln_geometry_shader){0}), KILN_OK);
    kiln_destroy_geometry_shader(dev, gs);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_srv(dev, v);
    kiln_destroy_buffer(dev, so);
    kiln_destroy_buffer(dev, b);
    kiln_destroy_buffer(dev, plain);
    kiln_device_destroy(dev);
}

static void test_osmesa(void)
{
    kiln_device *gl = th_osmesa_device();
    if (!gl)
        return;
    kiln_buffer b;
    kiln_buffer_desc d = {64, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_RESULT(kiln_create_buffer(gl, &d, NULL, &b), KILN_OK);
    kiln_srv v;
    CHECK_FAILS(kiln_create_buffer_srv(gl, b, &(kiln_buffer_srv_desc){KILN_FORMAT_R32_FLOAT, 0, 16}, &v),
                KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    CHECK(v.id == 0);
    kiln_destroy_buffer(gl, b);
    kiln_device_destroy(gl);
}

int main(void)
{
    test_pixel_stage_and_capture();
    test_vertex_stage();
    test_async_equals_serial();
    test_update_after_draw(KILN_EXEC_ASYNC, 3);
    test_update_after_draw(KILN_EXEC_SERIAL, 0);
    test_validation();
    test_osmesa();
    return th_exit();
}
