/*
 * test_async_gs_equals_serial: DESIGN invariant 1 ("async equals serial")
 * for the geometry stage, queries and predication.
 *
 * Random sequences run on an ASYNC device (1-4 workers, drawn from the
 * seed) and on a SERIAL device from the same seed: draws through geometry
 * shaders of every input primitive (points, lines, triangles, lines and
 * triangles with adjacency, drawn from every topology that feeds them,
 * indexed with strip cuts or not, instanced or not) emitting point lists,
 * line strips and triangle strips with cuts, past max_vertices, with
 * primitive ids and render-target array indices (layered rendering into a
 * 3-slice color and depth array, and an index past the slices); draws
 * without a geometry shader between them; blend states that expose any
 * reordering; OCCLUSION, OCCLUSION_PREDICATE and PIPELINE_STATISTICS
 * queries begun and ended around them, read back with and without
 * DO_NOT_FLUSH; kiln_set_predication on predicates with either value
 * over draws, clears, copies and UpdateSubresource; stream output
 * (a pass-through and GS_TRI declaring position and color) into two
 * small buffers at offsets or appending, with rasterization on or off,
 * each draw inside an SO_STATISTICS query, and kiln_draw_auto from them;
 * flushes and finishes.
 * Every call's result, every query result read back (to the byte), and
 * the final bytes of every slice of the targets and of the stream-output
 * buffers must be identical.
 *
 * The sequence never depends on timing: a DO_NOT_FLUSH read that answers
 * WAS_STILL_DRAWING is not recorded, and a result it gives is recorded
 * only as the result a blocking read gives next. Query misuse (begin
 * while active, end without begin, begin of the predicate in use) is
 * made on purpose now and then: refused alike in both modes.
 *
 * test_async_equals_serial covers the same invariant for copies, maps
 * and clears against a byte model (it has no draws), test_raster_async
 * for draws without a geometry shader.
 *
 * Environment:
 *   KILN_GS_FUZZ=N          sequences (default 1000; 200 under TSan, 400
 *                           under ASan)
 *   KILN_GS_FUZZ_SEED=S     run only seed S
 *   KILN_GS_FUZZ_VERBOSE=1  print each operation
 */
#include "raster_util.h"

#include <stdio.h>

#if defined(__SANITIZE_THREAD__)
#define DEFAULT_SEQUENCES 200
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DEFAULT_SEQUENCES 200
#endif
#endif
#if !defined(DEFAULT_SEQUENCES) && defined(__SANITIZE_ADDRESS__)
#define DEFAULT_SEQUENCES 400
#endif
#ifndef DEFAULT_SEQUENCES
#define DEFAULT_SEQUENCES 1000
#endif

#define W 40u
#define H 28u
#define SLICES 3u
#define NV 192u /* vertices in the vertex buffer */
#define NI 96u  /* indices */
#define NQ 4    /* queries of each counting type */
#define MAXOPS 64
#define SO_VERTS 120u /* vertices a stream-output buffer holds */
#define MAXTRACE 4096

/* ---- shaders ----
 *
 * Vertices: position (clip space) and a color, 2 float4 inputs; the vertex
 * shader passes both (ru_vs_pass). Every geometry shader emits position +
 * 1 varying (the color). */

enum {
    GS_SPRITE,    /* point -> 4-vertex strip, slice by primitive id (0..3) */
    GS_POINTS,    /* point -> 3 points, then one past max_vertices */
    GS_LINE,      /* line -> two line strips, cut between */
    GS_TRI,       /* triangle -> itself, cut, a shrunk copy; none for id % 5 == 4 */
    GS_TRI_LAYER, /* triangle -> a copy into each slice */
    GS_LINE_ADJ,  /* line with adjacency -> a band along it, as a strip */
    GS_TRI_ADJ,   /* triangle with adjacency -> itself and its 3 neighbours */
    NGS
};

static const kiln_gs_input gs_input[NGS] = {KILN_GS_INPUT_POINT,       KILN_GS_INPUT_POINT,
                                            KILN_GS_INPUT_LINE,        KILN_GS_INPUT_TRIANGLE,
                                            KILN_GS_INPUT_TRIANGLE,    KILN_GS_INPUT_LINE_ADJ,
                                            KILN_GS_INPUT_TRIANGLE_ADJ};
static const kiln_gs_output gs_output[NGS] = {
    KILN_GS_OUTPUT_TRIANGLE_STRIP, KILN_GS_OUTPUT_POINT_LIST,     KILN_GS_OUTPUT_LINE_STRIP,
    KILN_GS_OUTPUT_TRIANGLE_STRIP, KILN_GS_OUTPUT_TRIANGLE_STRIP, KILN_GS_OUTPUT_TRIANGLE_STRIP,
    KILN_GS_OUTPUT_TRIANGLE_STRIP};
