/*
 * The texture kinds beyond 2D through the API (issue 12): creation and
 * view rules (one log id each), UpdateSubresource / CopySubresourceRegion
 * / CopyResource / Map on 1D-array, cube and 3D subresources (3D boxes
 * with front/back, depth pitches), generate_mips of each kind against
 * averages computed here, render targets of 3D W slices, cube faces and
 * 1D textures, depth-stencil views of 1D and cube textures, a draw whose
 * pixel shader samples a cube and a 3D texture, capture and replay of
 * all of it (capture ops 102-108), the osmesa backend's refusal, and the
 * row pitch rule (odd 64-byte lines for rows of 512 bytes or more).
 */
#include "capture_util.h"
#include "cube_util.h"
#include "raster_util.h"

#include <stdlib.h>
#include <string.h>

#define F32 KILN_FORMAT_R32_FLOAT
#define RT_SR (KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE)

static kiln_device *dev;
static kiln_context *ctx;

/* ---- reading any texture back: a STAGING twin, CopyResource, Map ---- */

/* Subresource `sub` of `t` into out (tight: rows x depth slices). Returns
 * its depth pitch as Map gave it. */
static uint32_t read_sub(kiln_texture t, uint32_t sub, float *out, uint32_t w, uint32_t h,
                         uint32_t d)
{
    kiln_texture3d_desc d3;
    kiln_texture2d_desc d2;
    CHECK_RESULT(kiln_texture3d_get_desc(dev, t, &d3), KILN_OK);
    CHECK_RESULT(kiln_texture_get_desc(dev, t, &d2), KILN_OK);
    kiln_texture st = {0};
    if (d3.depth > 1) {
        d3.usage = KILN_USAGE_STAGING;
        d3.bind_flags = 0;
        d3.cpu_access = KILN_CPU_ACCESS_READ;
        CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &st), KILN_OK);
    } else if (d2.height == 1 && d2.array_size != 6) {
        kiln_texture1d_desc d1 = {
            d2.width, d2.mip_levels,       d2.array_size, d2.format, KILN_USAGE_STAGING,
            0,        KILN_CPU_ACCESS_READ};
        CHECK_RESULT(kiln_create_texture1d(dev, &d1, NULL, &st), KILN_OK);
    } else if (d2.array_size == 6 && d2.width == d2.height) { /* our cubes */
        kiln_texture_cube_desc dc = {d2.width, d2.mip_levels,       d2.format, KILN_USAGE_STAGING,
                                     0,        KILN_CPU_ACCESS_READ};
        CHECK_RESULT(kiln_create_texture_cube(dev, &dc, NULL, &st), KILN_OK);
    } else {
        d2.usage = KILN_USAGE_STAGING;
        d2.bind_flags = 0;
        d2.cpu_access = KILN_CPU_ACCESS_READ;
        CHECK_RESULT(kiln_create_texture2d(dev, &d2, NULL, &st), KILN_OK);
    }
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(st), kiln_texture_resource(t)),
                 KILN_OK);
    kiln_mapped_subresource m = {0};
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(st), sub, KILN_MAP_READ, 0, &m), KILN_OK);
    if (m.data)
        for (uint32_t z = 0; z < d; z++)
            for (uint32_t y = 0; y < h; y++)
                memcpy(out + ((size_t)z * h + y) * w,
                       (const uint8_t *)m.data + z * m.depth_pitch + y * m.row_pitch, w * 4);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(st), sub), KILN_OK);
    kiln_destroy_texture(dev, st);
    return m.depth_pitch;
}

/* ---- row pitch: odd 64-byte lines for rows of 512 bytes or more ---- */

/* The rule of resource.c's row_pitch, written out again. */
static uint32_t pitch_rule(uint32_t bytes)
{
    uint32_t p = (bytes + 15u) & ~15u;
    if (p < 512)
        return p;
    p = (p + 63u) & ~63u;
    return (p / 64) % 2 ? p : p + 64;
}

/* Map reports the padded pitch of every mip of a STAGING texture; data
 * written through UpdateSubresource (tight rows) into a DEFAULT texture
 * comes back row for row through CopyResource into it. */
static void test_row_pitch(void)
{
    static const struct {
        kiln_format format;
        uint32_t width, height, texel; /* texel: bytes per texel, or per 4x4 block (BC) */
    } cases[] = {
        {KILN_FORMAT_R8G8B8A8_UNORM, 1920, 12, 4}, /* 7,680 -> 7,744 */
        {KILN_FORMAT_R8G8B8A8_UNORM, 100, 5, 4},   /* 400: below 512, 16-aligned */
        {KILN_FORMAT_R8G8B8A8_UNORM, 128, 3, 4},   /* 512 -> 576 */
        {KILN_FORMAT_R8G8B8A8_UNORM, 144, 3, 4},   /* 576: already odd */
        {KILN_FORMAT_R8_UNORM, 600, 7, 1},         /* 600 -> 608 -> 640 -> 704 */
        {KILN_FORMAT_BC1_UNORM, 1024, 8, 8},       /* 256 blocks: 2,048 -> 2,112 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bool bc = cases[c].format == KILN_FORMAT_BC1_UNORM;
        uint32_t w = cases[c].width, h = cases[c].height;
        kiln_texture2d_desc d = {.width = w,
                                 .height = h,
                                 .array_size = 1,
                                 .format = cases[c].format,
                                 .usage = KILN_USAGE_STAGING,
                                 .cpu_access = KILN_CPU_ACCESS_READ | KILN_CPU_ACCESS_WRITE};
        kiln_texture st = {0}, t = {0};
        CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &st), KILN_OK);
        uint32_t mips = 0;
        for (uint32_t s = w > h ? w : h; s; s >>= 1)
            mips++;
        for (uint32_t mip = 0; mip < mips; mip++) {
            uint32_t mw = w >> mip ? w >> mip : 1, mh = h >> mip ? h >> mip : 1;
            uint32_t row = bc ? (mw + 3) / 4 * cases[c].texel : mw * cases[c].texel;
            uint32_t rows = bc ? (mh + 3) / 4 : mh;
            kiln_mapped_subresource m = {0};
            CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(st), mip, KILN_MAP_READ, 0, &m),
                         KILN_OK);
            CHECK(m.row_pitch == pitch_rule(row));
            CHECK(m.depth_pitch == (size_t)m.row_pitch * rows);
            CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(st), mip), KILN_OK);
        }
        /* level 0 through a DEFAULT texture and back */
        uint32_t row = bc ? (w + 3) / 4 * cases[c].texel : w * cases[c].texel;
        uint32_t rows = bc ? (h + 3) / 4 : h;
        uint8_t *data = malloc((size_t)row * rows);
        for (size_t i = 0; i < (size_t)row * rows; i++)
            data[i] = (uint8_t)(i * 7 + i / row * 13);
        d.usage = KILN_USAGE_DEFAULT;
        d.bind_flags = KILN_BIND_SHADER_RESOURCE;
        d.cpu_access = 0;
        CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &t), KILN_OK);
        CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(t), 0, NULL, data, row, 0),
                     KILN_OK);
        CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(st), kiln_texture_resource(t)),
                     KILN_OK);
        kiln_mapped_subresource m = {0};
        CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(st), 0, KILN_MAP_READ, 0, &m), KILN_OK);
        bool same = m.data != NULL;
        for (uint32_t y = 0; same && y < rows; y++)
            same = !memcmp((const uint8_t *)m.data + (size_t)y * m.row_pitch, data + (size_t)y * row,
                           row);
        CHECK(same);
        CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(st), 0), KILN_OK);
        free(data);
        kiln_destroy_texture(dev, t);
        kiln_destroy_texture(dev, st);
    }
}

