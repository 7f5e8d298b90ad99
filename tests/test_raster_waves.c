/* A scene of more jobs than one wave holds (KR_WAVE_JOBS, geom.h): 1,500
 * one-pixel draws with a depth clear before each, a job per draw and per
 * clear. The scene's geometry runs in waves of at most KR_WAVE_JOBS jobs
 * (the trace's "geometry wave" slices, with their job counts), every job
 * in exactly one wave, and the image is what the calls give in order: a
 * draw passes the depth test (LESS, z = 0.5) only after a clear to 1.0,
 * so a clear or draw executed in another order, or lost between waves,
 * changes a pixel. */
#include "harness.h"
#include "json_read.h"
#include "raster/geom.h"
#include "raster_util.h"

#include <stdlib.h>
#include <unistd.h>

#define W 64
#define H 32
#define DRAWS 1500 /* pixel i = (i % W, i / W): under W * H */

/* Draw i's depth test passes: its clear set 1.0, not 0.0. */
static bool passes(uint32_t i) { return i % 3 != 1; }

static void expected_pixel(uint32_t i, uint8_t out[4])
{
    bool drawn = i < DRAWS && passes(i);
    out[0] = drawn ? (uint8_t)(i & 255) : 0;
    out[1] = drawn ? (uint8_t)(i >> 8) : 0;
    out[2] = drawn ? 200 : 0;
    out[3] = 255;
}

/* The geometry waves of the trace at `path`: their number, the largest,
 * the sum of their jobs and how many hold exactly KR_WAVE_JOBS. */
typedef struct waves {
    uint32_t n, max, full;
    uint64_t jobs;
} waves;

static waves read_waves(const char *path)
{
    waves w = {0};
    size_t err = 0;
    ju_value *doc = ju_parse_file(path, &err);
    CHECK(doc != NULL);
    const ju_value *list = doc ? ju_get(doc, "traceEvents") : NULL;
    CHECK(list && list->type == JU_ARRAY);
    for (size_t i = 0; list && list->type == JU_ARRAY && i < list->n; i++) {
        const ju_value *v = list->items[i];
        const char *name = ju_str(v, "name"), *ph = ju_str(v, "ph");
        if (!name || !ph || strcmp(name, "geometry wave") || strcmp(ph, "X"))
            continue;
        uint32_t jobs = (uint32_t)ju_num(ju_get(v, "args"), "jobs", 0);
        w.n++;
        w.jobs += jobs;
        w.max = jobs > w.max ? jobs : w.max;
        w.full += jobs == KR_WAVE_JOBS;
    }
    if (doc)
        ju_free(doc);
    return w;
}

static void run(kiln_exec_mode mode, uint32_t threads, const char *path)
{
    remove(path);
    kiln_device_desc desc = {.exec_mode = mode, .num_threads = threads, .trace_path = path};
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &p);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);

    /* Draw i: one triangle over pixel i's center alone, its color i. */
    const uint32_t stride = 8 * sizeof(float);
    float *verts = malloc((size_t)DRAWS * 3 * stride);
    CHECK(verts != NULL);
    if (!verts)
        return;
    for (uint32_t i = 0; i < DRAWS; i++) {
        double x = i % W, y = i / W;
        const double at[3][2] = {{x - 0.25, y - 0.25}, {x + 1.5, y - 0.25}, {x - 0.25, y + 1.5}};
        for (int k = 0; k < 3; k++) {
            float *v = ru_vtx(verts + (i * 3 + k) * 8, W, H, at[k][0], at[k][1], 0.5f);
            v[0] = (float)(i & 255) / 255.0f;
            v[1] = (float)(i >> 8) / 255.0f;
            v[2] = 200.0f / 255.0f;
            v[3] = 1.0f;
        }
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, verts, DRAWS * 3 * stride);
    uint32_t off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
    for (uint32_t i = 0; i < DRAWS; i++) {
        CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, passes(i) ? 1.0f : 0.0f, 0),
                     KILN_OK);
        CHECK_RESULT(kiln_draw(ctx, 3, 3 * i), KILN_OK);
    }
    uint8_t *img = ru_read_bytes(dev, &rt);
    int bad = -1;
    for (uint32_t i = 0; i < W * H && bad < 0; i++) {
        uint8_t want[4];
        expected_pixel(i, want);
        if (memcmp(img + 4 * i, want, 4))
            bad = (int)i;
    }
    th_check(bad < 0, "every pixel is what the calls give in order", __FILE__, __LINE__);
    if (bad >= 0)
        fprintf(stderr, "    pixel %d: %u %u %u %u\n", bad, img[4 * bad], img[4 * bad + 1],
                img[4 * bad + 2], img[4 * bad + 3]);
    free(img);
    free(verts);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &p);
    ru_free_tex(dev, &rt);
    ru_free_tex(dev, &ds);
    kiln_device_destroy(dev); /* completes the trace */

    /* 1 + 2 * DRAWS jobs (the color clear, then a clear and a draw each),
     * in one scene or more: no wave above the bound, at least two filled
     * to it, each job in one wave. */
    waves w = read_waves(path);
    CHECK(w.max <= KR_WAVE_JOBS);
    CHECK(w.full >= 2);
    CHECK(w.n >= (1 + 2 * DRAWS + KR_WAVE_JOBS - 1) / KR_WAVE_JOBS);
    CHECK(w.jobs == 1 + 2 * DRAWS);
    if (w.max > KR_WAVE_JOBS || w.full < 2 || w.jobs != 1 + 2 * DRAWS)
        fprintf(stderr, "    %u waves, largest %u jobs, %u full, %llu jobs in all\n", w.n, w.max,
                w.full, (unsigned long long)w.jobs);
    remove(path);
}

int main(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/kiln-test-waves-%d.json", (int)getpid());
    run(KILN_EXEC_ASYNC, 2, path);
    run(KILN_EXEC_ASYNC, 1, path);
    run(KILN_EXEC_SERIAL, 1, path);
    return th_exit();
}