static const uint32_t gs_max[NGS] = {4, 3, 6, 6, 9, 4, 12};
static const uint32_t gs_flags[NGS] = {
    KILN_GS_WRITES_RT_ARRAY_INDEX, 0, 0, 0, KILN_GS_WRITES_RT_ARRAY_INDEX,
    KILN_GS_WRITES_RT_ARRAY_INDEX, 0};

static void emit_at(kiln_gs_args *a, const float *src, float dx, float dy, float tint)
{
    float v[8];
    memcpy(v, src, sizeof v);
    v[0] += dx * v[3];
    v[1] += dy * v[3];
    for (int c = 0; c < 3; c++)
        v[4 + c] = v[4 + c] * tint;
    kiln_gs_emit(a, v);
}

static const float *vin(const kiln_gs_args *a, uint32_t v) { return a->in + v * a->in_stride; }

static void gs_main(kiln_gs_args *a)
{
    uint32_t kind = (uint32_t)(uintptr_t)a->user, id = a->primitive_id;
    switch (kind) {
    case GS_SPRITE: {
        float s = 0.06f + 0.02f * (float)(id % 3);
        a->out_rt_array_index = id % 4; /* 3: past the slices, drawn into 0 */
        a->out_primitive_id = id * 7u + a->instance_id;
        for (int k = 0; k < 4; k++)
            emit_at(a, vin(a, 0), k & 1 ? s : -s, k & 2 ? -s : s, 1.0f);
        kiln_gs_cut(a);
        break;
    }
    case GS_POINTS:
        for (int k = 0; k < 4; k++) /* the 4th is past max_vertices: dropped */
            emit_at(a, vin(a, 0), 0.05f * (float)k, -0.04f * (float)k, 1.0f - 0.2f * (float)k);
        break;
    case GS_LINE:
        emit_at(a, vin(a, 0), 0, 0, 1.0f);
        emit_at(a, vin(a, 1), 0, 0, 1.0f);
        emit_at(a, vin(a, 1), 0.05f, 0.1f, 0.5f);
        kiln_gs_cut(a);
        emit_at(a, vin(a, 0), -0.1f, 0.05f, 0.7f);
        emit_at(a, vin(a, 1), -0.1f, 0.05f, 0.7f);
        break;
    case GS_TRI:
        if (id % 5 == 4)
            break; /* emits nothing */
        for (uint32_t v = 0; v < 3; v++)
            emit_at(a, vin(a, v), 0, 0, 1.0f);
        kiln_gs_cut(a);
        a->out_primitive_id = id + 1000u;
        for (uint32_t v = 0; v < 3; v++) /* toward the first vertex */
            emit_at(a, vin(a, v), 0.3f * (vin(a, 0)[0] - vin(a, v)[0]) / vin(a, v)[3],
                    0.3f * (vin(a, 0)[1] - vin(a, v)[1]) / vin(a, v)[3], 0.6f);
        break;
    case GS_TRI_LAYER:
        for (uint32_t s = 0; s < SLICES; s++) {
            a->out_rt_array_index = s;
            for (uint32_t v = 0; v < 3; v++)
                emit_at(a, vin(a, v), 0.05f * (float)s, 0, 1.0f - 0.25f * (float)s);
            kiln_gs_cut(a);
        }
        break;
    case GS_LINE_ADJ: {
        /* A band from vertex 1 to 2, as wide as the adjacent vertices are
         * far apart; slice by the instance. */
        float w = 0.02f + 0.05f * fabsf(vin(a, 3)[0] - vin(a, 0)[0]);
        a->out_rt_array_index = a->instance_id % SLICES;
        emit_at(a, vin(a, 1), 0, -w, 1.0f);
        emit_at(a, vin(a, 1), 0, w, 1.0f);
        emit_at(a, vin(a, 2), 0, -w, 0.8f);
        emit_at(a, vin(a, 2), 0, w, 0.8f);
        break;
    }
    default: /* GS_TRI_ADJ */
        for (uint32_t v = 0; v < 6; v += 2)
            emit_at(a, vin(a, v), 0, 0, 1.0f);
        for (uint32_t e = 0; e < 3; e++) {
            kiln_gs_cut(a);
            a->out_primitive_id = id * 4u + e + 1u;
            emit_at(a, vin(a, 2 * e), 0, 0, 0.5f);
            emit_at(a, vin(a, 2 * e + 1), 0, 0, 0.5f);
            emit_at(a, vin(a, (2 * e + 2) % 6), 0, 0, 0.5f);
        }
        break;
    }
}

/* Colors by SV_PrimitiveID: the primitive ids the geometry shaders emit
 * reach the pixels; it discards odd ids' pixels on a checkerboard. */
