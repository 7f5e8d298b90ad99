/* Format table and the float -> texel conversion used by clears. */
#include "resources.h"
#include "texel.h"

#include <math.h>
#include <string.h>

const kres_format_info kres_formats[KILN_FORMAT_COUNT] = {
    [KILN_FORMAT_R8G8B8A8_UNORM] = {4, 4, 0, 0, 1},
    [KILN_FORMAT_B8G8R8A8_UNORM] = {4, 4, 0, 0, 1},
    [KILN_FORMAT_R8_UNORM] = {1, 1, 0, 0, 1},
    [KILN_FORMAT_R32_FLOAT] = {4, 1, 0, 0, 0},
    [KILN_FORMAT_R32G32_FLOAT] = {8, 2, 0, 0, 0},
    [KILN_FORMAT_R32G32B32A32_FLOAT] = {16, 4, 0, 0, 0},
    [KILN_FORMAT_D32_FLOAT] = {4, 1, 1, 0, 0},
    [KILN_FORMAT_D24_UNORM_S8_UINT] = {4, 2, 1, 1, 0},
    [KILN_FORMAT_R32G32B32_FLOAT] = {12, 3, 0, 0, 0}, /* vertex elements only */
    /* texel.c decodes and encodes these */
    [KILN_FORMAT_R8G8_UNORM] = {2, 2, 0, 0, 0},
    [KILN_FORMAT_R8G8B8A8_SNORM] = {4, 4, 0, 0, 0},
    [KILN_FORMAT_R8G8B8A8_UNORM_SRGB] = {4, 4, 0, 0, 0},
    [KILN_FORMAT_B8G8R8A8_UNORM_SRGB] = {4, 4, 0, 0, 0},
    [KILN_FORMAT_R10G10B10A2_UNORM] = {4, 4, 0, 0, 0},
    [KILN_FORMAT_R11G11B10_FLOAT] = {4, 3, 0, 0, 0},
    [KILN_FORMAT_R16_UNORM] = {2, 1, 0, 0, 0},
    [KILN_FORMAT_R16_FLOAT] = {2, 1, 0, 0, 0},
    [KILN_FORMAT_R16G16_FLOAT] = {4, 2, 0, 0, 0},
    [KILN_FORMAT_R16G16B16A16_FLOAT] = {8, 4, 0, 0, 0},
    [KILN_FORMAT_R16G16B16A16_UNORM] = {8, 4, 0, 0, 0},
    [KILN_FORMAT_D16_UNORM] = {2, 1, 1, 0, 0},
    [KILN_FORMAT_R8G8B8A8_UINT] = {4, 4, 0, 0, 0},
    [KILN_FORMAT_R8G8B8A8_SINT] = {4, 4, 0, 0, 0},
    [KILN_FORMAT_R16_UINT] = {2, 1, 0, 0, 0},
    [KILN_FORMAT_R32_UINT] = {4, 1, 0, 0, 0},
    [KILN_FORMAT_R32_SINT] = {4, 1, 0, 0, 0},
    [KILN_FORMAT_R32G32B32A32_UINT] = {16, 4, 0, 0, 0},
    [KILN_FORMAT_D32_FLOAT_S8X24_UINT] = {8, 2, 1, 1, 0},
    /* block-compressed: bytes per 4x4 block (bc.c decodes them) */
    [KILN_FORMAT_BC1_UNORM] = {8, 4, 0, 0, 0, 4},
    [KILN_FORMAT_BC1_UNORM_SRGB] = {8, 4, 0, 0, 0, 4},
    [KILN_FORMAT_BC2_UNORM] = {16, 4, 0, 0, 0, 4},
    [KILN_FORMAT_BC2_UNORM_SRGB] = {16, 4, 0, 0, 0, 4},
    [KILN_FORMAT_BC3_UNORM] = {16, 4, 0, 0, 0, 4},
    [KILN_FORMAT_BC3_UNORM_SRGB] = {16, 4, 0, 0, 0, 4},
    [KILN_FORMAT_BC4_UNORM] = {8, 1, 0, 0, 0, 4},
    [KILN_FORMAT_BC5_UNORM] = {16, 2, 0, 0, 0, 4},
};

uint32_t kiln_format_size(kiln_format format)
{
    const kres_format_info *fi = kres_format(format);
    return fi ? fi->size : 0;
}

uint32_t kiln_format_block_dim(kiln_format format)
{
    const kres_format_info *fi = kres_format(format);
    return fi ? kres_block_dim(fi) : 0;
}

/* D3D10 FLOAT -> UNORM: NaN becomes 0, clamp to [0, 1], scale, round to
 * nearest. */
static uint8_t to_unorm8(float v)
{
    if (!(v > 0.0f))
        return 0;
    if (v >= 1.0f)
        return 255;
    return (uint8_t)(v * 255.0f + 0.5f);
}

void kres_pack_color(kiln_format f, const float c[4], uint8_t out[16])
{
    memset(out, 0, 16);
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int i = 0; i < 4; i++)
            out[i] = to_unorm8(c[i]);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        out[0] = to_unorm8(c[2]);
        out[1] = to_unorm8(c[1]);
        out[2] = to_unorm8(c[0]);
        out[3] = to_unorm8(c[3]);
        break;
    case KILN_FORMAT_R8_UNORM:
        out[0] = to_unorm8(c[0]);
        break;
    case KILN_FORMAT_R32_FLOAT:
    case KILN_FORMAT_D32_FLOAT:
        memcpy(out, c, 4);
        break;
    case KILN_FORMAT_R32G32_FLOAT:
        memcpy(out, c, 8);
        break;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        memcpy(out, c, 16);
        break;
    default:
        if (kres_texel_generic(f))
            kres_encode_texel(f, c, out, 15u);
        break;
    }
}
