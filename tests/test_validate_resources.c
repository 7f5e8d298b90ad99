/*
 * Resource and view creation rules (kiln.h "Resources", "Views", "Handles"):
 * every usage / bind / size / format / init-data rule of buffers and 2D
 * textures, view bind / format / subresource rules, and handle validation
 * (0, stale, wrong type, double destroy, views of a destroyed texture) for
 * every device-level call that takes a handle. Each failure returns its
 * code, logs once with its id, writes zeros to the out-param and queues
 * nothing; valid creations succeed and report the resolved desc.
 */
#include "validate_util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static kiln_device *dev;
static kiln_context *ctx;

#define GARBAGE 0xa5a5a5a5u

/* ---- buffer creation ---- */

/* create_buffer fails with code/id; *out stays {0}. */
#define BUF_FAILS(desc, init, code, lid)                                                           \
    do {                                                                                           \
        kiln_buffer out_ = {GARBAGE};                                                              \
        VFAILS(dev, kiln_create_buffer(dev, desc, init, &out_), code, lid);                        \
        th_check(out_.id == 0, "failed kiln_create_buffer writes {0}", __FILE__, __LINE__);        \
    } while (0)

#define TEX_FAILS(desc, init, code, lid)                                                           \
    do {                                                                                           \
        kiln_texture out_ = {GARBAGE};                                                             \
        VFAILS(dev, kiln_create_texture2d(dev, desc, init, &out_), code, lid);                     \
        th_check(out_.id == 0, "failed kiln_create_texture2d writes {0}", __FILE__, __LINE__);     \
    } while (0)

#define TEX_FAILS2(desc, init, code, id1, id2)                                                     \
    do {                                                                                           \
        kiln_texture out_ = {GARBAGE};                                                             \
        VFAILS2(dev, kiln_create_texture2d(dev, desc, init, &out_), code, id1, id2);               \
        th_check(out_.id == 0, "failed kiln_create_texture2d writes {0}", __FILE__, __LINE__);     \
    } while (0)

static kiln_buffer buf_ok(kiln_buffer_desc d, const kiln_subresource_data *init, int line)
{
    kiln_buffer b = {0};
    th_log_reset();
    kiln_result r = kiln_create_buffer(dev, &d, init, &b);
    th_check(r == KILN_OK && b.id != 0 && th_log_count() == 0, "kiln_create_buffer succeeds",
             __FILE__, line);
    if (r != KILN_OK)
        fprintf(stderr, "    got %s (%s)\n", kiln_result_string(r),
                kiln_log_id_string(th_log_last()));
    return b;
}

static kiln_texture tex_ok(kiln_texture2d_desc d, const kiln_subresource_data *init, int line)
{
    kiln_texture t = {0};
    th_log_reset();
    kiln_result r = kiln_create_texture2d(dev, &d, init, &t);
    th_check(r == KILN_OK && t.id != 0 && th_log_count() == 0, "kiln_create_texture2d succeeds",
             __FILE__, line);
    if (r != KILN_OK)
        fprintf(stderr, "    got %s (%s)\n", kiln_result_string(r),
                kiln_log_id_string(th_log_last()));
    return t;
}