static void ps_prim(kiln_ps_args *a)
{
    uint32_t id = a->primitive_id;
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = (float)(id % 7) / 6.0f;
        KILN_PS_COLOR(a, 0, 1)[i] = KILN_PS_VARYING(a, 0, 1)[i];
        KILN_PS_COLOR(a, 0, 2)[i] = (float)(id % 3) / 2.0f;
        KILN_PS_COLOR(a, 0, 3)[i] = KILN_PS_VARYING(a, 0, 3)[i];
        if ((id & 1) && ((a->x + i % 4 + a->y + i / 4) & 1))
            a->mask &= ~(1u << i);
    }
}

/* ---- one run ---- */

typedef struct vtx {
    float pos[4];
    float color[4];
} vtx;

typedef struct run {
    kiln_exec_mode mode;
    uint32_t threads;
    uint64_t seed;
    th_rng rng;
    int verbose;
    kiln_device *dev;
    kiln_context *ctx;
    kiln_vertex_shader vs;
    kiln_input_layout il;
    kiln_pixel_shader ps[2];
    kiln_geometry_shader gs[NGS];
    kiln_blend_state bs[3];
    kiln_depth_stencil_state dss[2];
    kiln_rasterizer_state rs;
    kiln_texture color, depth, side;
    kiln_rtv rtv_all, rtv_slice[SLICES], rtv_side;
    kiln_dsv dsv_all, dsv_slice0;
    kiln_buffer vb, ib;
    kiln_query occ[NQ], stats[NQ], pred[NQ];
    uint8_t occ_state[NQ], stats_state[NQ], pred_state[NQ]; /* 0 new, 1 active, 2 ended */
    int predicate; /* index in pred of the predicate set, -1: none */
    uint64_t trace[MAXTRACE];
    uint32_t ntrace;
    kiln_geometry_shader gs_so[2]; /* stream output: a pass-through, GS_TRI */
    kiln_buffer sob[2];            /* stream-output targets (also vertex buffers) */
    kiln_query soq;                /* SO_STATISTICS around each stream-out draw */
    uint64_t ps_pixels, gs_prims; /* summed from statistics read back */
    uint64_t so_written;          /* primitives stream output wrote */
    uint8_t *bytes;               /* the final bytes: color and depth slices, side */
    size_t nbytes;
} run;

static void tr(run *R, uint64_t v)
{
    if (R->ntrace < MAXTRACE)
        R->trace[R->ntrace++] = v;
}

static void res(run *R, kiln_result r) { tr(R, (uint64_t)(int64_t)r); }

static uint32_t below(run *R, uint32_t n) { return th_below(&R->rng, n); }

static float frand(run *R, float lo, float hi)
{
    return lo + (hi - lo) * (float)(th_next(&R->rng) >> 40) / (float)(1u << 24);
}

static void say(run *R, const char *fmt, uint32_t a, uint32_t b)
{
    if (R->verbose) {
        fprintf(stderr, "  [%u] ", R->ntrace);
        fprintf(stderr, fmt, a, b);
        fputc('\n', stderr);
    }
}