/* ---- validation: every new rule, one log id each ---- */

static void test_validation(void)
{
    kiln_texture t = {0};
    kiln_texture1d_desc d1 = {8, 0, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    d1.width = 0;
    CHECK_FAILS(kiln_create_texture1d(dev, &d1, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_SIZE_INVALID);
    d1.width = 8193;
    CHECK_FAILS(kiln_create_texture1d(dev, &d1, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_SIZE_INVALID);
    d1.width = 8;
    d1.mip_levels = 5;
    CHECK_FAILS(kiln_create_texture1d(dev, &d1, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_MIPS_INVALID);
    d1.mip_levels = 0;
    d1.array_size = 513;
    CHECK_FAILS(kiln_create_texture1d(dev, &d1, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_ARRAY_INVALID);
    d1.array_size = 1;
    d1.usage = KILN_USAGE_DYNAMIC;
    CHECK_FAILS(kiln_create_texture1d(dev, &d1, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_USAGE_DYNAMIC_TEXTURE);
    CHECK(t.id == 0);

    kiln_texture_cube_desc dc = {0, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_FAILS(kiln_create_texture_cube(dev, &dc, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_SIZE_INVALID);
    dc.size = 8;
    dc.mip_levels = 5;
    CHECK_FAILS(kiln_create_texture_cube(dev, &dc, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_MIPS_INVALID);
    dc.mip_levels = 1;
    dc.usage = KILN_USAGE_DYNAMIC; /* six faces */
    CHECK_FAILS(kiln_create_texture_cube(dev, &dc, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_USAGE_DYNAMIC_TEXTURE);

    kiln_texture3d_desc d3 = {2049, 4, 4, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_FAILS(kiln_create_texture3d(dev, &d3, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE3D_SIZE_INVALID);
    d3.width = 4;
    d3.depth = 0;
    CHECK_FAILS(kiln_create_texture3d(dev, &d3, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE3D_SIZE_INVALID);
    d3.depth = 16; /* the chain follows the largest of the three: 5 */
    d3.mip_levels = 6;
    CHECK_FAILS(kiln_create_texture3d(dev, &d3, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_MIPS_INVALID);
    d3.mip_levels = 5;
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &t), KILN_OK);
    kiln_texture3d_desc got;
    CHECK_RESULT(kiln_texture3d_get_desc(dev, t, &got), KILN_OK);
    CHECK(got.width == 4 && got.height == 4 && got.depth == 16 && got.mip_levels == 5);
    kiln_destroy_texture(dev, t);
    d3.mip_levels = 1;
    d3.format = KILN_FORMAT_D32_FLOAT;
    d3.bind_flags = KILN_BIND_DEPTH_STENCIL;
    CHECK_FAILS(kiln_create_texture3d(dev, &d3, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_KIND_BIND);
    d3.bind_flags = KILN_BIND_SHADER_RESOURCE; /* a depth format, even unbound as depth */
    CHECK_FAILS(kiln_create_texture3d(dev, &d3, NULL, &t), KILN_E_INVALID_ARG,
                KILN_LOG_TEXTURE_KIND_BIND);

    /* sampler: address_w in range */
    kiln_sampler smp;
    kiln_sampler_desc sd = {0};
    sd.address_w = (kiln_address)9;
    CHECK_FAILS(kiln_create_sampler(dev, &sd, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);

    /* views */
    kiln_texture t2, t1, tc, t3;
    kiln_texture2d_desc dd = {4, 4, 1, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &t2), KILN_OK);
    d1 = (kiln_texture1d_desc){8, 1, 3, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    CHECK_RESULT(kiln_create_texture1d(dev, &d1, NULL, &t1), KILN_OK);
    dc = (kiln_texture_cube_desc){4, 1, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    CHECK_RESULT(kiln_create_texture_cube(dev, &dc, NULL, &tc), KILN_OK);
    d3 = (kiln_texture3d_desc){4, 4, 4, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &t3), KILN_OK);
    kiln_srv sv;
    kiln_srv_desc vd = {0};
    vd.dimension = KILN_SRV_DIMENSION_TEXTURECUBE;
    CHECK_FAILS(kiln_create_srv(dev, t2, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_DIMENSION);
    vd.dimension = KILN_SRV_DIMENSION_TEXTURE3D;
    CHECK_FAILS(kiln_create_srv(dev, t1, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_DIMENSION);
    vd.dimension = KILN_SRV_DIMENSION_TEXTURE1D;
    CHECK_FAILS(kiln_create_srv(dev, tc, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_DIMENSION);
    vd.dimension = KILN_SRV_DIMENSION_TEXTURE2DARRAY;
    CHECK_FAILS(kiln_create_srv(dev, t3, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_DIMENSION);
    vd.dimension = (kiln_srv_dimension)(KILN_SRV_DIMENSION_BUFFER + 1);
    CHECK_FAILS(kiln_create_srv(dev, t2, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM);
    vd.dimension = KILN_SRV_DIMENSION_TEXTURECUBE; /* a cube has no array range */
    vd.array_size = 1;
    CHECK_FAILS(kiln_create_srv(dev, tc, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_SUBRESOURCE);
    vd.dimension = KILN_SRV_DIMENSION_TEXTURE2D;
    vd.array_size = 2;
    CHECK_FAILS(kiln_create_srv(dev, t2, &vd, &sv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_SUBRESOURCE);
    vd.array_size = 0;
    vd.dimension = KILN_SRV_DIMENSION_TEXTURE2DARRAY; /* a cube's faces as an array: fine */
    CHECK_RESULT(kiln_create_srv(dev, tc, &vd, &sv), KILN_OK);
    kiln_destroy_srv(dev, sv);
    /* render targets of a 3D mip range over its W slices: mip 1 has 2 */
    kiln_rtv rv;
    CHECK_FAILS(kiln_create_rtv(dev, t3, &(kiln_rtv_desc){0, 1, 1, 2}, &rv), KILN_E_INVALID_ARG,
                KILN_LOG_VIEW_SUBRESOURCE);
    CHECK_RESULT(kiln_create_rtv(dev, t3, &(kiln_rtv_desc){0, 1, 1, 1}, &rv), KILN_OK);
    kiln_destroy_rtv(dev, rv);
    CHECK_RESULT(kiln_create_rtv(dev, t3, &(kiln_rtv_desc){0, 0, 0, 4}, &rv), KILN_OK);
    kiln_destroy_rtv(dev, rv);

    /* updates and copies */
    float data[4 * 4 * 4] = {0};
    kiln_box box = {0, 0, 0, 4, 4, 3};
    CHECK_FAILS(kiln_update_subresource(ctx, kiln_texture_resource(t3), 0, &box, data, 16, 32),
                KILN_E_INVALID_ARG, KILN_LOG_DEPTH_PITCH_INVALID);
    box.back = 5;
    CHECK_FAILS(kiln_update_subresource(ctx, kiln_texture_resource(t3), 0, &box, data, 16, 0),
                KILN_E_INVALID_ARG, KILN_LOG_BOX_INVALID);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, kiln_texture_resource(t2), 0, 0, 0, 0,
                                             kiln_texture_resource(t1), 0,
                                             &(kiln_box){0, 0, 0, 4, 1, 1}),
                KILN_E_INVALID_ARG, KILN_LOG_COPY_KIND_MISMATCH);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, kiln_texture_resource(t3), 0, 0, 0, 4,
                                             kiln_texture_resource(t3), 1, NULL),
                KILN_E_INVALID_ARG, KILN_LOG_BOX_INVALID);
    kiln_texture t3b;
    d3.depth = 2;
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &t3b), KILN_OK);
    CHECK_FAILS(kiln_copy_resource(ctx, kiln_texture_resource(t3b), kiln_texture_resource(t3)),
                KILN_E_INVALID_ARG, KILN_LOG_COPY_MISMATCH);
    kiln_destroy_texture(dev, t3b);
    kiln_destroy_texture(dev, t2);
    kiln_destroy_texture(dev, t1);
    kiln_destroy_texture(dev, tc);
    kiln_destroy_texture(dev, t3);
}

/* ---- 3D: init, update, copy, map ---- */

static float v3(uint32_t x, uint32_t y, uint32_t z) { return (float)(x + 10 * y + 100 * z); }

static void test_3d_data(void)
{
    enum { W = 5, H = 3, D = 4 };
    float init[D][H][W];
    for (uint32_t z = 0; z < D; z++)
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                init[z][y][x] = v3(x, y, z);
    /* mip 1 is 2x1x2 */
    float init1[4] = {-1, -2, -3, -4};
    kiln_subresource_data sd[2] = {{init, 0}, {init1, 0}};
    kiln_texture3d_desc d = {W, H, D, 2, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture t;
    CHECK_RESULT(kiln_create_texture3d(dev, &d, sd, &t), KILN_OK);
    float got[D * H * W];
    uint32_t dp = read_sub(t, 0, got, W, H, D);
    CHECK(dp >= W * 4 * H);
    CHECK(!memcmp(got, init, sizeof init));
    read_sub(t, 1, got, 2, 1, 2);
    CHECK(!memcmp(got, init1, sizeof init1));

    /* UpdateSubresource of a box 2 x 2 x 2 at (1, 1, 1) from rows 3 floats
     * apart and slices 8 floats apart */
    float up[16];
    for (int i = 0; i < 16; i++)
        up[i] = 1000.0f + (float)i;
    kiln_box b = {1, 1, 1, 3, 3, 3};
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(t), 0, &b, up, 12, 32),
                 KILN_OK);
    read_sub(t, 0, got, W, H, D);
    for (uint32_t z = 0; z < D; z++)
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++) {
                bool in = x >= 1 && x < 3 && y >= 1 && y < 3 && z >= 1 && z < 3;
                float want =
                    in ? 1000.0f + (float)((z - 1) * 8 + (y - 1) * 3 + (x - 1)) : v3(x, y, z);
                CHECK(got[(z * H + y) * W + x] == want);
            }

    /* CopySubresourceRegion: box x [0, 2) y [0, 1) z [2, 4) of mip 0 to
     * (3, 2, 0) of another 3D texture */
    kiln_texture t2;
    d.mip_levels = 1;
    CHECK_RESULT(kiln_create_texture3d(dev, &d, NULL, &t2), KILN_OK);
    kiln_box cb = {0, 0, 2, 2, 1, 4};
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(t2), 0, 3, 2, 0,
                                              kiln_texture_resource(t), 0, &cb),
                 KILN_OK);
    read_sub(t2, 0, got, W, H, D);
    for (uint32_t z = 0; z < D; z++)
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++) {
                bool in = x >= 3 && y == 2 && z < 2;
                CHECK(got[(z * H + y) * W + x] == (in ? v3(x - 3, 0, z + 2) : 0.0f));
            }
    /* within one subresource: non-overlapping slices copy, overlapping ones fail */
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(t2), 0, 0, 0, 0,
                                              kiln_texture_resource(t2), 0,
                                              &(kiln_box){3, 2, 1, 5, 3, 2}),
                 KILN_OK);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, kiln_texture_resource(t2), 0, 3, 2, 1,
                                             kiln_texture_resource(t2), 0,
                                             &(kiln_box){3, 2, 0, 5, 3, 2}),
                KILN_E_INVALID_ARG, KILN_LOG_COPY_OVERLAP);
    read_sub(t2, 0, got, W, H, D);
    CHECK(got[0] == v3(0, 0, 3) && got[1] == v3(1, 0, 3));

    /* a STAGING 3D texture written through Map, read back by a copy */
    kiln_texture3d_desc ds = {W, H, D, 1, F32, KILN_USAGE_STAGING, 0, 0};
    kiln_texture st;
    CHECK_RESULT(kiln_create_texture3d(dev, &ds, NULL, &st), KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(st), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    CHECK(m.row_pitch >= W * 4 && m.depth_pitch >= m.row_pitch * H);
    for (uint32_t z = 0; z < D; z++)
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                *(float *)(void *)((uint8_t *)m.data + z * m.depth_pitch + y * m.row_pitch +
                                   x * 4) = -v3(x, y, z);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(st), 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(t2), kiln_texture_resource(st)),
                 KILN_OK);
    read_sub(t2, 0, got, W, H, D);
    CHECK(got[(3 * H + 2) * W + 4] == -v3(4, 2, 3) && got[W] == -v3(0, 1, 0));
    kiln_destroy_texture(dev, st);
    kiln_destroy_texture(dev, t2);
    kiln_destroy_texture(dev, t);
}

/* ---- 1D arrays and cubes: subresources ---- */

static void test_1d_cube_data(void)
{
    /* a 1D array of 3 slices, 8 texels, 4 mips: subresource = mip + slice * 4 */
    kiln_texture1d_desc d1 = {8, 4, 3, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture t1;
    CHECK_RESULT(kiln_create_texture1d(dev, &d1, NULL, &t1), KILN_OK);
    float row[4] = {1, 2, 3, 4}, got[8 * 8];
    CHECK_RESULT(
        kiln_update_subresource(ctx, kiln_texture_resource(t1), 1 + 2 * 4, NULL, row, 0, 0),
        KILN_OK);
    read_sub(t1, 9, got, 4, 1, 1);
    CHECK(!memcmp(got, row, sizeof row));
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(t1), 0, 5, 0, 0,
                                              kiln_texture_resource(t1), 9,
                                              &(kiln_box){1, 0, 0, 4, 1, 1}),
                 KILN_OK);
    read_sub(t1, 0, got, 8, 1, 1);
    CHECK(got[4] == 0 && got[5] == 2 && got[6] == 3 && got[7] == 4);
    CHECK_FAILS(kiln_update_subresource(ctx, kiln_texture_resource(t1), 0,
                                        &(kiln_box){0, 0, 0, 8, 2, 1}, row, 0, 0),
                KILN_E_INVALID_ARG, KILN_LOG_BOX_INVALID); /* 1 texel high */
    kiln_destroy_texture(dev, t1);

    /* a cube's faces are its array slices: update face 3, copy it to face 5 */
    kiln_texture_cube_desc dc = {4, 2, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    float faces[6][2][16];
    kiln_subresource_data init[12];
    for (int f = 0; f < 6; f++)
        for (int m = 0; m < 2; m++) {
            for (int i = 0; i < 16; i++)
                faces[f][m][i] = (float)(f * 100 + m * 50 + i);
            init[m + 2 * f] = (kiln_subresource_data){faces[f][m], 0};
        }
    kiln_texture tc;
    CHECK_RESULT(kiln_create_texture_cube(dev, &dc, init, &tc), KILN_OK);
    kiln_texture2d_desc g;
    CHECK_RESULT(kiln_texture_get_desc(dev, tc, &g), KILN_OK);
    CHECK(g.width == 4 && g.height == 4 && g.array_size == 6 && g.mip_levels == 2);
    for (int f = 0; f < 6; f++) {
        read_sub(tc, (uint32_t)(1 + 2 * f), got, 2, 2, 1);
        CHECK(!memcmp(got, faces[f][1], 16));
    }
    float quad[4] = {-1, -2, -3, -4};
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(tc), 2 * 3,
                                         &(kiln_box){1, 1, 0, 3, 3, 1}, quad, 8, 0),
                 KILN_OK);
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(tc), 2 * 5, 0, 0, 0,
                                              kiln_texture_resource(tc), 2 * 3, NULL),
                 KILN_OK);
    read_sub(tc, 2 * 5, got, 4, 4, 1);
    CHECK(got[5] == -1 && got[6] == -2 && got[9] == -3 && got[10] == -4 && got[0] == 300 &&
          got[15] == 315);
    kiln_destroy_texture(dev, tc);
}

/* ---- generate_mips of each kind ---- */

static void test_generate_mips(void)
{
    /* 1D: pairs averaged, an odd size's last texel taken twice */
    kiln_texture1d_desc d1 = {5, 0, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    float a[5] = {1, 3, 5, 7, 9}, b[5] = {0, 0, 0, 0, 100};
    kiln_subresource_data i1[6] = {{a, 0}, {a, 0}, {a, 0}, {b, 0}, {b, 0}, {b, 0}};
    kiln_texture t1;
    CHECK_RESULT(kiln_create_texture1d(dev, &d1, i1, &t1), KILN_OK);
    kiln_srv s1;
    CHECK_RESULT(kiln_create_srv(dev, t1, NULL, &s1), KILN_OK);
    CHECK_RESULT(kiln_generate_mips(ctx, s1), KILN_OK);
    float got[64];
    read_sub(t1, 1, got, 2, 1, 1);
    CHECK(got[0] == 2 && got[1] == 6); /* (1+3)/2, (5+7)/2 (5 -> 2: texel 4 is dropped) */
    read_sub(t1, 2, got, 1, 1, 1);
    CHECK(got[0] == 4);
    read_sub(t1, 3 + 1, got, 2, 1, 1);
    CHECK(got[0] == 0 && got[1] == 0);
    kiln_destroy_srv(dev, s1);
    kiln_destroy_texture(dev, t1);

    /* cube: each face on its own (a 2x2 box per face) */
    kiln_texture_cube_desc dc = {2, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    float fv[6][4];
    kiln_subresource_data ic[12];
    for (int f = 0; f < 6; f++) {
        for (int i = 0; i < 4; i++)
            fv[f][i] = (float)(f * 8 + i * 2);
        ic[2 * f] = (kiln_subresource_data){fv[f], 0};
        ic[2 * f + 1] = (kiln_subresource_data){fv[f], 0};
    }
    kiln_texture tc;
    CHECK_RESULT(kiln_create_texture_cube(dev, &dc, ic, &tc), KILN_OK);
    kiln_srv sc;
    CHECK_RESULT(kiln_create_srv(dev, tc, NULL, &sc), KILN_OK);
    CHECK_RESULT(kiln_generate_mips(ctx, sc), KILN_OK);
    for (int f = 0; f < 6; f++) {
        read_sub(tc, (uint32_t)(2 * f + 1), got, 1, 1, 1);
        CHECK(got[0] == (float)(f * 8 + 3));
    }
    kiln_destroy_srv(dev, sc);
    kiln_destroy_texture(dev, tc);

    /* 3D: a 2x2x2 box, halving depth too; 4x2x3 -> 2x1x1 -> 1x1x1 */
    enum { W = 4, H = 2, D = 3 };
    float v[D][H][W];
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                v[z][y][x] = (float)(x + 10 * y + 100 * z * z);
    kiln_texture3d_desc d3 = {W, H, D, 0, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    float zero[64] = {0};
    kiln_subresource_data i3[3] = {{v, 0}, {zero, 0}, {zero, 0}};
    kiln_texture t3;
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, i3, &t3), KILN_OK);
    kiln_srv s3;
    CHECK_RESULT(kiln_create_srv(dev, t3, NULL, &s3), KILN_OK);
    CHECK_RESULT(kiln_generate_mips(ctx, s3), KILN_OK);
    read_sub(t3, 1, got, 2, 1, 1);
    /* texel (X, 0, 0) of mip 1 averages x in {2X, 2X+1}, y in {0, 1}, z in
     * {0, 1}: mean x + 10 * 0.5 + 100 * (0 + 1) / 2 */
    CHECK(got[0] == 0.5f + 5.0f + 50.0f);
    CHECK(got[1] == 2.5f + 5.0f + 50.0f);
    read_sub(t3, 2, got, 1, 1, 1);
    CHECK(got[0] == (55.5f + 57.5f) / 2.0f);
    kiln_destroy_srv(dev, s3);
    kiln_destroy_texture(dev, t3);
}

/* ---- render targets and depth-stencil views ---- */

static void test_targets(void)
{
    /* clears of W slices [1, 3) of a 3D mip 0, and of slice 0 of mip 1 */
    kiln_texture3d_desc d3 = {2, 2, 4, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    kiln_texture t3;
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &t3), KILN_OK);
    kiln_rtv r3, r3b;
    CHECK_RESULT(kiln_create_rtv(dev, t3, &(kiln_rtv_desc){0, 0, 1, 2}, &r3), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, t3, &(kiln_rtv_desc){0, 1, 1, 1}, &r3b), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, r3, (const float[4]){7, 0, 0, 0}), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, r3b, (const float[4]){9, 0, 0, 0}), KILN_OK);
    float got[64];
    read_sub(t3, 0, got, 2, 2, 4);
    for (int i = 0; i < 16; i++)
        CHECK(got[i] == (i >= 4 && i < 12 ? 7.0f : 0.0f));
    read_sub(t3, 1, got, 1, 1, 2);
    CHECK(got[0] == 0 && got[1] == 9);

    /* a draw into W slice 2 of mip 0: the constant buffer's color there only */
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    kiln_rtv r3c;
    CHECK_RESULT(kiln_create_rtv(dev, t3, &(kiln_rtv_desc){0, 0, 3, 1}, &r3c), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &r3c, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, 2, 2, 0, 1);
    ru_bind_pipe(ctx, &pipe);
    kiln_buffer cb = ru_cbuffer(dev, (const float[4]){5, 0, 0, 1}, 4);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    float tri[3 * 4] = {-1, -1, 0.5f, 1, -1, 3, 0.5f, 1, 3, -1, 0.5f, 1};
    ru_draw(dev, ctx, tri, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    read_sub(t3, 0, got, 2, 2, 4);
    for (int i = 0; i < 16; i++)
        CHECK(got[i] == (i >= 12 ? 5.0f : i >= 4 ? 7.0f : 0.0f));

    /* a cube face as a 2D array slice, and a 1D texture, as targets */
    kiln_texture_cube_desc dc = {2, 1, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    kiln_texture tc;
    CHECK_RESULT(kiln_create_texture_cube(dev, &dc, NULL, &tc), KILN_OK);
    kiln_rtv rc;
    CHECK_RESULT(kiln_create_rtv(dev, tc, &(kiln_rtv_desc){0, 0, 4, 1}, &rc), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rc, (kiln_dsv){0}), KILN_OK);
    ru_draw(dev, ctx, tri, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    for (uint32_t f = 0; f < 6; f++) {
        read_sub(tc, f, got, 2, 2, 1);
        CHECK(got[0] == (f == 4 ? 5.0f : 0.0f) && got[3] == got[0]);
    }
    kiln_texture1d_desc d1 = {2, 1, 1, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    kiln_texture t1;
    CHECK_RESULT(kiln_create_texture1d(dev, &d1, NULL, &t1), KILN_OK);
    kiln_rtv r1;
    CHECK_RESULT(kiln_create_rtv(dev, t1, NULL, &r1), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &r1, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, 2, 1, 0, 1);
    ru_draw(dev, ctx, tri, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    read_sub(t1, 0, got, 2, 1, 1);
    CHECK(got[0] == 5 && got[1] == 5);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);

    /* depth-stencil views of a 1D texture and of a cube face */
    kiln_texture1d_desc dz = {
        4, 1, 2, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0};
    kiln_texture tz;
    CHECK_RESULT(kiln_create_texture1d(dev, &dz, NULL, &tz), KILN_OK);
    kiln_dsv dv;
    CHECK_RESULT(kiln_create_dsv(dev, tz, &(kiln_dsv_desc){0, 0, 1, 1}, &dv), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, dv, KILN_CLEAR_DEPTH, 0.25f, 0), KILN_OK);
    read_sub(tz, 1, got, 4, 1, 1);
    CHECK(got[0] == 0.25f && got[3] == 0.25f);
    read_sub(tz, 0, got, 4, 1, 1);
    CHECK(got[0] == 0.0f);
    kiln_destroy_dsv(dev, dv);
    kiln_texture_cube_desc dcz = {
        2, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0};
    kiln_texture tcz;
    CHECK_RESULT(kiln_create_texture_cube(dev, &dcz, NULL, &tcz), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, tcz, &(kiln_dsv_desc){0, 0, 5, 1}, &dv), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, dv, KILN_CLEAR_DEPTH, 0.5f, 0), KILN_OK);
    read_sub(tcz, 5, got, 2, 2, 1);
    CHECK(got[0] == 0.5f && got[3] == 0.5f);
    kiln_destroy_dsv(dev, dv);
    kiln_destroy_texture(dev, tcz);
    kiln_destroy_texture(dev, tz);

    kiln_destroy_buffer(dev, cb);
    ru_free_pipe(dev, &pipe);
    kiln_destroy_rtv(dev, r1);
    kiln_destroy_rtv(dev, rc);
    kiln_destroy_rtv(dev, r3);
    kiln_destroy_rtv(dev, r3b);
    kiln_destroy_rtv(dev, r3c);
    kiln_destroy_texture(dev, t1);
    kiln_destroy_texture(dev, tc);
    kiln_destroy_texture(dev, t3);
}

