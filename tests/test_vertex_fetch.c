/*
 * Vertex fetch: what a vertex shader reads for every input format, in a
 * batch wholly inside its buffers (fetched with one range check per
 * batch), in a batch whose last vertex ends exactly at a buffer's end,
 * and in batches with vertices past the end (zeros, as D3D10 defines,
 * for that vertex's element only), through draws, indexed draws with
 * out-of-range indices and a base vertex, and instanced draws with a
 * per-instance element. Each value is checked bit for bit against this
 * file's own reading of the bytes.
 */
#include "raster_util.h"

#include <stdio.h>

#define NIN 7
#define MAXID 2048
#define NINST 3

/* What the shader saw: in[inst][vid] (NIN float4s), and how often. */
static float seen[NINST][MAXID][4 * NIN];
static uint32_t times[NINST][MAXID];

static void vs_record(const kiln_vs_args *a)
{
    for (uint32_t v = 0; v < a->count; v++) {
        uint32_t id = a->vertex_id[v];
        if (id < MAXID && a->instance_id < NINST) {
            memcpy(seen[a->instance_id][id], a->in + (size_t)v * a->in_stride,
                   sizeof(float) * 4 * NIN);
            times[a->instance_id][id]++;
        }
        /* w = 0: every primitive is clipped away */
        memset(a->out + (size_t)v * a->out_stride, 0, 4 * sizeof(float));
    }
}

static const kiln_input_element elems[NIN] = {
    {KILN_FORMAT_R32G32B32_FLOAT, 0, 0, 0, 0}, {KILN_FORMAT_B8G8R8A8_UNORM, 0, 12, 0, 0},
    {KILN_FORMAT_R32G32_FLOAT, 0, 16, 0, 0},   {KILN_FORMAT_R8G8B8A8_UNORM, 0, 24, 0, 0},
    {KILN_FORMAT_R32_FLOAT, 1, 0, 0, 0},       {KILN_FORMAT_R32G32B32A32_FLOAT, 1, 4, 0, 0},
    {KILN_FORMAT_R32G32_FLOAT, 2, 0, 1, 2}, /* per instance, every 2 */
};
static const uint32_t strides[3] = {28, 20, 8};

typedef struct slot_data {
    uint8_t *bytes;
    uint32_t size;
} slot_data;

/* D3D10's reading of element e of vertex (or instance) `index`. */
static void expect_element(const slot_data *sd, uint32_t e, uint32_t index, float out[4])
{
    const kiln_input_element *el = &elems[e];
    uint32_t n = el->format == KILN_FORMAT_R32_FLOAT            ? 4
                 : el->format == KILN_FORMAT_R32G32_FLOAT       ? 8
                 : el->format == KILN_FORMAT_R32G32B32_FLOAT    ? 12
                 : el->format == KILN_FORMAT_R32G32B32A32_FLOAT ? 16
                                                                : 4;
    uint64_t off = (uint64_t)index * strides[el->slot] + el->offset;
    out[0] = out[1] = out[2] = 0.0f;
    out[3] = 1.0f;
    if (off + n > sd[el->slot].size) {
        out[3] = 0.0f;
        return;
    }
    const uint8_t *p = sd[el->slot].bytes + off;
    if (el->format == KILN_FORMAT_R8G8B8A8_UNORM || el->format == KILN_FORMAT_B8G8R8A8_UNORM) {
        bool bgra = el->format == KILN_FORMAT_B8G8R8A8_UNORM;
        for (int c = 0; c < 4; c++)
            out[c] = (float)p[bgra && c != 1 && c != 3 ? 2 - c : c] / 255.0f;
        return;
    }
    memcpy(out, p, n);
}

static void fill_random(th_rng *r, uint8_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        b[i] = (uint8_t)th_next(r);
}

/* The vertices a draw reads, per instance: vid[k] for k < n. */
static void check_draw(const char *what, const slot_data *sd, const uint32_t *vid, uint32_t n,
                       uint32_t ninst, uint32_t start_instance)
{
    uint32_t bad = 0, wrong_times = 0;
    for (uint32_t i = 0; i < ninst; i++) {
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id = vid[k];
            if (times[i][id] != 1) {
                wrong_times++;
                continue;
            }
            for (uint32_t e = 0; e < NIN; e++) {
                float want[4];
                uint32_t index =
                    elems[e].per_instance
                        ? start_instance +
                              i / (elems[e].instance_step_rate ? elems[e].instance_step_rate : 1)
                        : id;
                expect_element(sd, e, index, want);
                if (memcmp(want, seen[i][id] + 4 * e, sizeof want)) {
                    if (bad++ < 4)
                        fprintf(stderr, "    %s: instance %u vertex %u element %u differs\n", what,
                                i, id, e);
                }
            }
        }
    }
    th_check(bad == 0 && wrong_times == 0, what, __FILE__, __LINE__);
    if (wrong_times)
        fprintf(stderr, "    %u vertices shaded other than once\n", wrong_times);
}