static void create_all(run *R)
{
    kiln_device *dev = R->dev;
    R->vs = ru_make_vs(dev, 2, 1);
    R->il = ru_make_layout(dev, R->vs, 2);
    kiln_pixel_shader_desc pd = {
        .fn = ru_ps_vary, .num_varyings = 1, .num_outputs = 1, .user = RU_USER(1, 1)};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &R->ps[0]), KILN_OK);
    pd = (kiln_pixel_shader_desc){
        .fn = ps_prim, .num_varyings = 1, .num_outputs = 1, .flags = KILN_PS_MAY_DISCARD};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &R->ps[1]), KILN_OK);
    for (uint32_t g = 0; g < NGS; g++) {
        kiln_geometry_shader_desc gd = {.fn = gs_main,
                                        .input = gs_input[g],
                                        .output = gs_output[g],
                                        .max_vertices = gs_max[g],
                                        .num_varyings = 1,
                                        .flags = gs_flags[g],
                                        .user = (void *)(uintptr_t)g};
        CHECK_RESULT(kiln_create_geometry_shader(dev, &gd, &R->gs[g]), KILN_OK);
    }
    kiln_blend_desc bd = {0};
    R->bs[0] = ru_bs(dev, &bd);
    R->bs[1] = ru_bs_add(dev);
    bd.rt[0] = (kiln_blend_target){.enable = 1,
                                   .src = KILN_BLEND_SRC_ALPHA,
                                   .dst = KILN_BLEND_INV_SRC_ALPHA,
                                   .src_alpha = KILN_BLEND_ONE,
                                   .dst_alpha = KILN_BLEND_INV_SRC_ALPHA};
    R->bs[2] = ru_bs(dev, &bd);
    R->dss[0] = ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS_EQUAL});
    R->dss[1] = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    R->rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});

    kiln_texture2d_desc cd = {
        W, H, 1, SLICES, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET,
        0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &cd, NULL, &R->color), KILN_OK);
    kiln_texture2d_desc zd = cd;
    zd.format = KILN_FORMAT_D32_FLOAT;
    zd.bind_flags = KILN_BIND_DEPTH_STENCIL;
    CHECK_RESULT(kiln_create_texture2d(dev, &zd, NULL, &R->depth), KILN_OK);
    kiln_texture2d_desc sd = cd;
    sd.array_size = 1;
    CHECK_RESULT(kiln_create_texture2d(dev, &sd, NULL, &R->side), KILN_OK);
    CHECK_RESULT(
        kiln_create_rtv(dev, R->color, &(kiln_rtv_desc){.array_size = SLICES}, &R->rtv_all),
        KILN_OK);
    for (uint32_t s = 0; s < SLICES; s++)
        CHECK_RESULT(kiln_create_rtv(dev, R->color,
                                     &(kiln_rtv_desc){.first_array_slice = s, .array_size = 1},
                                     &R->rtv_slice[s]),
                     KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, R->side, NULL, &R->rtv_side), KILN_OK);
    CHECK_RESULT(
        kiln_create_dsv(dev, R->depth, &(kiln_dsv_desc){.array_size = SLICES}, &R->dsv_all),
        KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, R->depth, &(kiln_dsv_desc){.array_size = 1}, &R->dsv_slice0),
                 KILN_OK);

    vtx v[NV];
    for (uint32_t i = 0; i < NV; i++) {
        float cx = frand(R, -0.9f, 0.9f), cy = frand(R, -0.9f, 0.9f);
        v[i].pos[0] = cx;
        v[i].pos[1] = cy;
        v[i].pos[2] = frand(R, 0.05f, 0.95f);
        v[i].pos[3] = below(R, 4) ? 1.0f : frand(R, 0.8f, 1.6f);
        for (int c = 0; c < 4; c++)
            v[i].color[c] = frand(R, 0.1f, 1.0f);
    }
    kiln_buffer_desc vbd = {sizeof v, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    kiln_subresource_data init = {v, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &vbd, &init, &R->vb), KILN_OK);
    uint16_t idx[NI];
    for (uint32_t i = 0; i < NI; i++)
        idx[i] = below(R, 12) ? (uint16_t)below(R, NV) : 0xffffu; /* strip cuts */
    kiln_buffer_desc ibd = {sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, 0};
    kiln_subresource_data iinit = {idx, 0};
    CHECK_RESULT(kiln_create_buffer(dev, &ibd, &iinit, &R->ib), KILN_OK);
    for (int q = 0; q < NQ; q++) {
        CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &R->occ[q]), KILN_OK);
        CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_PIPELINE_STATISTICS, &R->stats[q]), KILN_OK);
        CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION_PREDICATE, &R->pred[q]), KILN_OK);
    }
    R->predicate = -1;

    /* stream output: position and color (registers 0 and 1), 32 bytes a
     * vertex, into slot 0; buffers small enough to overflow now and then */
    static const kiln_so_element el[2] = {{0, 0, 4, 0}, {1, 0, 4, 0}};
    kiln_so_desc sod = {el, 2, 0};
    CHECK_RESULT(kiln_create_geometry_shader_with_so(dev, NULL, &sod, &R->gs_so[0]), KILN_OK);
    kiln_geometry_shader_desc tri = {.fn = gs_main,
                                     .input = gs_input[GS_TRI],
                                     .output = gs_output[GS_TRI],
                                     .max_vertices = gs_max[GS_TRI],
                                     .num_varyings = 1,
                                     .flags = gs_flags[GS_TRI],
                                     .user = (void *)(uintptr_t)GS_TRI};
    CHECK_RESULT(kiln_create_geometry_shader_with_so(dev, &tri, &sod, &R->gs_so[1]), KILN_OK);
    for (int k = 0; k < 2; k++) {
        kiln_buffer_desc sbd = {32u * SO_VERTS, KILN_USAGE_DEFAULT,
                                KILN_BIND_STREAM_OUTPUT | KILN_BIND_VERTEX_BUFFER, 0};
        CHECK_RESULT(kiln_create_buffer(dev, &sbd, NULL, &R->sob[k]), KILN_OK);
    }
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_SO_STATISTICS, &R->soq), KILN_OK);
}

/* ---- operations ---- */

/* The topologies that feed input primitive `in`, with the vertices a
 * primitive needs (draws of any count are made: leftovers are dropped). */