/* ---- a pixel shader sampling a cube and a 3D texture; captured ---- */

enum { SW = 24, SH = 4 };

/* Pixel (px, py) of the 24x4 target: face px / 4 of the cube at texel (px
 * % 4, py), through the direction kiln.h's table gives; and the 3D texture
 * at texel (px % 4, py) of slice (4 + face % 4), which address_w WRAP
 * brings to face % 4. */
static void ps_kinds(kiln_ps_args *a)
{
    float c[3][16], u[16], v[16], w[16], cube[64], vol[64];
    for (int i = 0; i < 16; i++) {
        int px = a->x + i % 4, py = a->y + i / 4, face = px / 4 % 6;
        float d[3];
        cube_dir(face, ((float)(px % 4) + 0.5f) / 4.0f, ((float)(py % 4) + 0.5f) / 4.0f, 1.0f, d);
        for (int k = 0; k < 3; k++)
            c[k][i] = d[k];
        u[i] = ((float)(px % 4) + 0.5f) / 4.0f;
        v[i] = ((float)(py % 4) + 0.5f) / 4.0f;
        w[i] = (4.5f + (float)(face % 4)) / 4.0f;
    }
    kiln_ps_sample_uvw(a, 0, 0, c[0], c[1], c[2], cube);
    kiln_ps_sample_uvw(a, 1, 0, u, v, w, vol);
    for (int i = 0; i < 16; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = cube[i];
        KILN_PS_COLOR(a, 0, 1)[i] = vol[i];
        KILN_PS_COLOR(a, 0, 2)[i] = 0.0f;
        KILN_PS_COLOR(a, 0, 3)[i] = 1.0f;
    }
}

