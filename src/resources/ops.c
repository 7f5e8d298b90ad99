/* Byte operations the executor runs for copies, uploads and clears. Each
 * touches only the subresource region it names. */
#include "resources.h"
#include "texel.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static uint32_t texel_size(const kres_resource *r)
{
    return r->base.type == KRES_TYPE_BUFFER ? 1u : kres_format(r->format)->size;
}

void kres_copy_region(kres_resource *dst, kres_storage *dst_st, uint32_t dst_sub,
                      uint32_t dst_x, uint32_t dst_y, uint32_t dst_z, kres_resource *src,
                      kres_storage *src_st, uint32_t src_sub, const kiln_box *box)
{
    /* Everything the row loop needs, in locals: memmove may write any
     * memory as far as the compiler knows, so fields read inside the loop
     * were read again for every row (40 instructions a row, four times
     * the copy of a 64-byte row itself). */
    const kres_subresource *ds = &dst->subs[dst_sub];
    const kres_subresource *ss = &src->subs[src_sub];
    const uint32_t bpp = texel_size(dst);
    const size_t row = (size_t)(box->right - box->left) * bpp;
    const size_t d_pitch = ds->row_pitch, s_pitch = ss->row_pitch;
    const size_t d_slice = ds->depth_pitch, s_slice = ss->depth_pitch;
    const uint32_t rows = box->bottom - box->top, depth = box->back - box->front;
    uint8_t *d0 = dst_st->data + ds->offset + (size_t)dst_z * d_slice + (size_t)dst_y * d_pitch +
                  (size_t)dst_x * bpp;
    const uint8_t *s0 = src_st->data + ss->offset + (size_t)box->front * s_slice +
                        (size_t)box->top * s_pitch + (size_t)box->left * bpp;
    for (uint32_t z = 0; z < depth; z++) {
        uint8_t *d = d0 + z * d_slice;
        const uint8_t *s = s0 + z * s_slice;
        for (uint32_t y = 0; y < rows; y++, d += d_pitch, s += s_pitch)
            memmove(d, s, row); /* regions never overlap; memmove costs nothing extra */
    }
}

void kres_copy_all(kres_resource *dst, kres_storage *dst_st, kres_resource *src,
                   kres_storage *src_st)
{
    (void)src;
    memcpy(dst_st->data, src_st->data, dst->storage_size);
}

void kres_write_box(kres_resource *dst, kres_storage *st, uint32_t sub, const kiln_box *box,
                    const uint8_t *src, size_t src_pitch)
{
    /* Loop-invariant fields in locals, as in kres_copy_region. */
    const kres_subresource *s = &dst->subs[sub];
    const uint32_t bpp = texel_size(dst);
    const size_t row = (size_t)(box->right - box->left) * bpp;
    const uint32_t rows = box->bottom - box->top, depth = box->back - box->front;
    const size_t pitch = s->row_pitch, slice = s->depth_pitch;
    uint8_t *d0 = st->data + s->offset + (size_t)box->front * slice + (size_t)box->top * pitch +
                  (size_t)box->left * bpp;
    /* the rows of depth slice front, then front + 1, ...: src is tight
     * across slices (rows * src_pitch apart) */
    for (uint32_t z = 0; z < depth; z++) {
        uint8_t *d = d0 + z * slice;
        for (uint32_t y = 0; y < rows; y++, d += pitch, src += src_pitch)
            memcpy(d, src, row);
    }
}

void kres_fill(kres_resource *dst, kres_storage *st, uint32_t first_mip, uint32_t num_mips,
               uint32_t first_slice, uint32_t num_slices, const uint8_t *texel,
               uint32_t mask32)
{
    uint32_t bpp = kres_format(dst->format)->size;
    for (uint32_t slice = first_slice; slice < first_slice + num_slices; slice++) {
        for (uint32_t mip = first_mip; mip < first_mip + num_mips; mip++) {
            /* planes: array slices, or a 3D texture's W slices */
            const kres_subresource *s = kres_plane_sub(dst, mip, slice);
            uint8_t *base = st->data + kres_plane_offset(dst, mip, slice);
            const uint32_t rows = s->height * dst->samples; /* every sample plane */
            if (dst->format == KILN_FORMAT_D32_FLOAT_S8X24_UINT && mask32 != 0xffffffffu) {
                /* Partial clear of D32S8 texels: mask32 as D24's, its
                 * depth bits for bytes 0..3, its stencil bits for byte 4. */
                for (uint32_t y = 0; y < rows; y++)
                    for (uint32_t x = 0; x < s->width; x++)
                        kres_clear_d32s8(base + (size_t)y * s->row_pitch + (size_t)x * 8, texel, mask32);
                continue;
            }
            if (mask32 != 0xffffffffu) {
                /* Partial depth/stencil clear of 32-bit texels. */
                uint32_t v;
                memcpy(&v, texel, 4);
                for (uint32_t y = 0; y < rows; y++) {
                    uint32_t *p = (uint32_t *)(void *)(base + (size_t)y * s->row_pitch);
                    for (uint32_t x = 0; x < s->width; x++)
                        p[x] = (p[x] & ~mask32) | (v & mask32);
                }
                continue;
            }
            /* Build the first row, then copy it to the others. */
            if (bpp == 1) {
                memset(base, texel[0], s->width);
            } else {
                for (uint32_t x = 0; x < s->width; x++)
                    memcpy(base + (size_t)x * bpp, texel, bpp);
            }
            for (uint32_t y = 1; y < rows; y++)
                memcpy(base + (size_t)y * s->row_pitch, base, (size_t)s->width * bpp);
        }
    }
}