static kiln_topology pick_topology(run *R, kiln_gs_input in)
{
    switch (in) {
    case KILN_GS_INPUT_POINT:
        return KILN_TOPOLOGY_POINT_LIST;
    case KILN_GS_INPUT_LINE:
        return below(R, 2) ? KILN_TOPOLOGY_LINE_LIST : KILN_TOPOLOGY_LINE_STRIP;
    case KILN_GS_INPUT_TRIANGLE:
        return below(R, 2) ? KILN_TOPOLOGY_TRIANGLE_LIST : KILN_TOPOLOGY_TRIANGLE_STRIP;
    case KILN_GS_INPUT_LINE_ADJ:
        return below(R, 2) ? KILN_TOPOLOGY_LINE_LIST_ADJ : KILN_TOPOLOGY_LINE_STRIP_ADJ;
    default:
        return below(R, 2) ? KILN_TOPOLOGY_TRIANGLE_LIST_ADJ : KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ;
    }
}

static void op_draw(run *R)
{
    kiln_context *ctx = R->ctx;
    uint32_t stride = sizeof(vtx), offset = 0;
    int with_gs = below(R, 5) != 0;
    uint32_t g = below(R, NGS);
    kiln_topology topo = with_gs ? pick_topology(R, gs_input[g])
                                 : (kiln_topology)(KILN_TOPOLOGY_POINT_LIST + below(R, 5));
    /* targets: the array views (layered), or one slice and its depth */
    uint32_t t = below(R, 4);
    if (t == 0) {
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &R->rtv_slice[0], R->dsv_slice0), KILN_OK);
    } else if (t == 1) {
        kiln_rtv v = R->rtv_slice[1 + below(R, SLICES - 1)];
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &v, (kiln_dsv){0}), KILN_OK);
    } else {
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &R->rtv_all, R->dsv_all), KILN_OK);
    }
    ru_set_viewport(ctx, 0, 0, (float)W, (float)H, 0, 1);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, R->il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &R->vb, &stride, &offset), KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(ctx, R->ib, KILN_INDEX_UINT16, 0), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, topo), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, R->vs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, with_gs ? R->gs[g] : (kiln_geometry_shader){0}), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, R->ps[below(R, 2)]), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, R->rs), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, R->bs[below(R, 3)], NULL), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, R->dss[below(R, 2)], 0), KILN_OK);
    uint32_t count = 1 + below(R, 40), inst = 1 + below(R, 3), kind = below(R, 3);
    say(R, "draw: gs %u, topology %u", with_gs ? g : 99u, (uint32_t)topo);
    if (kind == 0) {
        uint32_t start = below(R, NV - count);
        res(R, inst > 1 ? kiln_draw_instanced(ctx, count, inst, start, 0)
                        : kiln_draw(ctx, count, start));
    } else {
        uint32_t start = below(R, NI - count);
        int32_t base = (int32_t)below(R, 8);
        res(R, inst > 1 ? kiln_draw_indexed_instanced(ctx, count, inst, start, base, 0)
                        : kiln_draw_indexed(ctx, count, start, base));
    }
}

static kiln_query *query_of(run *R, uint32_t type, uint32_t q, uint8_t **state)
{
    if (type == 0)
        return *state = &R->occ_state[q], &R->occ[q];
    if (type == 1)
        return *state = &R->stats_state[q], &R->stats[q];
    return *state = &R->pred_state[q], &R->pred[q];
}

static void op_begin_end(run *R)
{
    uint32_t type = below(R, 3), q = below(R, NQ);
    uint8_t *st;
    kiln_query *query = query_of(R, type, q, &st);
    int is_pred = type == 2 && R->predicate == (int)q;
    /* mostly valid; now and then a misuse, refused alike in both modes */
    int begin = *st != 1;
    if (below(R, 12) == 0)
        begin = !begin;
    say(R, begin ? "begin query type %u #%u" : "end query type %u #%u", type, q);
    kiln_result r = begin ? kiln_query_begin(R->ctx, *query) : kiln_query_end(R->ctx, *query);
    res(R, r);
    if (r == KILN_OK && !is_pred)
        *st = begin ? 1 : 2;
}

static void read_data(run *R, kiln_query query, uint32_t type)
{
    uint64_t data[8] = {0};
    uint32_t size = type == 1   ? sizeof(kiln_query_data_pipeline_statistics)
                    : type == 0 ? sizeof(uint64_t)
                                : sizeof(uint32_t);
    if (below(R, 3) == 0) {
        /* DO_NOT_FLUSH: WAS_STILL_DRAWING is timing; a result must be the
         * one the blocking read below gives */
        uint64_t early[8] = {0};
        kiln_result r = kiln_query_get_data(R->ctx, query, early, size, KILN_GET_DATA_DO_NOT_FLUSH);
        if (r == KILN_OK) {
            kiln_result r2 = kiln_query_get_data(R->ctx, query, data, size, 0);
            CHECK_RESULT(r2, KILN_OK);
            CHECK(memcmp(early, data, size) == 0);
        } else {
            CHECK(r == KILN_E_WAS_STILL_DRAWING);
        }
    }
    kiln_result r;
    while ((r = kiln_query_get_data(R->ctx, query, data, size, 0)) == KILN_E_WAS_STILL_DRAWING)
        ;
    res(R, r);
    for (uint32_t i = 0; i < 8; i++)
        tr(R, data[i]);
    if (r == KILN_OK && type == 1) {
        const kiln_query_data_pipeline_statistics *s = (const void *)data;
        R->ps_pixels += s->ps_invocations;
        R->gs_prims += s->gs_primitives;
    }
}

