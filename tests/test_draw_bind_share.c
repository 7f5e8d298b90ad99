/*
 * Draws in one scene share bind records while nothing is rebound (the
 * producer then skips comparing the bound storages) and never read what
 * another binding left: non-indexed, indexed, non-indexed again with no
 * setter between them, then another vertex buffer, the first one again,
 * another index buffer, and a blend-state change (a setter that touches no
 * buffer) - each draw fills its own column of a 64x8 target with colors
 * that only its vertex buffer holds. Every pixel is checked, on SERIAL and
 * ASYNC devices.
 */
#include "raster_util.h"

#include <stdio.h>

enum { W = 64, H = 8, NCOL = 8 };

typedef struct vtx {
    float pos[4];
    float color[4];
} vtx;

/* Vertex buffer `which` (0 or 1): a quad over every column, 6 vertices
 * per column, colored (column, which). */
static void fill(vtx *v, int which)
{
    for (int c = 0; c < NCOL; c++) {
        float l = 2.0f * (float)c / NCOL - 1, r = 2.0f * (float)(c + 1) / NCOL - 1;
        const float p[6][2] = {{l, 1}, {r, 1}, {l, -1}, {l, -1}, {r, 1}, {r, -1}};
        for (int k = 0; k < 6; k++) {
            vtx *o = &v[c * 6 + k];
            o->pos[0] = p[k][0];
            o->pos[1] = p[k][1];
            o->pos[2] = 0.5f;
            o->pos[3] = 1;
            o->color[0] = (float)(c + 1) / 16.0f;
            o->color[1] = which ? 1.0f : 0.0f;
            o->color[2] = 0.25f;
            o->color[3] = 1;
        }
    }
}

static void run(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &p);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    static vtx va[NCOL * 6], vb_[NCOL * 6];
    fill(va, 0);
    fill(vb_, 1);
    kiln_buffer A = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, va, sizeof va);
    kiln_buffer B = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, vb_, sizeof vb_);
    uint16_t idx1[NCOL * 6], idx2[NCOL * 6];
    for (int i = 0; i < NCOL * 6; i++) {
        idx1[i] = (uint16_t)i;
        idx2[i] = (uint16_t)(i / 6 * 6 + 5 - i % 6); /* each quad's vertices backwards */
    }
    kiln_buffer I1 = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx1, sizeof idx1);
    kiln_buffer I2 = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx2, sizeof idx2);
    kiln_blend_desc bd = {0};
    kiln_blend_state bs = ru_bs(dev, &bd);
    const float clear[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    uint32_t stride = sizeof(vtx), off = 0;
    int want_b[NCOL]; /* which buffer each column must show */

    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &A, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(ctx, I1, KILN_INDEX_UINT16, 0), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 6, 0), KILN_OK); /* column 0 from A */
    want_b[0] = 0;
    CHECK_RESULT(kiln_draw_indexed(ctx, 6, 6, 0), KILN_OK); /* column 1, indexed */
    want_b[1] = 0;
    CHECK_RESULT(kiln_draw(ctx, 6, 12), KILN_OK); /* column 2, no setter between */
    want_b[2] = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &B, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 6, 18), KILN_OK); /* column 3 from B */
    want_b[3] = 1;
    CHECK_RESULT(kiln_draw_indexed(ctx, 6, 24, 0), KILN_OK); /* column 4 from B, indexed */
    want_b[4] = 1;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &A, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(ctx, I2, KILN_INDEX_UINT16, 0), KILN_OK);
    CHECK_RESULT(kiln_draw_indexed(ctx, 6, 30, 0), KILN_OK); /* column 5 from A, other indices */
    want_b[5] = 0;
    CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, NULL), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 6, 36), KILN_OK); /* column 6 after a non-buffer setter */
    want_b[6] = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &B, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_draw_indexed(ctx, 6, 42, 0), KILN_OK); /* column 7 from B */
    want_b[7] = 1;

    uint8_t img[W * H * 4];
    if (ru_read(dev, rt.tex, 0, img)) {
        uint32_t bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int c = x / (W / NCOL);
                const uint8_t want[4] = {(uint8_t)((float)(c + 1) / 16.0f * 255.0f + 0.5f),
                                         (uint8_t)(want_b[c] ? 255 : 0), 64, 255};
                const uint8_t *px = &img[(y * W + x) * 4];
                if (memcmp(px, want, 4) && bad++ < 3)
                    fprintf(stderr, "    (%d,%d): %u %u %u %u, want %u %u %u %u\n", x, y, px[0],
                            px[1], px[2], px[3], want[0], want[1], want[2], want[3]);
            }
        CHECK_EQ_INT(bad, 0);
    }
    kiln_destroy_blend_state(dev, bs);
    kiln_destroy_buffer(dev, A);
    kiln_destroy_buffer(dev, B);
    kiln_destroy_buffer(dev, I1);
    kiln_destroy_buffer(dev, I2);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &p);
    ru_free_tex(dev, &rt);
    kiln_device_destroy(dev);
}

int main(void)
{
    run(KILN_EXEC_SERIAL, 0);
    run(KILN_EXEC_ASYNC, 2);
    return th_exit();
}