static void register_shaders(kiln_device *d, void *user)
{
    (void)user;
    kiln_vertex_shader_desc vd = {ru_vs_pass, 1, 0, NULL, RU_USER(1, 0)};
    kiln_pixel_shader_desc pd = {ps_kinds, 0, 1, 0, NULL, NULL, 0};
    CHECK_RESULT(kiln_capture_register_vertex_shader(d, "kinds.pass", &vd), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(d, "kinds.ps", &pd), KILN_OK);
}

/* Draws the scene (every new call on the way) and returns the target. */
static float *draw_scene(void)
{
    /* the cube: face f texel (x, y) = 100 f + 10 y + x */
    float faces[6][16];
    kiln_subresource_data ic[6];
    for (int f = 0; f < 6; f++) {
        for (int i = 0; i < 16; i++)
            faces[f][i] = (float)(f * 100 + (i / 4) * 10 + i % 4);
        ic[f] = (kiln_subresource_data){faces[f], 0};
    }
    kiln_texture_cube_desc dc = {4, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture tc;
    CHECK_RESULT(kiln_create_texture_cube(dev, &dc, ic, &tc), KILN_OK);
    /* the 3D texture: (x, y, z) = x + 10 y + 1000 z, written by one update
     * of slices 1..3 over zeros (UPDATE_SUBRESOURCE_3D) and a copy of
     * slice 0 from a 1-deep one */
    kiln_texture3d_desc d3 = {4, 4, 4, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture t3, t3s;
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &t3), KILN_OK);
    float vol[4][4][4];
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                vol[z][y][x] = (float)(x + 10 * y + 1000 * z);
    /* row 0 of slices 1..3 (a box one row high, three slices deep), then
     * the other rows */
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(t3), 0,
                                         &(kiln_box){0, 0, 1, 4, 1, 4}, vol[1], 16, 64),
                 KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(t3), 0,
                                         &(kiln_box){0, 1, 1, 4, 4, 4}, vol[1][1], 16, 64),
                 KILN_OK);
    kiln_texture3d_desc d3s = {4, 4, 1, 1, F32, KILN_USAGE_DEFAULT, 0, 0};
    kiln_subresource_data is = {vol[0], 0};
    CHECK_RESULT(kiln_create_texture3d(dev, &d3s, &is, &t3s), KILN_OK);
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(t3), 0, 0, 0, 0,
                                              kiln_texture_resource(t3s), 0, NULL),
                 KILN_OK);
    kiln_texture3d_desc got;
    CHECK_RESULT(kiln_texture3d_get_desc(dev, t3, &got), KILN_OK);
    /* 3D maps in the capture: a DYNAMIC one written after WRITE_DISCARD
     * (changed ranges of all its slices) and a STAGING one (every row of
     * every slice), both copied into a DEFAULT one and read back */
    kiln_texture3d_desc dyn = {3, 2, 2, 1, F32, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture3d_desc stg = {3, 2, 2, 1, F32, KILN_USAGE_STAGING, 0, 0};
    kiln_texture3d_desc def = {3, 2, 2, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture td, ts, tdef;
    CHECK_RESULT(kiln_create_texture3d(dev, &dyn, NULL, &td), KILN_OK);
    CHECK_RESULT(kiln_create_texture3d(dev, &stg, NULL, &ts), KILN_OK);
    CHECK_RESULT(kiln_create_texture3d(dev, &def, NULL, &tdef), KILN_OK);
    kiln_texture both[2] = {td, ts};
    for (int k = 0; k < 2; k++) {
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(both[k]), 0,
                              k ? KILN_MAP_WRITE : KILN_MAP_WRITE_DISCARD, 0, &m),
                     KILN_OK);
        for (uint32_t z = 0; m.data && z < 2; z++)
            for (uint32_t y = 0; y < 2; y++)
                for (uint32_t x = 0; x < 3; x++)
                    if (k || (x + y + z) % 2) /* DYNAMIC: every other texel */
                        *(float *)(void *)((uint8_t *)m.data + z * m.depth_pitch + y * m.row_pitch +
                                           x * 4) = (float)(k * 100 + x + 3 * y + 6 * z + 1);
        CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(both[k]), 0), KILN_OK);
        CHECK_RESULT(
            kiln_copy_resource(ctx, kiln_texture_resource(tdef), kiln_texture_resource(both[k])),
            KILN_OK);
        float back[12];
        read_sub(tdef, 0, back, 3, 2, 2);
        for (int i = 0; i < 12; i++)
            CHECK(back[i] ==
                  (k || (i % 3 + i / 3 % 2 + i / 6) % 2 ? (float)(k * 100 + i + 1) : 0.0f));
    }
    kiln_destroy_texture(dev, td);
    kiln_destroy_texture(dev, ts);
    kiln_destroy_texture(dev, tdef);
    /* a 1D texture too (CREATE_TEXTURE1D), viewed explicitly */
    kiln_texture1d_desc d1 = {4, 1, 2, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture t1;
    CHECK_RESULT(kiln_create_texture1d(dev, &d1, NULL, &t1), KILN_OK);
    kiln_srv views[2], v1;
    kiln_srv_desc vd = {0};
    vd.dimension = KILN_SRV_DIMENSION_TEXTURE1DARRAY;
    CHECK_RESULT(kiln_create_srv(dev, t1, &vd, &v1), KILN_OK);
    vd.dimension = KILN_SRV_DIMENSION_TEXTURECUBE;
    CHECK_RESULT(kiln_create_srv(dev, tc, &vd, &views[0]), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, t3, NULL, &views[1]), KILN_OK);
    kiln_sampler_desc sd = {0};
    sd.min_filter = sd.mag_filter = sd.mip_filter = KILN_FILTER_POINT;
    sd.address_w = KILN_ADDRESS_WRAP;
    kiln_sampler smp;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp), KILN_OK);

    ru_tex rt = ru_rt(dev, SW, SH, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_vertex_shader_desc vsd = {ru_vs_pass, 1, 0, NULL, RU_USER(1, 0)};
    kiln_pixel_shader_desc psd = {ps_kinds, 0, 1, 0, NULL, NULL, 0};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vsd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &psd, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 1);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 2, views), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &smp), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    float tri[3 * 4] = {-1, -1, 0.5f, 1, -1, 3, 0.5f, 1, 3, -1, 0.5f, 1};
    ru_draw(dev, ctx, tri, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &rt);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 2, (const kiln_srv[2]){{0}, {0}}), KILN_OK);

    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_destroy_sampler(dev, smp);
    kiln_destroy_srv(dev, views[0]);
    kiln_destroy_srv(dev, views[1]);
    kiln_destroy_srv(dev, v1);
    ru_free_tex(dev, &rt);
    kiln_destroy_texture(dev, t1);
    kiln_destroy_texture(dev, t3s);
    kiln_destroy_texture(dev, t3);
    kiln_destroy_texture(dev, tc);
    return img;
}