static void test_buffer_args(void)
{
    kiln_buffer_desc d = {64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    BUF_FAILS(NULL, NULL, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    VFAILS(dev, kiln_create_buffer(dev, &d, NULL, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    kiln_buffer out = {GARBAGE};
    CHECK_RESULT(kiln_create_buffer(NULL, &d, NULL, &out), KILN_E_INVALID_ARG);
    CHECK_EQ_INT(out.id, 0);

    /* Sizes. */
    d.size = 0;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BUFFER_SIZE_ZERO);
    d.size = (1u << 30) + 1;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BUFFER_TOO_LARGE);
    d.size = UINT32_MAX;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BUFFER_TOO_LARGE);

    /* Enum range. */
    d = (kiln_buffer_desc){64, (kiln_usage)4, 0, 0};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM);
    d.usage = (kiln_usage)-1;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM);

    /* Bind flags a buffer cannot have. */
    d = (kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);
    d.bind_flags = KILN_BIND_DEPTH_STENCIL;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);
    d.bind_flags = KILN_BIND_VERTEX_BUFFER | KILN_BIND_RENDER_TARGET;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);
    d.bind_flags = 1u << 7; /* unused bit */
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);
    d.bind_flags = 1u << 31;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);

    /* Constant buffers. */
    d = (kiln_buffer_desc){15, KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, 0};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_SIZE);
    d.size = 24;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_SIZE);
    d.size = 65536 + 16;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_SIZE);
    d.size = 1u << 20;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_SIZE);
    d.size = 64;
    d.bind_flags = KILN_BIND_CONSTANT_BUFFER | KILN_BIND_VERTEX_BUFFER;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_BIND);
    d.bind_flags = KILN_BIND_CONSTANT_BUFFER | KILN_BIND_INDEX_BUFFER;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_BIND);

    /* Usage rules. */
    d = (kiln_buffer_desc){64, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, 0};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_IMMUTABLE_NEEDS_DATA);
    d = (kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, KILN_CPU_ACCESS_WRITE};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d.cpu_access = KILN_CPU_ACCESS_READ;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    unsigned char bytes[64];
    vu_pattern(bytes, sizeof bytes, 1);
    kiln_subresource_data init = {bytes, 0};
    d = (kiln_buffer_desc){64, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, KILN_CPU_ACCESS_READ};
    BUF_FAILS(&d, &init, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d = (kiln_buffer_desc){64, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, KILN_CPU_ACCESS_READ};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d.cpu_access = KILN_CPU_ACCESS_READ | KILN_CPU_ACCESS_WRITE;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    /* CPU access bits that name nothing: USAGE_CPU_ACCESS ("not allowed")
     * or DESC_INVALID_ENUM; kiln.h does not say which. */
    d = (kiln_buffer_desc){64, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ | (1u << 18)};
    {
        kiln_buffer o = {GARBAGE};
        VFAILS2(dev, kiln_create_buffer(dev, &d, NULL, &o), KILN_E_INVALID_ARG,
                KILN_LOG_USAGE_CPU_ACCESS, KILN_LOG_DESC_INVALID_ENUM);
        CHECK_EQ_INT(o.id, 0);
        d.cpu_access = 1u;
        VFAILS2(dev, kiln_create_buffer(dev, &d, NULL, &o), KILN_E_INVALID_ARG,
                KILN_LOG_USAGE_CPU_ACCESS, KILN_LOG_DESC_INVALID_ENUM);
        CHECK_EQ_INT(o.id, 0);
    }
    d = (kiln_buffer_desc){64, KILN_USAGE_STAGING, KILN_BIND_VERTEX_BUFFER, 0};
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d.bind_flags = KILN_BIND_CONSTANT_BUFFER;
    BUF_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);

    /* Initial data with a NULL pointer. */
    d = (kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    kiln_subresource_data bad = {NULL, 0};
    BUF_FAILS(&d, &bad, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
    d.usage = KILN_USAGE_IMMUTABLE;
    BUF_FAILS(&d, &bad, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
}

static void test_buffer_valid(void)
{
    unsigned char bytes[256], zeros[256] = {0};
    vu_pattern(bytes, sizeof bytes, 2);
    kiln_subresource_data init = {bytes, 3}; /* row_pitch is ignored for buffers */

    kiln_buffer b[12];
    int n = 0;
    b[n++] = buf_ok((kiln_buffer_desc){1, KILN_USAGE_DEFAULT, 0, 0}, NULL, __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_DEFAULT,
                                       KILN_BIND_VERTEX_BUFFER | KILN_BIND_INDEX_BUFFER, 0},
                    &init, __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, 0}, &init,
                    __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, 0}, &init,
                    __LINE__);
    b[n++] = buf_ok(
        (kiln_buffer_desc){256, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, KILN_CPU_ACCESS_WRITE},
        NULL, __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_STAGING, 0, 0}, &init, __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ}, NULL,
                    __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_WRITE}, NULL,
                    __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){16, KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, 0}, NULL,
                    __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){65536, KILN_USAGE_DYNAMIC, KILN_BIND_CONSTANT_BUFFER,
                                       KILN_CPU_ACCESS_WRITE},
                    NULL, __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){256, KILN_USAGE_IMMUTABLE, KILN_BIND_CONSTANT_BUFFER, 0},
                    &init, __LINE__);
    b[n++] = buf_ok((kiln_buffer_desc){3, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0}, NULL,
                    __LINE__);

    /* Desc round trip (size, usage, bind). */
    kiln_buffer_desc got;
    VOK(kiln_buffer_get_desc(dev, b[1], &got));
    CHECK_EQ_INT(got.size, 256);
    CHECK_EQ_INT(got.usage, KILN_USAGE_DEFAULT);
    CHECK_EQ_INT(got.bind_flags, KILN_BIND_VERTEX_BUFFER | KILN_BIND_INDEX_BUFFER);
    VOK(kiln_buffer_get_desc(dev, b[9], &got));
    CHECK_EQ_INT(got.size, 65536);
    CHECK_EQ_INT(got.usage, KILN_USAGE_DYNAMIC);
    CHECK_EQ_INT(got.bind_flags, KILN_BIND_CONSTANT_BUFFER);
    CHECK_EQ_INT(got.cpu_access, KILN_CPU_ACCESS_WRITE);

    /* Contents: initial data copied, otherwise zero. */
    CHECK(vu_buffer_equals(dev, b[1], bytes));
    CHECK(vu_buffer_equals(dev, b[2], bytes));
    CHECK(vu_buffer_equals(dev, b[3], bytes));
    CHECK(vu_buffer_equals(dev, b[4], zeros));
    CHECK(vu_buffer_equals(dev, b[5], bytes));
    CHECK(vu_buffer_equals(dev, b[6], zeros));
    CHECK(vu_buffer_equals(dev, b[10], bytes));
    for (int i = 0; i < n; i++)
        VOK(kiln_destroy_buffer(dev, b[i]));
}

/* ---- texture creation ---- */

static kiln_texture2d_desc tdesc(uint32_t w, uint32_t h, uint32_t mips, uint32_t arr, kiln_format f,
                                 kiln_usage u, uint32_t bind, uint32_t cpu)
{
    kiln_texture2d_desc d = {w, h, mips, arr, f, u, bind, cpu, 0};
    return d;
}