static void op_get_data(run *R)
{
    uint32_t type = below(R, 3), q = below(R, NQ);
    uint8_t *st;
    kiln_query *query = query_of(R, type, q, &st);
    say(R, "get_data type %u #%u", type, q);
    if (*st != 2) { /* not ended, or active: QUERY_NOT_ENDED alike */
        res(R, kiln_query_get_data(R->ctx, *query, NULL, 0, 0));
        return;
    }
    read_data(R, *query, type);
}

static void op_predication(run *R)
{
    uint32_t q = below(R, NQ);
    if (R->predicate >= 0 && below(R, 3) == 0) {
        say(R, "predication off", 0, 0);
        res(R, kiln_set_predication(R->ctx, (kiln_query){0}, 0));
        R->predicate = -1;
        return;
    }
    uint32_t value = below(R, 2);
    say(R, "predication on #%u value %u", q, value);
    kiln_result r = kiln_set_predication(R->ctx, R->pred[q], (int)value);
    res(R, r); /* refused (not ended, or active) alike */
    if (r == KILN_OK)
        R->predicate = (int)q;
}

static void op_clear(run *R)
{
    float c[4] = {frand(R, 0, 1), frand(R, 0, 1), frand(R, 0, 1), frand(R, 0, 1)};
    uint32_t k = below(R, 4);
    say(R, "clear %u", k, 0);
    if (k == 0)
        res(R, kiln_clear_rtv(R->ctx, R->rtv_all, c));
    else if (k == 1)
        res(R, kiln_clear_rtv(R->ctx, R->rtv_slice[below(R, SLICES)], c));
    else if (k == 2)
        res(R, kiln_clear_dsv(R->ctx, below(R, 2) ? R->dsv_all : R->dsv_slice0, KILN_CLEAR_DEPTH,
                              frand(R, 0.3f, 1.0f), 0));
    else
        res(R, kiln_clear_rtv(R->ctx, R->rtv_side, c));
}

static void op_copy(run *R)
{
    uint32_t s = below(R, SLICES);
    kiln_box box = {below(R, W / 2),         below(R, H / 2),         0,
                    W / 2 + below(R, W / 2), H / 2 + below(R, H / 2), 1};
    say(R, "copy slice %u, direction %u", s, 0);
    if (below(R, 2))
        res(R, kiln_copy_subresource_region(R->ctx, kiln_texture_resource(R->side), 0, 0, 0, 0,
                                            kiln_texture_resource(R->color), s, &box));
    else
        res(R, kiln_copy_subresource_region(R->ctx, kiln_texture_resource(R->color), s, 0, 0, 0,
                                            kiln_texture_resource(R->side), 0, &box));
}

static void op_update_vb(run *R)
{
    vtx v[8];
    uint32_t n = 1 + below(R, 8), first = below(R, NV - n);
    for (uint32_t i = 0; i < n; i++) {
        for (int c = 0; c < 2; c++)
            v[i].pos[c] = frand(R, -0.9f, 0.9f);
        v[i].pos[2] = frand(R, 0.05f, 0.95f);
        v[i].pos[3] = 1.0f;
        for (int c = 0; c < 4; c++)
            v[i].color[c] = frand(R, 0.1f, 1.0f);
    }
    kiln_box box = {first * (uint32_t)sizeof(vtx), 0, 0, (first + n) * (uint32_t)sizeof(vtx), 1, 1};
    say(R, "update vb %u + %u", first, n);
    res(R, kiln_update_subresource(R->ctx, kiln_buffer_resource(R->vb), 0, &box, v, 0, 0));
}

/* A stream-out draw (pass-through or GS_TRI) into one buffer, at offset
 * 0 or appending, with rasterization on or off, inside an SO_STATISTICS
 * query read back at once. */