int main(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader_desc vd = {vs_record, NIN, 0, NULL, NULL};
    kiln_vertex_shader vs = {0};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
    kiln_input_layout_desc ld = {.num_elements = NIN};
    memcpy(ld.elements, elems, sizeof elems);
    kiln_input_layout il = {0};
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
    kiln_pixel_shader_desc pd = {.fn = ru_ps_none};
    kiln_pixel_shader ps = {0};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    ru_tex rt = ru_rt(dev, 16, 16, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, 16, 16, 0, 1);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);

    th_rng rng = {7};
    /* Draws read vertices 0..148 (batches of 64, 64 and 21): slot 0 ends
     * exactly at vertex 148's last element (RGBA8: a format fetch_batch
     * runs whole batches of). Slot 1 holds vertex 149's R32
     * element but not its RGBA32 one (one byte short), which an index of
     * 149 reads as zeros. Slot 2 (per instance) ends exactly at instance 2's element. */
    const uint32_t N = 149;
    slot_data sd[3];
    uint32_t sizes[3] = {N * strides[0], N * strides[1] + 19, 3 * strides[2]};
    kiln_buffer vbs[3];
    for (int s = 0; s < 3; s++) {
        sd[s].size = sizes[s];
        sd[s].bytes = malloc(sizes[s]);
        fill_random(&rng, sd[s].bytes, sizes[s]);
        vbs[s] = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, sd[s].bytes, sizes[s]);
    }
    uint32_t offs[3] = {0, 0, 0};
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 3, vbs, strides, offs), KILN_OK);
    uint32_t vid[MAXID];

    /* A draw from vertex 0 to the buffer's end, and one from vertex 7. */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t start = pass ? 7 : 0, n = N - start;
        memset(times, 0, sizeof times);
        CHECK_RESULT(kiln_draw(ctx, n, start), KILN_OK);
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        for (uint32_t k = 0; k < n; k++)
            vid[k] = start + k;
        check_draw(pass ? "a draw from vertex 7 reads every vertex"
                        : "a draw ending at a buffer's end reads every vertex",
                   sd, vid, n, 1, 0);
    }
    /* A non-indexed draw past a buffer is refused (kiln's validation). */
    CHECK_FAILS(kiln_draw(ctx, N + 1, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);

    /* Instanced: per-vertex and per-instance elements (instances 0, 1
     * and 2 from instance 1 read elements 1, 1 and 2, the last at slot
     * 2's end). */
    memset(times, 0, sizeof times);
    CHECK_RESULT(kiln_draw_instanced(ctx, 100, NINST, 20, 1), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    for (uint32_t k = 0; k < 100; k++)
        vid[k] = 20 + k;
    check_draw("an instanced draw reads each instance's element", sd, vid, 100, NINST, 1);

    /* Indexed, every index once, in random order, with some past the
     * buffers (each batch mixes both), and a base vertex. */
    {
        uint32_t n = 0;
        uint32_t idx[400];
        for (uint32_t k = 0; k < 300 && n < 400; k++) {
            /* 0..149 (149: its R32 element only), then 150 past every buffer */
            uint32_t v = k < 150 ? k : 1000 + k;
            idx[n++] = v;
        }
        for (uint32_t k = n - 1; k > 0; k--) {
            uint32_t j = th_below(&rng, k + 1), t = idx[k];
            idx[k] = idx[j];
            idx[j] = t;
        }
        kiln_buffer ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof(uint32_t) * n);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT32, 0), KILN_OK);
        /* and a draw whose batches reach index 149 at most */
        uint32_t low[150];
        for (uint32_t k = 0; k < 150; k++)
            low[k] = 149 - k;
        kiln_buffer ib_low = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, low, sizeof low);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib_low, KILN_INDEX_UINT32, 0), KILN_OK);
        memset(times, 0, sizeof times);
        CHECK_RESULT(kiln_draw_indexed(ctx, 150, 0, 0), KILN_OK);
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        check_draw("an indexed draw whose first batch ends one vertex past a buffer", sd, low, 150,
                   1, 0);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT32, 0), KILN_OK);
        for (int base = 0; base <= 3; base += 3) {
            memset(times, 0, sizeof times);
            CHECK_RESULT(kiln_draw_indexed(ctx, n, 0, base), KILN_OK);
            CHECK_RESULT(kiln_finish(ctx), KILN_OK);
            for (uint32_t k = 0; k < n; k++)
                vid[k] = idx[k] + (uint32_t)base;
            check_draw(base ? "an indexed draw with a base vertex, some indices past the ends"
                            : "an indexed draw, some indices past the buffers' ends",
                       sd, vid, n, 1, 0);
        }
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, KILN_INDEX_UINT32, 0),
                     KILN_OK);
        kiln_destroy_buffer(dev, ib);
        kiln_destroy_buffer(dev, ib_low);
    }

    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    for (int s = 0; s < 3; s++) {
        kiln_destroy_buffer(dev, vbs[s]);
        free(sd[s].bytes);
    }
    ru_free_tex(dev, &rt);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_device_destroy(dev);
    return th_exit();
}