static int scene_ok(const float *img)
{
    int ok = img != NULL;
    for (int py = 0; ok && py < SH; py++)
        for (int px = 0; px < SW; px++) {
            int face = px / 4;
            const float *p = img + 4 * (py * SW + px);
            ok &= p[0] == (float)(face * 100 + py * 10 + px % 4);
            ok &= p[1] == (float)(px % 4 + 10 * py + 1000 * (face % 4));
        }
    return ok;
}

static void test_draw_and_capture(void)
{
    float *live = NULL;
    for (int m = 0; m < 2; m++) {
        dev = th_device(m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 2);
        ctx = kiln_device_immediate_context(dev);
        register_shaders(dev, NULL);
        if (m == 0)
            CHECK_RESULT(kiln_capture_begin(dev, "kinds.kcap"), KILN_OK);
        float *img = draw_scene();
        CHECK(scene_ok(img));
        if (m == 0) {
            CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
            live = img;
        } else {
            CHECK(img && live && !memcmp(img, live, (size_t)SW * SH * 16));
            free(img);
        }
        kiln_device_destroy(dev);
    }
    size_t len;
    uint8_t *bytes = cu_read("kinds.kcap", &len);
    CHECK(bytes != NULL);
    static const kcap_op ops[] = {KCAP_OP_CREATE_TEXTURE1D,     KCAP_OP_CREATE_TEXTURE3D,
                                  KCAP_OP_CREATE_TEXTURE_CUBE,  KCAP_OP_CREATE_SRV_DIM,
                                  KCAP_OP_CREATE_SAMPLER_W,     KCAP_OP_TEXTURE3D_GET_DESC,
                                  KCAP_OP_UPDATE_SUBRESOURCE_3D};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        CHECK(cu_count_op(bytes, len, ops[k]) >= (ops[k] == KCAP_OP_UPDATE_SUBRESOURCE_3D ? 2 : 1));
        CHECK(ops[k] >= 102 && ops[k] <= 114);
    }
    kcap_header h;
    kcap_error err;
    CHECK(kcap_decode_header(bytes, len, &h, &err) && h.major == 1 && h.minor == KCAP_VERSION_MINOR);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 2,
                               register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *img = cu_target(&out, 0);
        CHECK(img && live && img->width == SW && img->height == SH);
        CHECK(img && live && !memcmp(img->pixels, live, (size_t)SW * SH * 16));
        cu_free(&out);
    }
    free(bytes);
    free(live);
}