static void op_so(run *R)
{
    kiln_context *ctx = R->ctx;
    uint32_t stride = sizeof(vtx), offset = 0, g = below(R, 2), k = below(R, 2);
    uint32_t so_off = below(R, 3) ? KILN_SO_APPEND : 32u * below(R, 8);
    int raster = below(R, 2);
    kiln_topology topo = g ? (below(R, 2) ? KILN_TOPOLOGY_TRIANGLE_LIST : KILN_TOPOLOGY_TRIANGLE_STRIP)
                           : (kiln_topology)(KILN_TOPOLOGY_POINT_LIST + below(R, 5));
    say(R, "stream out: gs %u, buffer %u", g, k);
    if (raster)
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &R->rtv_side, (kiln_dsv){0}), KILN_OK);
    else
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, (float)W, (float)H, 0, 1);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, R->il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &R->vb, &stride, &offset), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, topo), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, R->vs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, R->gs_so[g]), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, raster ? R->ps[0] : (kiln_pixel_shader){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, R->dss[1], 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, R->bs[below(R, 3)], NULL), KILN_OK);
    res(R, kiln_so_set_targets(ctx, 1, &R->sob[k], &so_off));
    res(R, kiln_query_begin(ctx, R->soq));
    uint32_t count = 1 + below(R, 30);
    res(R, kiln_draw(ctx, count, below(R, NV - count)));
    res(R, kiln_query_end(ctx, R->soq));
    kiln_query_data_so_statistics st = {0, 0};
    kiln_result r;
    while ((r = kiln_query_get_data(ctx, R->soq, &st, sizeof st, 0)) == KILN_E_WAS_STILL_DRAWING)
        ;
    res(R, r);
    tr(R, st.primitives_written);
    tr(R, st.primitives_storage_needed);
    R->so_written += st.primitives_written;
    res(R, kiln_so_set_targets(ctx, 0, NULL, NULL));
    CHECK_RESULT(kiln_gs_set_shader(ctx, (kiln_geometry_shader){0}), KILN_OK);
}

/* draw_auto from a stream-output buffer, as points or triangles. */
static void op_draw_auto(run *R)
{
    kiln_context *ctx = R->ctx;
    uint32_t stride = 32, offset = 0, k = below(R, 2);
    say(R, "draw_auto: buffer %u", k, 0);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &R->rtv_side, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, (float)W, (float)H, 0, 1);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, R->il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &R->sob[k], &stride, &offset), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, below(R, 2) ? KILN_TOPOLOGY_POINT_LIST
                                                         : KILN_TOPOLOGY_TRIANGLE_LIST),
                 KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, R->vs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, (kiln_geometry_shader){0}), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, R->ps[0]), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, R->dss[1], 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, R->bs[1], NULL), KILN_OK);
    res(R, kiln_draw_auto(ctx));
}