/* A texel of a color render-target format as RGBA floats (sRGB in
 * linear), and back with the render-target write's conversion. */
static void rt_decode(kiln_format f, const uint8_t *p, float d[4])
{
    d[0] = d[1] = d[2] = 0.0f;
    d[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            d[c] = kres_unorm_to_float(p[c], 8);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        for (int c = 0; c < 4; c++)
            d[c] = kres_unorm_to_float(p[c == 3 ? 3 : 2 - c], 8);
        break;
    case KILN_FORMAT_R8_UNORM: d[0] = kres_unorm_to_float(p[0], 8); break;
    case KILN_FORMAT_R32_FLOAT: memcpy(d, p, 4); break;
    case KILN_FORMAT_R32G32_FLOAT: memcpy(d, p, 8); break;
    case KILN_FORMAT_R32G32B32A32_FLOAT: memcpy(d, p, 16); break;
    default: kres_decode_texel(f, p, d); break;
    }
}

static void rt_encode(kiln_format f, const float v[4], uint8_t *p)
{
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            p[c] = (uint8_t)kres_float_to_unorm(v[c], 8);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        for (int c = 0; c < 4; c++)
            p[c == 3 ? 3 : 2 - c] = (uint8_t)kres_float_to_unorm(v[c], 8);
        break;
    case KILN_FORMAT_R8_UNORM: p[0] = (uint8_t)kres_float_to_unorm(v[0], 8); break;
    case KILN_FORMAT_R32_FLOAT: memcpy(p, v, 4); break;
    case KILN_FORMAT_R32G32_FLOAT: memcpy(p, v, 8); break;
    case KILN_FORMAT_R32G32B32A32_FLOAT: memcpy(p, v, 16); break;
    default: kres_encode_texel(f, v, p, 15u); break;
    }
}

/* One channel byte of an 8-bit UNORM resolve from its n samples' bytes
 * at b[0], b[plane], ..: what rt_decode, the float sum and rt_encode give
 * that channel (every byte of RGBA8, BGRA8 and R8 takes the same steps). */
static uint8_t resolve_byte(const uint8_t *b, size_t plane, uint32_t n)
{
    float sum = 0.0f;
    for (uint32_t k = 0; k < n; k++)
        sum += kres_unorm_to_float(b[k * plane], 8);
    sum *= 1.0f / (float)n;
    return (uint8_t)kres_float_to_unorm(sum, 8);
}

/* A row of `bytes` bytes of an 8-bit UNORM resolve. Four samples (every
 * multisampled texture kiln makes) 16 bytes at a time with SSE2: for four
 * samples resolve_byte's float steps give exactly (S + 2) >> 2 of the
 * bytes' sum S, for every one of the 2^32 sets of four bytes (test_resolve
 * enumerates them), so integer sums in 16-bit lanes give the same bytes
 * without a divide. The per-texel loop with its calls was 48% of bench
 * (a/4x)'s frame. */
static void resolve_row8(uint8_t *d, const uint8_t *s, size_t plane, uint32_t n, size_t bytes)
{
    size_t i = 0;
#if defined(__SSE2__)
    if (n == 4) {
        const __m128i zero = _mm_setzero_si128(), two = _mm_set1_epi16(2);
        for (; i + 16 <= bytes; i += 16) {
            __m128i lo = two, hi = two;
            for (uint32_t k = 0; k < 4; k++) {
                __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + k * plane + i));
                lo = _mm_add_epi16(lo, _mm_unpacklo_epi8(b, zero));
                hi = _mm_add_epi16(hi, _mm_unpackhi_epi8(b, zero));
            }
            _mm_storeu_si128((__m128i *)(void *)(d + i),
                             _mm_packus_epi16(_mm_srli_epi16(lo, 2), _mm_srli_epi16(hi, 2)));
        }
    }
#endif
    for (; i < bytes; i++)
        d[i] = resolve_byte(s + i, plane, n);
}

void kres_resolve(kres_resource *dst, kres_storage *dst_st, uint32_t dst_sub, kres_resource *src,
                  kres_storage *src_st, uint32_t src_sub)
{
    const kres_subresource *ds = &dst->subs[dst_sub], *ss = &src->subs[src_sub];
    const kiln_format f = dst->format;
    const uint32_t bpp = kres_format(f)->size;
    const size_t plane = (size_t)ss->row_pitch * ss->height;
    if (f == KILN_FORMAT_R8G8B8A8_UNORM || f == KILN_FORMAT_B8G8R8A8_UNORM ||
        f == KILN_FORMAT_R8_UNORM) {
        for (uint32_t y = 0; y < ds->height; y++)
            resolve_row8(dst_st->data + ds->offset + (size_t)y * ds->row_pitch,
                         src_st->data + ss->offset + (size_t)y * ss->row_pitch, plane,
                         src->samples, (size_t)ds->width * bpp);
        return;
    }
    for (uint32_t y = 0; y < ds->height; y++) {
        for (uint32_t x = 0; x < ds->width; x++) {
            const uint8_t *sp = src_st->data + ss->offset + (size_t)y * ss->row_pitch + (size_t)x * bpp;
            float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (uint32_t k = 0; k < src->samples; k++) {
                float t[4];
                rt_decode(f, sp + k * plane, t);
                for (int c = 0; c < 4; c++)
                    sum[c] += t[c];
            }
            for (int c = 0; c < 4; c++)
                sum[c] *= 1.0f / (float)src->samples;
            rt_encode(f, sum, dst_st->data + ds->offset + (size_t)y * ds->row_pitch + (size_t)x * bpp);
        }
    }
}