/* ---- async equals serial on the new kinds ---- */

/* Random updates (boxes of any depth), copies between subresources of one
 * kind, clears of render-target planes (3D W slices, cube faces, 1D
 * slices) and generate_mips on a 3D texture, a cube and a 1D array; every
 * subresource's final bytes, read through the same calls, must not depend
 * on the execution mode or the number of workers. */
enum { AS_OPS = 120 };

typedef struct as_tex {
    kiln_texture t;
    uint32_t w, h, d, mips, layers;
} as_tex;

static void as_dims(const as_tex *x, uint32_t m, uint32_t *w, uint32_t *h, uint32_t *d)
{
    *w = x->w >> m ? x->w >> m : 1;
    *h = x->h >> m ? x->h >> m : 1;
    *d = x->d >> m ? x->d >> m : 1;
}

static float *as_run(kiln_exec_mode mode, uint32_t threads, size_t *nfloats)
{
    dev = th_device(mode, threads);
    ctx = kiln_device_immediate_context(dev);
    as_tex x[3] = {{{0}, 5, 4, 3, 2, 1}, {{0}, 4, 4, 1, 2, 6}, {{0}, 8, 1, 1, 3, 2}};
    kiln_texture3d_desc d3 = {5, 4, 3, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    kiln_texture_cube_desc dc = {4, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    kiln_texture1d_desc d1 = {8, 3, 2, F32, KILN_USAGE_DEFAULT, RT_SR, 0};
    CHECK_RESULT(kiln_create_texture3d(dev, &d3, NULL, &x[0].t), KILN_OK);
    CHECK_RESULT(kiln_create_texture_cube(dev, &dc, NULL, &x[1].t), KILN_OK);
    CHECK_RESULT(kiln_create_texture1d(dev, &d1, NULL, &x[2].t), KILN_OK);
    kiln_srv srv[3];
    for (int k = 0; k < 3; k++)
        CHECK_RESULT(kiln_create_srv(dev, x[k].t, NULL, &srv[k]), KILN_OK);
    th_rng rng = {0x9e3779b97f4a7c15ull};
    float data[5 * 4 * 3];
    for (int op = 0; op < AS_OPS; op++) {
        as_tex *a = &x[th_below(&rng, 3)];
        uint32_t sub = th_below(&rng, a->mips * a->layers), m = sub % a->mips, w, h, d;
        as_dims(a, m, &w, &h, &d);
        kiln_box b;
        b.left = th_below(&rng, w);
        b.right = b.left + 1 + th_below(&rng, w - b.left);
        b.top = th_below(&rng, h);
        b.bottom = b.top + 1 + th_below(&rng, h - b.top);
        b.front = th_below(&rng, d);
        b.back = b.front + 1 + th_below(&rng, d - b.front);
        switch (th_below(&rng, 4)) {
        case 0: { /* update the box */
            for (int i = 0; i < 60; i++)
                data[i] = (float)(op * 100 + i);
            CHECK_RESULT(
                kiln_update_subresource(ctx, kiln_texture_resource(a->t), sub, &b, data, 0, 0),
                KILN_OK);
            break;
        }
        case 1: { /* copy the box to the origin of another subresource at least as large:
                   * another slice of the mip, or (3D) mip 0 from mip 1 */
            uint32_t dsub = a->layers > 1 ? m + th_below(&rng, a->layers) * a->mips : 0;
            if (dsub == sub)
                break;
            CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(a->t), dsub, 0, 0,
                                                      0, kiln_texture_resource(a->t), sub, &b),
                         KILN_OK);
            break;
        }
        case 2: { /* clear render-target planes of mip m */
            uint32_t planes = a->d > 1 ? d : a->layers, first = th_below(&rng, planes);
            kiln_rtv rv;
            CHECK_RESULT(
                kiln_create_rtv(dev, a->t,
                                &(kiln_rtv_desc){0, m, first, 1 + th_below(&rng, planes - first)},
                                &rv),
                KILN_OK);
            CHECK_RESULT(kiln_clear_rtv(ctx, rv, (const float[4]){(float)op, 0, 0, 0}), KILN_OK);
            kiln_destroy_rtv(dev, rv);
            break;
        }
        default:
            CHECK_RESULT(kiln_generate_mips(ctx, srv[a - x]), KILN_OK);
            break;
        }
    }
    size_t total = 0, cap = 4096;
    float *all = calloc(cap, sizeof(float));
    for (int k = 0; k < 3; k++)
        for (uint32_t sub = 0; sub < x[k].mips * x[k].layers; sub++) {
            uint32_t w, h, d;
            as_dims(&x[k], sub % x[k].mips, &w, &h, &d);
            CHECK(total + (size_t)w * h * d <= cap);
            read_sub(x[k].t, sub, all + total, w, h, d);
            total += (size_t)w * h * d;
        }
    for (int k = 0; k < 3; k++) {
        kiln_destroy_srv(dev, srv[k]);
        kiln_destroy_texture(dev, x[k].t);
    }
    kiln_device_destroy(dev);
    *nfloats = total;
    return all;
}