static void test_texture_args(void)
{
    const kiln_format RGBA = KILN_FORMAT_R8G8B8A8_UNORM;
    kiln_texture2d_desc d =
        tdesc(8, 8, 1, 1, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(NULL, NULL, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    VFAILS(dev, kiln_create_texture2d(dev, &d, NULL, NULL), KILN_E_INVALID_ARG,
           KILN_LOG_NULL_POINTER);
    kiln_texture out = {GARBAGE};
    CHECK_RESULT(kiln_create_texture2d(NULL, &d, NULL, &out), KILN_E_INVALID_ARG);
    CHECK_EQ_INT(out.id, 0);

    /* Sizes. */
    uint32_t bad_dims[][2] = {{0, 8}, {8, 0}, {0, 0}, {8193, 1}, {1, 8193}, {UINT32_MAX, 1}};
    for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0]; i++) {
        d = tdesc(bad_dims[i][0], bad_dims[i][1], 1, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0);
        TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SIZE_INVALID);
    }
    /* Mips beyond the full chain (16x16: 5, 17x3: 5, 1x1: 1, 8192x1: 14). */
    d = tdesc(16, 16, 6, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_MIPS_INVALID);
    d = tdesc(17, 3, 6, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_MIPS_INVALID);
    d = tdesc(3, 17, 6, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_MIPS_INVALID);
    d = tdesc(1, 1, 2, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_MIPS_INVALID);
    d = tdesc(8192, 1, 15, 1, KILN_FORMAT_R8_UNORM, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_MIPS_INVALID);
    d = tdesc(4, 4, UINT32_MAX, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_MIPS_INVALID);
    /* Array size. */
    d = tdesc(4, 4, 1, 513, RGBA, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_ARRAY_INVALID);
    d.array_size = UINT32_MAX;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_ARRAY_INVALID);

    /* Storage over 4 GiB (each dimension in range): 8192x8192x16 bytes is
     * 1 GiB a slice. Rejected before anything is allocated. */
    d = tdesc(8192, 8192, 1, 5, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_TOO_LARGE);
    d = tdesc(8192, 8192, 0, 512, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_STAGING, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_TOO_LARGE);
    d = tdesc(8192, 8192, 0, 512, KILN_FORMAT_R8_UNORM, KILN_USAGE_DEFAULT,
              KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_TOO_LARGE);

    /* Formats. */
    d = tdesc(4, 4, 1, 1, KILN_FORMAT_UNKNOWN, KILN_USAGE_DEFAULT, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_INVALID);
    /* Out of the enum: FORMAT_INVALID ("format is unknown") or
     * DESC_INVALID_ENUM ("outside its enum"); kiln.h allows both readings. */
    d.format = KILN_FORMAT_COUNT;
    TEX_FAILS2(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_INVALID, KILN_LOG_DESC_INVALID_ENUM);
    d.format = (kiln_format)1000;
    TEX_FAILS2(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_INVALID, KILN_LOG_DESC_INVALID_ENUM);
    d = tdesc(4, 4, 1, 1, RGBA, (kiln_usage)4, 0, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM);

    /* Format vs bind. */
    d = tdesc(4, 4, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_BIND_MISMATCH);
    d.format = KILN_FORMAT_D24_UNORM_S8_UINT;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_BIND_MISMATCH);
    d.bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_DEPTH_STENCIL;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_BIND_MISMATCH);
    kiln_format colors[] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM,
                            KILN_FORMAT_R8_UNORM,       KILN_FORMAT_R32_FLOAT,
                            KILN_FORMAT_R32G32_FLOAT,   KILN_FORMAT_R32G32B32A32_FLOAT};
    for (size_t i = 0; i < sizeof colors / sizeof colors[0]; i++) {
        d = tdesc(4, 4, 1, 1, colors[i], KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0);
        TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_FORMAT_BIND_MISMATCH);
    }
    /* D24S8 as a shader resource is valid D3D10 that kiln does not do. The
     * id is not named by kiln.h; FORMAT_BIND_MISMATCH ("cannot be bound this
     * way") is the one that fits. */
    d = tdesc(4, 4, 1, 1, KILN_FORMAT_D24_UNORM_S8_UINT, KILN_USAGE_DEFAULT,
              KILN_BIND_SHADER_RESOURCE | KILN_BIND_DEPTH_STENCIL, 0);
    TEX_FAILS(&d, NULL, KILN_E_UNSUPPORTED, KILN_LOG_FORMAT_BIND_MISMATCH);
    d.bind_flags = KILN_BIND_SHADER_RESOURCE;
    TEX_FAILS(&d, NULL, KILN_E_UNSUPPORTED, KILN_LOG_FORMAT_BIND_MISMATCH);

    /* Bind flags a texture cannot have. */
    uint32_t bad_binds[] = {KILN_BIND_VERTEX_BUFFER,
                            KILN_BIND_INDEX_BUFFER,
                            KILN_BIND_CONSTANT_BUFFER,
                            KILN_BIND_SHADER_RESOURCE | KILN_BIND_VERTEX_BUFFER,
                            1u << 4,
                            1u << 7,
                            1u << 31};
    for (size_t i = 0; i < sizeof bad_binds / sizeof bad_binds[0]; i++) {
        d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_DEFAULT, bad_binds[i], 0);
        TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);
    }

    /* Usage rules. */
    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_IMMUTABLE, KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_IMMUTABLE_NEEDS_DATA);
    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE,
              KILN_CPU_ACCESS_WRITE);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d.cpu_access = KILN_CPU_ACCESS_READ;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    unsigned char texels[4 * 4 * 4];
    vu_pattern(texels, sizeof texels, 4);
    kiln_subresource_data init = {texels, 0};
    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_IMMUTABLE, KILN_BIND_SHADER_RESOURCE,
              KILN_CPU_ACCESS_READ);
    TEX_FAILS(&d, &init, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d.cpu_access = KILN_CPU_ACCESS_WRITE;
    TEX_FAILS(&d, &init, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);

    /* IMMUTABLE is "never written again": no render target or depth-stencil. */
    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_IMMUTABLE,
              KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(&d, &init, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d = tdesc(4, 4, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_IMMUTABLE, KILN_BIND_DEPTH_STENCIL, 0);
    TEX_FAILS(&d, &init, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);

    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE,
              KILN_CPU_ACCESS_READ);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d.cpu_access = KILN_CPU_ACCESS_READ | KILN_CPU_ACCESS_WRITE;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_CPU_ACCESS);
    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_RENDER_TARGET, KILN_CPU_ACCESS_WRITE);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d.bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d = tdesc(4, 4, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DYNAMIC, KILN_BIND_DEPTH_STENCIL, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d = tdesc(4, 4, 2, 1, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_DYNAMIC_TEXTURE);
    d = tdesc(4, 4, 0, 1, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE, 0);
    /* mip_levels 0 is the full chain: 3 levels for 4x4. */
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_DYNAMIC_TEXTURE);
    d = tdesc(4, 4, 1, 2, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_DYNAMIC_TEXTURE);

    d = tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_STAGING, KILN_BIND_SHADER_RESOURCE, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d.bind_flags = KILN_BIND_RENDER_TARGET;
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    d = tdesc(4, 4, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_STAGING, KILN_BIND_DEPTH_STENCIL, 0);
    TEX_FAILS(&d, NULL, KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);

    /* Initial data: NULL pointer in any entry, row pitch below one row. */
    unsigned char mips[3][4 * 4 * 4];
    for (int i = 0; i < 3; i++)
        vu_pattern(mips[i], sizeof mips[i], 10 + (uint32_t)i);
    kiln_subresource_data chain[3] = {{mips[0], 16}, {mips[1], 8}, {mips[2], 4}};
    d = tdesc(4, 4, 0, 1, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0);
    chain[1].data = NULL;
    TEX_FAILS(&d, chain, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
    chain[1].data = mips[1];
    chain[2].row_pitch = 3; /* mip 2 is 1x1: one row of 4 bytes */
    TEX_FAILS(&d, chain, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
    chain[2].row_pitch = 4;
    chain[0].row_pitch = 15;
    TEX_FAILS(&d, chain, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
    d.usage = KILN_USAGE_IMMUTABLE;
    TEX_FAILS(&d, chain, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
    chain[0].row_pitch = 16;
    chain[0].data = NULL;
    TEX_FAILS(&d, chain, KILN_E_INVALID_ARG, KILN_LOG_INIT_DATA_INVALID);
}

static void test_texture_valid(void)
{
    const kiln_format RGBA = KILN_FORMAT_R8G8B8A8_UNORM;
    kiln_texture2d_desc got;
    struct {
        kiln_texture2d_desc d;
        uint32_t mips, arr;
    } cases[] = {
        {tdesc(16, 16, 0, 0, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0), 5, 1},
        {tdesc(17, 3, 0, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0), 5, 1},
        {tdesc(3, 17, 0, 2, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0), 5, 2},
        {tdesc(1, 1, 0, 0, RGBA, KILN_USAGE_DEFAULT, 0, 0), 1, 1},
        {tdesc(8192, 1, 0, 1, KILN_FORMAT_R8_UNORM, KILN_USAGE_DEFAULT, 0, 0), 14, 1},
        {tdesc(1, 8192, 14, 1, KILN_FORMAT_R8_UNORM, KILN_USAGE_STAGING, 0, 0), 14, 1},
        {tdesc(16, 16, 5, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0), 5, 1},
        {tdesc(16, 16, 2, 3, RGBA, KILN_USAGE_DEFAULT, 0, 0), 2, 3},
        {tdesc(1, 1, 1, 512, KILN_FORMAT_R8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE,
               0),
         1, 512},
        {tdesc(4, 4, 1, 1, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE, 0), 1, 1},
        {tdesc(1, 1, 0, 0, RGBA, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE,
               KILN_CPU_ACCESS_WRITE),
         1, 1},
        {tdesc(4, 4, 0, 2, RGBA, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ), 3, 2},
        {tdesc(4, 4, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT,
               KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE, 0),
         1, 1},
        {tdesc(4, 4, 1, 1, KILN_FORMAT_D24_UNORM_S8_UINT, KILN_USAGE_DEFAULT,
               KILN_BIND_DEPTH_STENCIL, 0),
         1, 1},
        {tdesc(4, 4, 0, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_STAGING, 0, 0), 3, 1},
        {tdesc(8, 8, 1, 1, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_DEFAULT,
               KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0),
         1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_texture t = tex_ok(cases[i].d, NULL, __LINE__);
        memset(&got, 0xee, sizeof got);
        VOK(kiln_texture_get_desc(dev, t, &got));
        CHECK_EQ_INT(got.width, cases[i].d.width);
        CHECK_EQ_INT(got.height, cases[i].d.height);
        CHECK_EQ_INT(got.mip_levels, cases[i].mips);
        CHECK_EQ_INT(got.array_size, cases[i].arr);
        CHECK_EQ_INT(got.format, cases[i].d.format);
        CHECK_EQ_INT(got.usage, cases[i].d.usage);
        CHECK_EQ_INT(got.bind_flags, cases[i].d.bind_flags);
        VOK(kiln_destroy_texture(dev, t));
    }

    /* Initial data for every subresource in D3D10 order, with padded and
     * tight row pitches, is what reads back; without init, zeros. */
    enum { W = 4, H = 4, MIPS = 3, ARR = 2, NSUB = MIPS * ARR };
    static unsigned char src[NSUB][H][32]; /* rows 32 bytes apart, 16 used */
    static unsigned char tight[NSUB][W * H * 4];
    kiln_subresource_data init[NSUB];
    for (uint32_t s = 0; s < NSUB; s++) {
        vu_pattern(src[s], sizeof src[s], 100 + s);
        uint32_t mip = s % MIPS;
        uint32_t w = vu_mip_dim(W, mip), h = vu_mip_dim(H, mip);
        int padded = s & 1;
        for (uint32_t y = 0; y < h; y++)
            memcpy(tight[s] + y * w * 4, padded ? src[s][y] : src[s][0] + y * w * 4, w * 4);
        init[s].data = src[s];
        init[s].row_pitch = padded ? 32 : 0;
    }
    kiln_texture2d_desc d =
        tdesc(W, H, 0, ARR, RGBA, KILN_USAGE_IMMUTABLE, KILN_BIND_SHADER_RESOURCE, 0);
    kiln_texture ti = tex_ok(d, init, __LINE__);
    d.usage = KILN_USAGE_DEFAULT;
    kiln_texture td = tex_ok(d, init, __LINE__);
    d.usage = KILN_USAGE_STAGING;
    d.bind_flags = 0;
    kiln_texture ts = tex_ok(d, init, __LINE__);
    d.usage = KILN_USAGE_DEFAULT;
    kiln_texture tz = tex_ok(d, NULL, __LINE__);
    unsigned char zeros[W * H * 4] = {0};
    for (uint32_t s = 0; s < NSUB; s++) {
        CHECK(vu_texture_equals(dev, ti, s, tight[s]));
        CHECK(vu_texture_equals(dev, td, s, tight[s]));
        CHECK(vu_texture_equals(dev, ts, s, tight[s]));
        CHECK(vu_texture_equals(dev, tz, s, zeros));
    }
    VOK(kiln_destroy_texture(dev, ti));
    VOK(kiln_destroy_texture(dev, td));
    VOK(kiln_destroy_texture(dev, ts));
    VOK(kiln_destroy_texture(dev, tz));
}

/* ---- views ---- */

#define VIEW_FAILS(kind, tex, desc, code, lid)                                                     \
    do {                                                                                           \
        kiln_##kind out_ = {GARBAGE};                                                              \
        VFAILS(dev, kiln_create_##kind(dev, tex, desc, &out_), code, lid);                         \
        th_check(out_.id == 0, "failed kiln_create_" #kind " writes {0}", __FILE__, __LINE__);     \
    } while (0)

static void test_views(void)
{
    const kiln_format RGBA = KILN_FORMAT_R8G8B8A8_UNORM;
    /* 8x8, 4 mips, 3 slices, every bind a color texture can have. */
    kiln_texture color = tex_ok(tdesc(8, 8, 0, 3, RGBA, KILN_USAGE_DEFAULT,
                                      KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0),
                                NULL, __LINE__);
    kiln_texture rt_only = tex_ok(
        tdesc(8, 8, 1, 1, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0), NULL, __LINE__);
    kiln_texture sr_only = tex_ok(
        tdesc(8, 8, 1, 1, RGBA, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0), NULL, __LINE__);
    kiln_texture plain = tex_ok(tdesc(8, 8, 1, 1, RGBA, KILN_USAGE_DEFAULT, 0, 0), NULL, __LINE__);
    kiln_texture depth = tex_ok(tdesc(8, 8, 0, 2, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT,
                                      KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE, 0),
                                NULL, __LINE__);
    kiln_texture depth_ds = tex_ok(tdesc(8, 8, 1, 1, KILN_FORMAT_D24_UNORM_S8_UINT,
                                         KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0),
                                   NULL, __LINE__);
    kiln_texture staging =
        tex_ok(tdesc(8, 8, 1, 1, RGBA, KILN_USAGE_STAGING, 0, 0), NULL, __LINE__);

    /* Missing bind flag. */
    VIEW_FAILS(rtv, sr_only, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(rtv, plain, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(rtv, staging, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(rtv, depth, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(srv, rt_only, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(srv, plain, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(srv, depth_ds, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(dsv, color, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    VIEW_FAILS(dsv, plain, NULL, KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);

    /* Format differs from the resource. */
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){KILN_FORMAT_B8G8R8A8_UNORM, 0, 0, 0}),
               KILN_E_INVALID_ARG, KILN_LOG_VIEW_FORMAT);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){KILN_FORMAT_R32_FLOAT, 0, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_FORMAT);
    VIEW_FAILS(srv, color, (&(kiln_srv_desc){KILN_FORMAT_R8_UNORM, 0, 0, 0, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_FORMAT);
    VIEW_FAILS(srv, depth, (&(kiln_srv_desc){KILN_FORMAT_R32_FLOAT, 0, 0, 0, 0, 0}),
               KILN_E_INVALID_ARG, KILN_LOG_VIEW_FORMAT);
    VIEW_FAILS(dsv, depth, (&(kiln_dsv_desc){KILN_FORMAT_D24_UNORM_S8_UINT, 0, 0, 0}),
               KILN_E_INVALID_ARG, KILN_LOG_VIEW_FORMAT);
    VIEW_FAILS(dsv, depth_ds, (&(kiln_dsv_desc){KILN_FORMAT_D32_FLOAT, 0, 0, 0}),
               KILN_E_INVALID_ARG, KILN_LOG_VIEW_FORMAT);

    /* Mip / array range outside the resource (color: 4 mips, 3 slices). */
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, 4, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, UINT32_MAX, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, 0, 3, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, 0, 2, 2}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, 0, 0, 4}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, 0, UINT32_MAX, 2}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(rtv, color, (&(kiln_rtv_desc){0, 0, 1, UINT32_MAX}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(srv, color, (&(kiln_srv_desc){0, 4, 0, 0, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(srv, color, (&(kiln_srv_desc){0, 1, 4, 0, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(srv, color, (&(kiln_srv_desc){0, 2, UINT32_MAX, 0, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(srv, color, (&(kiln_srv_desc){0, 0, 0, 3, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(srv, color, (&(kiln_srv_desc){0, 0, 0, 1, 3, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(dsv, depth, (&(kiln_dsv_desc){0, 4, 0, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(dsv, depth, (&(kiln_dsv_desc){0, 0, 2, 0}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);
    VIEW_FAILS(dsv, depth, (&(kiln_dsv_desc){0, 0, 1, 2}), KILN_E_INVALID_ARG,
               KILN_LOG_VIEW_SUBRESOURCE);

    /* NULL out. */
    VFAILS(dev, kiln_create_rtv(dev, color, NULL, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    VFAILS(dev, kiln_create_dsv(dev, depth, NULL, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    VFAILS(dev, kiln_create_srv(dev, color, NULL, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    kiln_rtv nr = {GARBAGE};
    CHECK_RESULT(kiln_create_rtv(NULL, color, NULL, &nr), KILN_E_INVALID_ARG);
    CHECK_EQ_INT(nr.id, 0);

    /* Valid views: NULL desc, explicit format, last mip / slice, full ranges. */
    kiln_rtv rv[5];
    kiln_srv sv[5];
    kiln_dsv dv[4];
    VOK(kiln_create_rtv(dev, color, NULL, &rv[0]));
    VOK(kiln_create_rtv(dev, color, &(kiln_rtv_desc){RGBA, 3, 2, 1}, &rv[1]));
    VOK(kiln_create_rtv(dev, color, &(kiln_rtv_desc){0, 1, 0, 3}, &rv[2]));
    VOK(kiln_create_rtv(dev, color, &(kiln_rtv_desc){0, 0, 1, 2}, &rv[3]));
    VOK(kiln_create_rtv(dev, rt_only, NULL, &rv[4]));
    VOK(kiln_create_srv(dev, color, NULL, &sv[0]));
    VOK(kiln_create_srv(dev, color, &(kiln_srv_desc){RGBA, 3, 1, 2, 1, 0}, &sv[1]));
    VOK(kiln_create_srv(dev, color, &(kiln_srv_desc){0, 1, 0, 1, 0, 0}, &sv[2]));
    VOK(kiln_create_srv(dev, depth, NULL, &sv[3]));
    VOK(kiln_create_srv(dev, sr_only, &(kiln_srv_desc){0, 0, 1, 0, 1, 0}, &sv[4]));
    VOK(kiln_create_dsv(dev, depth, NULL, &dv[0]));
    VOK(kiln_create_dsv(dev, depth, &(kiln_dsv_desc){KILN_FORMAT_D32_FLOAT, 3, 1, 1}, &dv[1]));
    VOK(kiln_create_dsv(dev, depth, &(kiln_dsv_desc){0, 0, 0, 2}, &dv[2]));
    VOK(kiln_create_dsv(dev, depth_ds, NULL, &dv[3]));
    /* Every handle distinct and non-zero. */
    uint32_t ids[14] = {rv[0].id, rv[1].id, rv[2].id, rv[3].id, rv[4].id, sv[0].id, sv[1].id,
                        sv[2].id, sv[3].id, sv[4].id, dv[0].id, dv[1].id, dv[2].id, dv[3].id};
    int distinct = 1;
    for (int i = 0; i < 14; i++) {
        distinct &= ids[i] != 0 && ids[i] != color.id && ids[i] != depth.id;
        for (int j = 0; j < i; j++)
            distinct &= ids[i] != ids[j];
    }
    CHECK(distinct);
    for (int i = 0; i < 5; i++)
        VOK(kiln_destroy_rtv(dev, rv[i]));
    for (int i = 0; i < 5; i++)
        VOK(kiln_destroy_srv(dev, sv[i]));
    for (int i = 0; i < 4; i++)
        VOK(kiln_destroy_dsv(dev, dv[i]));

    kiln_texture all[] = {color, rt_only, sr_only, plain, depth, depth_ds, staging};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        VOK(kiln_destroy_texture(dev, all[i]));
}

/* ---- handles ---- */

static void test_handles(void)
{
    const kiln_format RGBA = KILN_FORMAT_R8G8B8A8_UNORM;
    kiln_buffer buf = buf_ok((kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0},
                             NULL, __LINE__);
    kiln_texture tex = tex_ok(tdesc(8, 8, 1, 1, RGBA, KILN_USAGE_DEFAULT,
                                    KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0),
                              NULL, __LINE__);
    kiln_texture dtex = tex_ok(
        tdesc(8, 8, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0),
        NULL, __LINE__);
    kiln_rtv rtv = {0};
    kiln_srv srv = {0};
    kiln_dsv dsv = {0};
    VOK(kiln_create_rtv(dev, tex, NULL, &rtv));
    VOK(kiln_create_srv(dev, tex, NULL, &srv));
    VOK(kiln_create_dsv(dev, dtex, NULL, &dsv));

    kiln_buffer_desc bd;
    kiln_texture2d_desc td;
    const kiln_result H = KILN_E_INVALID_HANDLE;

    /* Handle 0, for every call. */
    memset(&bd, 0xee, sizeof bd);
    VFAILS(dev, kiln_buffer_get_desc(dev, (kiln_buffer){0}, &bd), H, KILN_LOG_HANDLE_NULL);
    CHECK(vu_all_zero(&bd, sizeof bd));
    memset(&td, 0xee, sizeof td);
    VFAILS(dev, kiln_texture_get_desc(dev, (kiln_texture){0}, &td), H, KILN_LOG_HANDLE_NULL);
    CHECK(vu_all_zero(&td, sizeof td));
    VFAILS(dev, kiln_destroy_buffer(dev, (kiln_buffer){0}), H, KILN_LOG_HANDLE_NULL);
    VFAILS(dev, kiln_destroy_texture(dev, (kiln_texture){0}), H, KILN_LOG_HANDLE_NULL);
    VFAILS(dev, kiln_destroy_rtv(dev, (kiln_rtv){0}), H, KILN_LOG_HANDLE_NULL);
    VFAILS(dev, kiln_destroy_srv(dev, (kiln_srv){0}), H, KILN_LOG_HANDLE_NULL);
    VFAILS(dev, kiln_destroy_dsv(dev, (kiln_dsv){0}), H, KILN_LOG_HANDLE_NULL);
    VIEW_FAILS(rtv, (kiln_texture){0}, NULL, H, KILN_LOG_HANDLE_NULL);
    VIEW_FAILS(srv, (kiln_texture){0}, NULL, H, KILN_LOG_HANDLE_NULL);
    VIEW_FAILS(dsv, (kiln_texture){0}, NULL, H, KILN_LOG_HANDLE_NULL);

    /* NULL device: INVALID_ARG (no device, so no device logger) and zeros. */
    memset(&bd, 0xee, sizeof bd);
    CHECK_RESULT(kiln_buffer_get_desc(NULL, buf, &bd), KILN_E_INVALID_ARG);
    CHECK(vu_all_zero(&bd, sizeof bd));
    memset(&td, 0xee, sizeof td);
    CHECK_RESULT(kiln_texture_get_desc(NULL, tex, &td), KILN_E_INVALID_ARG);
    CHECK(vu_all_zero(&td, sizeof td));
    CHECK_RESULT(kiln_destroy_buffer(NULL, buf), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_destroy_texture(NULL, tex), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_destroy_rtv(NULL, rtv), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_destroy_srv(NULL, srv), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_destroy_dsv(NULL, dsv), KILN_E_INVALID_ARG);
    VFAILS(dev, kiln_buffer_get_desc(dev, buf, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    VFAILS(dev, kiln_texture_get_desc(dev, tex, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);

    /* Wrong type: every call given each other kind of handle. */
    memset(&bd, 0xee, sizeof bd);
    VFAILS(dev, kiln_buffer_get_desc(dev, (kiln_buffer){tex.id}, &bd), H,
           KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK(vu_all_zero(&bd, sizeof bd));
    VFAILS(dev, kiln_buffer_get_desc(dev, (kiln_buffer){rtv.id}, &bd), H,
           KILN_LOG_HANDLE_WRONG_TYPE);
    memset(&td, 0xee, sizeof td);
    VFAILS(dev, kiln_texture_get_desc(dev, (kiln_texture){buf.id}, &td), H,
           KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK(vu_all_zero(&td, sizeof td));
    VFAILS(dev, kiln_texture_get_desc(dev, (kiln_texture){srv.id}, &td), H,
           KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_buffer(dev, (kiln_buffer){tex.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_buffer(dev, (kiln_buffer){dsv.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_texture(dev, (kiln_texture){buf.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_texture(dev, (kiln_texture){rtv.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_rtv(dev, (kiln_rtv){srv.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_rtv(dev, (kiln_rtv){dsv.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_rtv(dev, (kiln_rtv){tex.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_srv(dev, (kiln_srv){rtv.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_srv(dev, (kiln_srv){buf.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_dsv(dev, (kiln_dsv){rtv.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS(dev, kiln_destroy_dsv(dev, (kiln_dsv){dtex.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    VIEW_FAILS(rtv, ((kiln_texture){buf.id}), NULL, H, KILN_LOG_HANDLE_WRONG_TYPE);
    VIEW_FAILS(rtv, ((kiln_texture){rtv.id}), NULL, H, KILN_LOG_HANDLE_WRONG_TYPE);
    VIEW_FAILS(srv, ((kiln_texture){srv.id}), NULL, H, KILN_LOG_HANDLE_WRONG_TYPE);
    VIEW_FAILS(dsv, ((kiln_texture){dsv.id}), NULL, H, KILN_LOG_HANDLE_WRONG_TYPE);
    /* After all that every object is still alive and of its type. */
    VOK(kiln_buffer_get_desc(dev, buf, &bd));
    CHECK_EQ_INT(bd.size, 64);
    VOK(kiln_texture_get_desc(dev, tex, &td));
    CHECK_EQ_INT(td.width, 8);
    VOK(kiln_texture_get_desc(dev, dtex, &td));
    CHECK_EQ_INT(td.format, KILN_FORMAT_D32_FLOAT);

    /* An id never issued: not valid (reported as stale or wrong type). */
    VFAILS2(dev, kiln_texture_get_desc(dev, (kiln_texture){0x00fffff0u}, &td), H,
            KILN_LOG_HANDLE_STALE, KILN_LOG_HANDLE_WRONG_TYPE);
    VFAILS2(dev, kiln_destroy_buffer(dev, (kiln_buffer){0xffffffffu}), H, KILN_LOG_HANDLE_STALE,
            KILN_LOG_HANDLE_WRONG_TYPE);

    /* Views of a destroyed texture: invalid for use (the context test covers
     * clears), but the view handle itself still destroys fine. */
    kiln_rtv rtv2 = {0};
    VOK(kiln_create_rtv(dev, tex, NULL, &rtv2));
    VOK(kiln_destroy_texture(dev, tex));
    VOK(kiln_destroy_texture(dev, dtex));
    /* No new views of the destroyed texture. */
    VIEW_FAILS(rtv, tex, NULL, H, KILN_LOG_HANDLE_STALE);
    VIEW_FAILS(srv, tex, NULL, H, KILN_LOG_HANDLE_STALE);
    VIEW_FAILS(dsv, dtex, NULL, H, KILN_LOG_HANDLE_STALE);
    VOK(kiln_destroy_rtv(dev, rtv));
    VOK(kiln_destroy_srv(dev, srv));
    VOK(kiln_destroy_dsv(dev, dsv));

    /* Stale: every call, every type (double destroy included). */
    VOK(kiln_destroy_buffer(dev, buf));
    memset(&bd, 0xee, sizeof bd);
    VFAILS(dev, kiln_buffer_get_desc(dev, buf, &bd), H, KILN_LOG_HANDLE_STALE);
    CHECK(vu_all_zero(&bd, sizeof bd));
    memset(&td, 0xee, sizeof td);
    VFAILS(dev, kiln_texture_get_desc(dev, tex, &td), H, KILN_LOG_HANDLE_STALE);
    CHECK(vu_all_zero(&td, sizeof td));
    VFAILS(dev, kiln_destroy_buffer(dev, buf), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_destroy_texture(dev, tex), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_destroy_texture(dev, dtex), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_destroy_rtv(dev, rtv), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_destroy_srv(dev, srv), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_destroy_dsv(dev, dsv), H, KILN_LOG_HANDLE_STALE);

    /* Slots are reused, handles are not: new objects get new ids and the
     * old ones stay stale. */
    kiln_buffer nb[4];
    for (int i = 0; i < 4; i++) {
        nb[i] = buf_ok((kiln_buffer_desc){32, KILN_USAGE_DEFAULT, 0, 0}, NULL, __LINE__);
        CHECK(nb[i].id != buf.id && nb[i].id != tex.id && nb[i].id != dtex.id &&
              nb[i].id != rtv.id && nb[i].id != srv.id && nb[i].id != dsv.id);
    }
    VFAILS(dev, kiln_buffer_get_desc(dev, buf, &bd), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_texture_get_desc(dev, tex, &td), H, KILN_LOG_HANDLE_STALE);
    VFAILS(dev, kiln_destroy_rtv(dev, rtv), H, KILN_LOG_HANDLE_STALE);
    /* The view of the destroyed texture destroys fine, once. */
    VOK(kiln_destroy_rtv(dev, rtv2));
    VFAILS(dev, kiln_destroy_rtv(dev, rtv2), H, KILN_LOG_HANDLE_STALE);
    for (int i = 0; i < 4; i++)
        VOK(kiln_destroy_buffer(dev, nb[i]));
}

/* A handle stays stale however often its slot is reused. With one free slot
 * every create reuses it, so after 4096 create/destroy cycles a 12-bit
 * generation would wrap and the first handle would alias a live buffer. */
static void test_handle_reuse_wrap(void)
{
    kiln_device *d2 = th_device(KILN_EXEC_SERIAL, 0);
    kiln_buffer_desc bd = {16, KILN_USAGE_DEFAULT, 0, 0};
    kiln_buffer first = {0}, b = {0};
    VOK(kiln_create_buffer(d2, &bd, NULL, &first));
    VOK(kiln_destroy_buffer(d2, first));
    int aliased_at = -1;
    kiln_buffer_desc got;
    for (int i = 0; i < 5000 && aliased_at < 0; i++) {
        if (kiln_create_buffer(d2, &bd, NULL, &b) != KILN_OK)
            break;
        th_log_reset();
        if (b.id == first.id || kiln_buffer_get_desc(d2, first, &got) == KILN_OK)
            aliased_at = i;
        kiln_destroy_buffer(d2, b);
    }
    th_check(aliased_at < 0, "a destroyed buffer's handle never becomes valid again", __FILE__,
             __LINE__);
    if (aliased_at >= 0)
        fprintf(stderr, "    handle 0x%08x is live again after %d reuses of its slot\n", first.id,
                aliased_at + 1);
    kiln_device_destroy(d2);
}

/* The message names the API function (kiln.h: "it names the API function
 * and the failed rule"). */
static void test_messages_name_function(void)
{
    kiln_buffer b;
    kiln_texture t;
    kiln_rtv v;
    th_log_reset();
    kiln_create_buffer(dev, &(kiln_buffer_desc){0, 0, 0, 0}, NULL, &b);
    CHECK(strstr(th_logs.last_message, "kiln_create_buffer") != NULL);
    th_log_reset();
    kiln_create_texture2d(dev, &(kiln_texture2d_desc){0, 1, 1, 1, KILN_FORMAT_R8_UNORM, 0, 0, 0, 0},
                          NULL, &t);
    CHECK(strstr(th_logs.last_message, "kiln_create_texture2d") != NULL);
    th_log_reset();
    kiln_create_rtv(dev, (kiln_texture){0}, NULL, &v);
    CHECK(strstr(th_logs.last_message, "kiln_create_rtv") != NULL);
    th_log_reset();
    kiln_destroy_srv(dev, (kiln_srv){0});
    CHECK(strstr(th_logs.last_message, "kiln_destroy_srv") != NULL);
}

/* ---- allocation failures while creating resources ---- */

typedef struct fail_alloc {
    atomic_long live_bytes;
    atomic_long allow; /* allocations still allowed; <0: unlimited */
} fail_alloc;

static void *fa_alloc(size_t size, void *user)
{
    fail_alloc *f = user;
    long a = atomic_load(&f->allow);
    if (a == 0)
        return NULL;
    if (a > 0)
        atomic_fetch_sub(&f->allow, 1);
    unsigned char *p = malloc(size + 16);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&f->live_bytes, (long)size);
    return p + 16;
}

static void fa_free(void *ptr, size_t size, void *user)
{
    fail_alloc *f = user;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - 16;
    atomic_fetch_sub(&f->live_bytes, (long)size);
    free(p);
}

static void test_alloc_failures(void)
{
    static fail_alloc fa;
    atomic_store(&fa.allow, -1);
    kiln_device_desc dd = {0};
    dd.exec_mode = KILN_EXEC_SERIAL;
    dd.allocator = (kiln_allocator){fa_alloc, fa_free, &fa};
    kiln_device *d2 = th_device_desc(dd);
    kiln_context *c2 = kiln_device_immediate_context(d2);

    unsigned char bytes[64];
    vu_pattern(bytes, sizeof bytes, 9);
    enum { KINDS = 4 };
    for (int kind = 0; kind < KINDS; kind++) {
        int done = 0;
        for (long k = 0; k < 100 && !done; k++) {
            long before = atomic_load(&fa.live_bytes);
            atomic_store(&fa.allow, k);
            th_log_reset();
            kiln_result r = KILN_OK;
            uint32_t id = GARBAGE;
            kiln_texture t = {0};
            if (kind == 0) {
                kiln_buffer b = {GARBAGE};
                r = kiln_create_buffer(
                    d2, &(kiln_buffer_desc){64, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, 0},
                    &(kiln_subresource_data){bytes, 0}, &b);
                id = b.id;
            } else if (kind == 1) {
                kiln_texture o = {GARBAGE};
                r = kiln_create_texture2d(
                    d2,
                    &(kiln_texture2d_desc){16, 16, 0, 2, KILN_FORMAT_R8G8B8A8_UNORM,
                                           KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0, 0},
                    NULL, &o);
                id = o.id;
            } else {
                atomic_store(&fa.allow, -1);
                CHECK_RESULT(kiln_create_texture2d(
                                 d2,
                                 &(kiln_texture2d_desc){
                                     4, 4, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT,
                                     KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0, 0},
                                 NULL, &t),
                             KILN_OK);
                before = atomic_load(&fa.live_bytes);
                atomic_store(&fa.allow, k);
                th_log_reset();
                if (kind == 2) {
                    kiln_rtv o = {GARBAGE};
                    r = kiln_create_rtv(d2, t, NULL, &o);
                    id = o.id;
                } else {
                    kiln_srv o = {GARBAGE};
                    r = kiln_create_srv(d2, t, NULL, &o);
                    id = o.id;
                }
            }
            atomic_store(&fa.allow, -1);
            if (r == KILN_OK) {
                done = 1;
                CHECK(id != 0 && id != GARBAGE);
                CHECK_EQ_INT(th_log_count(), 0);
                if (kind == 0)
                    VOK(kiln_destroy_buffer(d2, (kiln_buffer){id}));
                else if (kind == 1)
                    VOK(kiln_destroy_texture(d2, (kiln_texture){id}));
                else if (kind == 2)
                    VOK(kiln_destroy_rtv(d2, (kiln_rtv){id}));
                else
                    VOK(kiln_destroy_srv(d2, (kiln_srv){id}));
            } else {
                CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
                CHECK_EQ_INT(id, 0);
                CHECK(th_log_count() == 1 && th_log_last() == KILN_LOG_OUT_OF_MEMORY);
                if (!(th_log_count() == 1 && th_log_last() == KILN_LOG_OUT_OF_MEMORY))
                    fprintf(stderr, "    kind %d k=%ld: logged %u, last %s\n", kind, k,
                            th_log_count(), kiln_log_id_string(th_log_last()));
                /* Nothing kept (the handle table may have grown only on
                 * success, never here). */
                CHECK_EQ_INT(atomic_load(&fa.live_bytes), before);
            }
            if (t.id)
                VOK(kiln_destroy_texture(d2, t));
        }
        CHECK(done);
    }

    /* Size limits are checked before allocating: with every allocation
     * failing, an oversized texture is still TEXTURE_TOO_LARGE. */
    {
        kiln_texture o = {GARBAGE};
        atomic_store(&fa.allow, 0);
        VFAILS(d2,
               kiln_create_texture2d(d2,
                                     &(kiln_texture2d_desc){8192, 8192, 1, 5,
                                                            KILN_FORMAT_R32G32B32A32_FLOAT,
                                                            KILN_USAGE_DEFAULT, 0, 0, 0},
                                     NULL, &o),
               KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_TOO_LARGE);
        atomic_store(&fa.allow, -1);
        CHECK_EQ_INT(o.id, 0);
    }

    /* WRITE_DISCARD needs fresh storage: its failure is OUT_OF_MEMORY and the
     * buffer keeps working. */
    kiln_buffer dyn = {0};
    VOK(kiln_create_buffer(
        d2, &(kiln_buffer_desc){64, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, 0}, NULL, &dyn));
    kiln_mapped_subresource m;
    memset(&m, 0xee, sizeof m);
    atomic_store(&fa.allow, 0);
    VFAILS(d2, kiln_map(c2, kiln_buffer_resource(dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
           KILN_E_OUT_OF_MEMORY, KILN_LOG_OUT_OF_MEMORY);
    atomic_store(&fa.allow, -1);
    CHECK(vu_all_zero(&m, sizeof m));
    VFAILS(d2, kiln_unmap(c2, kiln_buffer_resource(dyn), 0), KILN_E_INVALID_CALL,
           KILN_LOG_UNMAP_NOT_MAPPED);
    VOK(kiln_map(c2, kiln_buffer_resource(dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &m));
    CHECK(m.data != NULL);
    VOK(kiln_unmap(c2, kiln_buffer_resource(dyn), 0));
    VOK(kiln_destroy_buffer(d2, dyn));
    VOK(kiln_finish(c2));
    kiln_device_destroy(d2);
    CHECK_EQ_INT(atomic_load(&fa.live_bytes), 0);
}

int main(void)
{
    dev = th_device(KILN_EXEC_ASYNC, 2);
    ctx = kiln_device_immediate_context(dev);
    CHECK(ctx != NULL);
    test_buffer_args();
    test_buffer_valid();
    test_texture_args();
    test_texture_valid();
    test_views();
    test_handles();
    test_handle_reuse_wrap();
    test_messages_name_function();
    test_alloc_failures();
    /* No failing call above queued anything that failed later. */
    th_log_reset();
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    CHECK_EQ_INT(th_log_count(), 0);
    kiln_device_destroy(dev);
    return th_exit();
}