/* A buffer's bytes, through a STAGING copy. */
static void read_buffer(run *R, kiln_buffer b, uint32_t size, uint8_t *out)
{
    kiln_buffer st;
    kiln_buffer_desc d = {size, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
    CHECK_RESULT(kiln_create_buffer(R->dev, &d, NULL, &st), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(R->ctx, kiln_buffer_resource(st), kiln_buffer_resource(b)), KILN_OK);
    kiln_mapped_subresource m;
    if (kiln_map(R->ctx, kiln_buffer_resource(st), 0, KILN_MAP_READ, 0, &m) == KILN_OK) {
        memcpy(out, m.data, size);
        kiln_unmap(R->ctx, kiln_buffer_resource(st), 0);
    } else {
        CHECK(0);
    }
    kiln_destroy_buffer(R->dev, st);
}

static void run_sequence(run *R)
{
    R->rng.s = R->seed * 0x9e3779b97f4a7c15ull + 1;
    R->threads = 1 + below(R, 4);
    th_log_reset();
    R->dev = th_device(R->mode, R->mode == KILN_EXEC_ASYNC ? R->threads : 0);
    R->ctx = kiln_device_immediate_context(R->dev);
    create_all(R);
    uint32_t nops = 8 + below(R, MAXOPS - 8);
    for (uint32_t i = 0; i < nops; i++) {
        uint32_t op = below(R, 23);
        if (op >= 20)
            op < 22 ? op_so(R) : op_draw_auto(R);
        else if (op < 8)
            op_draw(R);
        else if (op < 11)
            op_begin_end(R);
        else if (op < 13)
            op_get_data(R);
        else if (op < 15)
            op_predication(R);
        else if (op < 16)
            op_clear(R);
        else if (op < 17)
            op_copy(R);
        else if (op < 18)
            op_update_vb(R);
        else if (op < 19)
            res(R, kiln_flush(R->ctx));
        else
            res(R, kiln_finish(R->ctx));
    }
    /* End what is active, lift the predicate, read every ended query. */
    if (R->predicate >= 0)
        res(R, kiln_set_predication(R->ctx, (kiln_query){0}, 0));
    R->predicate = -1;
    for (uint32_t type = 0; type < 3; type++)
        for (uint32_t q = 0; q < NQ; q++) {
            uint8_t *st;
            kiln_query *query = query_of(R, type, q, &st);
            if (*st == 1) {
                res(R, kiln_query_end(R->ctx, *query));
                *st = 2;
            }
            if (*st == 2)
                read_data(R, *query, type);
        }
    CHECK_RESULT(kiln_om_set_render_targets(R->ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    size_t slice = (size_t)W * H * 4;
    R->nbytes = slice * (2 * SLICES + 1) + 2 * 32u * SO_VERTS;
    R->bytes = calloc(1, R->nbytes);
    for (uint32_t s = 0; s < SLICES; s++) {
        ru_read(R->dev, R->color, s, R->bytes + slice * s);
        ru_read(R->dev, R->depth, s, R->bytes + slice * (SLICES + s));
    }
    ru_read(R->dev, R->side, 0, R->bytes + slice * 2 * SLICES);
    for (int k = 0; k < 2; k++)
        read_buffer(R, R->sob[k], 32u * SO_VERTS, R->bytes + slice * (2 * SLICES + 1) + 32u * SO_VERTS * (size_t)k);
    kiln_destroy_query(R->dev, R->soq);
    for (int q = 0; q < NQ; q++) {
        kiln_destroy_query(R->dev, R->occ[q]);
        kiln_destroy_query(R->dev, R->stats[q]);
        kiln_destroy_query(R->dev, R->pred[q]);
    }
    kiln_device_destroy(R->dev);
    R->dev = NULL;
}

/* The first difference between the two runs, or 0. */
static int compare(const run *s, const run *a)
{
    if (s->ntrace != a->ntrace) {
        fprintf(stderr, "    SERIAL recorded %u values, ASYNC %u\n", s->ntrace, a->ntrace);
        return 1;
    }
    for (uint32_t i = 0; i < s->ntrace; i++)
        if (s->trace[i] != a->trace[i]) {
            fprintf(stderr, "    value %u: SERIAL %llu, ASYNC %llu\n", i,
                    (unsigned long long)s->trace[i], (unsigned long long)a->trace[i]);
            return 1;
        }
    size_t slice = (size_t)W * H * 4;
    for (size_t i = 0; i < s->nbytes; i++)
        if (s->bytes[i] != a->bytes[i]) {
            size_t k = i / slice, p = i % slice / 4;
            if (k > 2 * SLICES) {
                fprintf(stderr, "    stream-output buffer bytes differ first at %zu\n",
                        i - slice * (2 * SLICES + 1));
                return 1;
            }
            fprintf(stderr, "    %s slice %zu differs first at pixel (%zu, %zu)\n",
                    k < SLICES       ? "color"
                    : k < 2 * SLICES ? "depth"
                                     : "side",
                    k % SLICES, p % W, p / W);
            return 1;
        }
    return 0;
}

int main(void)
{
    const char *e;
    uint64_t count = DEFAULT_SEQUENCES, first = 1;
    int verbose = (e = getenv("KILN_GS_FUZZ_VERBOSE")) && *e && *e != '0';
    if ((e = getenv("KILN_GS_FUZZ")) && *e)
        count = strtoull(e, NULL, 10);
    if ((e = getenv("KILN_GS_FUZZ_SEED")) && *e) {
        first = strtoull(e, NULL, 10);
        count = 1;
    }
    uint64_t done = 0, values = 0, pixels = 0, prims = 0, so_prims = 0;
    for (uint64_t i = 0; i < count; i++) {
        run *s = calloc(1, sizeof *s), *a = calloc(1, sizeof *a);
        s->seed = a->seed = first + i;
        s->verbose = verbose;
        s->mode = KILN_EXEC_SERIAL;
        a->mode = KILN_EXEC_ASYNC;
        run_sequence(s);
        run_sequence(a);
        int bad = compare(s, a);
        CHECK(!bad);
        if (bad)
            fprintf(stderr,
                    "FAIL seed %llu (ASYNC with %u threads): replay with "
                    "KILN_GS_FUZZ_SEED=%llu KILN_GS_FUZZ_VERBOSE=1\n",
                    (unsigned long long)s->seed, a->threads, (unsigned long long)s->seed);
        values += s->ntrace;
        pixels += s->ps_pixels;
        prims += s->gs_prims;
        so_prims += s->so_written;
        free(s->bytes);
        free(a->bytes);
        free(s);
        free(a);
        if (bad)
            break;
        done++;
    }
    CHECK_EQ_INT(done, count);
    /* The sequences must exercise what they claim: geometry shaders that
     * emitted primitives and pixels shaded, as the statistics read back
     * say (a run of many seeds that drew nothing would prove nothing). */
    if (count >= 20) {
        CHECK(prims > 0);
        CHECK(pixels > 0);
        CHECK(so_prims > 0);
    }
    printf("%llu sequences (seeds %llu..%llu), %llu values compared, statistics read back: "
           "%llu GS primitives, %llu pixels shaded, %llu primitives streamed out\n",
           (unsigned long long)done, (unsigned long long)first,
           (unsigned long long)(first + count - 1), (unsigned long long)values,
           (unsigned long long)prims, (unsigned long long)pixels, (unsigned long long)so_prims);
    return th_exit();
}