static void test_async_equals_serial(void)
{
    size_t n0, n1, n4;
    float *serial = as_run(KILN_EXEC_SERIAL, 0, &n0);
    float *one = as_run(KILN_EXEC_ASYNC, 1, &n1);
    float *four = as_run(KILN_EXEC_ASYNC, 4, &n4);
    CHECK(n0 == n1 && n0 == n4);
    CHECK(!memcmp(serial, one, n0 * sizeof(float)));
    CHECK(!memcmp(serial, four, n0 * sizeof(float)));
    size_t nonzero = 0;
    for (size_t i = 0; i < n0; i++)
        nonzero += serial[i] != 0.0f;
    CHECK(nonzero > n0 / 2); /* the sequence wrote most texels */
    free(serial);
    free(one);
    free(four);
}

/* ---- osmesa refuses the kinds at call time ---- */

static void test_osmesa(void)
{
    kiln_device *od = th_osmesa_device();
    if (!od)
        return;
    kiln_texture t = {0};
    kiln_texture1d_desc d1 = {4, 1, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture_cube_desc dc = {4, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    kiln_texture3d_desc d3 = {4, 4, 4, 1, F32, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0};
    CHECK_FAILS(kiln_create_texture1d(od, &d1, NULL, &t), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    CHECK_FAILS(kiln_create_texture_cube(od, &dc, NULL, &t), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    CHECK_FAILS(kiln_create_texture3d(od, &d3, NULL, &t), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    CHECK(t.id == 0);
    kiln_device_destroy(od);
}

int main(void)
{
    dev = th_device(KILN_EXEC_ASYNC, 2);
    ctx = kiln_device_immediate_context(dev);
    test_validation();
    test_row_pitch();
    test_3d_data();
    test_1d_cube_data();
    test_generate_mips();
    test_targets();
    kiln_device_destroy(dev);
    test_draw_and_capture();
    test_async_equals_serial();
    test_osmesa();
    return th_exit();
}
