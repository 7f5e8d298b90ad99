/*
 * The record layout, in one place: fields() lists every record's fields in
 * order, and runs in three modes over one kcap_io: SIZE counts the bytes a
 * record takes, WRITE emits them, READ parses and validates them. The
 * encoder and the decoder are the same function, so they cannot drift
 * apart; docs/capture.md transcribes it.
 *
 * Record framing: varint op, varint payload length, payload. Integers are
 * LEB128 varints (at most 10 bytes; signed ones zigzag-coded), floats 4
 * bytes little-endian IEEE-754, byte strings a varint length then the
 * bytes.
 */
#include "capture.h"

#include <stdio.h>
#include <string.h>

static const char *const op_names[KCAP_OP_COUNT] = {
    [KCAP_OP_NONE] = "none",
#define X(name, text) [KCAP_OP_##name] = text,
    KCAP_OPS(X)
#undef X
};

const char *kcap_op_name(uint32_t op) { return kcap_op_known(op) ? op_names[op] : "unknown"; }

/* ---- the io ---- */

enum { IO_SIZE, IO_WRITE, IO_READ };

typedef struct kcap_io {
    int mode;
    unsigned flags;
    /* SIZE */
    uint64_t size;
    /* WRITE */
    kcap_put_fn put;
    void *user;
    /* READ: the payload */
    const uint8_t *in;
    size_t len, pos;
    const char *error; /* first failure (READ), a static string */
    const char *field;
} kcap_io;

static void fail(kcap_io *io, const char *why)
{
    if (!io->error)
        io->error = why;
}

static bool tolerant(const kcap_io *io) { return (io->flags & KCAP_DECODE_TOLERANT) != 0; }

static void put_bytes(kcap_io *io, const void *p, size_t n)
{
    if (io->mode == IO_SIZE)
        io->size += n;
    else if (n)
        io->put(io->user, p, n);
}

static void put_varint(kcap_io *io, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    put_bytes(io, b, n);
}

static uint64_t get_varint(kcap_io *io)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (io->pos >= io->len) {
            fail(io, "the record ends inside a field");
            return 0;
        }
        uint8_t b = io->in[io->pos++];
        if (shift == 63 && (b & 0x7e)) {
            fail(io, "a varint exceeds 64 bits");
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    fail(io, "a varint is longer than 10 bytes");
    return 0;
}

/* An unsigned field in [0, max]. */
static void io_u64(kcap_io *io, uint64_t *v, uint64_t max)
{
    if (io->mode != IO_READ) {
        put_varint(io, *v);
        return;
    }
    uint64_t x = get_varint(io);
    if (x > max) {
        if (tolerant(io)) {
            x = max == UINT64_MAX ? x : x % (max + 1);
        } else {
            fail(io, "a value is out of range");
            x = 0; /* counts that size arrays stay in bounds */
        }
    }
    *v = x;
}

static void io_u32(kcap_io *io, uint32_t *v, uint32_t max)
{
    uint64_t x = *v;
    io_u64(io, &x, max);
    *v = (uint32_t)x;
}

static void io_i32(kcap_io *io, int32_t *v)
{
    uint64_t z = (uint64_t)(((uint32_t)*v << 1) ^ (uint32_t)(*v >> 31));
    io_u64(io, &z, UINT32_MAX);
    *v = (int32_t)((uint32_t)(z >> 1) ^ (0u - (uint32_t)(z & 1)));
}

static void io_f32(kcap_io *io, float *f)
{
    uint8_t b[4];
    if (io->mode != IO_READ) {
        uint32_t u;
        memcpy(&u, f, 4);
        for (int i = 0; i < 4; i++)
            b[i] = (uint8_t)(u >> (8 * i));
        put_bytes(io, b, 4);
        return;
    }
    if (io->len - io->pos < 4) {
        fail(io, "the record ends inside a float");
        *f = 0;
        return;
    }
    uint32_t u = 0;
    for (int i = 0; i < 4; i++)
        u |= (uint32_t)io->in[io->pos + i] << (8 * i);
    io->pos += 4;
    memcpy(f, &u, 4);
}

/* Enums and flags through a uint32_t. */
#define IO_ENUM(io, lvalue, max)                                                                   \
    do {                                                                                           \
        uint32_t t_ = (uint32_t)(lvalue);                                                          \
        io_u32((io), &t_, (max));                                                                  \
        (lvalue) = t_;                                                                             \
    } while (0)
#define IO_BOOL(io, lvalue) IO_ENUM(io, lvalue, 1)

static void io_floats(kcap_io *io, float *f, int n)
{
    for (int i = 0; i < n; i++)
        io_f32(io, &f[i]);
}

/* A byte string of exactly `want` bytes (UINT64_MAX: any length). */
static void io_bytes(kcap_io *io, kcap_bytes *b, uint64_t want)
{
    if (io->mode != IO_READ) {
        put_varint(io, b->size);
        put_bytes(io, b->data, (size_t)b->size);
        return;
    }
    uint64_t n = get_varint(io);
    b->data = NULL;
    b->size = 0;
    if (io->error)
        return;
    if (n > io->len - io->pos) {
        fail(io, "a byte string runs past the end of its record");
        return;
    }
    if (want != UINT64_MAX && n != want) {
        fail(io, "a byte string's length does not match the sizes the record states");
        return;
    }
    b->data = io->in + io->pos;
    b->size = n;
    io->pos += (size_t)n;
}

/* Rows of row_bytes, tight in the file. */
static void io_rows(kcap_io *io, kcap_rows *r)
{
    io_u32(io, &r->row_bytes, UINT32_MAX);
    io_u32(io, &r->rows, UINT32_MAX);
    uint64_t total = (uint64_t)r->row_bytes * r->rows;
    if (io->mode != IO_READ) {
        put_varint(io, total);
        if (io->mode == IO_SIZE)
            io->size += total;
        else
            for (uint32_t y = 0; y < r->rows; y++)
                io->put(io->user, r->data + (size_t)y * r->pitch, r->row_bytes);
        return;
    }
    kcap_bytes b;
    io_bytes(io, &b, total);
    r->data = b.data;
    r->pitch = r->row_bytes;
}

static void io_str(kcap_io *io, char *s, size_t cap)
{
    kcap_bytes b = {(const uint8_t *)s, strlen(s)};
    if (io->mode != IO_READ) {
        io_bytes(io, &b, UINT64_MAX);
        return;
    }
    io_bytes(io, &b, UINT64_MAX);
    s[0] = 0;
    if (io->error)
        return;
    if (b.size >= cap) {
        fail(io, "a name is too long");
        return;
    }
    for (uint64_t i = 0; i < b.size; i++) {
        uint8_t c = b.data[i];
        if (c < 0x21 || c > 0x7e) {
            fail(io, "a name holds a byte that is not printable ASCII");
            return;
        }
    }
    memcpy(s, b.data, (size_t)b.size);
    s[b.size] = 0;
}

static void io_box(kcap_io *io, kiln_box *b)
{
    io_u32(io, &b->left, UINT32_MAX);
    io_u32(io, &b->top, UINT32_MAX);
    io_u32(io, &b->front, UINT32_MAX);
    io_u32(io, &b->right, UINT32_MAX);
    io_u32(io, &b->bottom, UINT32_MAX);
    io_u32(io, &b->back, UINT32_MAX);
}

/* Handles and context ids are plain u32 varints. */
#define IO_ID(io, lvalue) io_u32((io), &(lvalue), UINT32_MAX)

/* ---- sizes the records must agree with ---- */

static uint32_t full_chain(uint32_t w, uint32_t h)
{
    uint32_t n = 1, m = w > h ? w : h;
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

/* Bytes of a texture's initial data: every subresource's rows, tight. The
 * desc is already range-checked (sizes <= 8192, mips <= the chain). */
static uint64_t texture_init_bytes(const kiln_texture2d_desc *d, uint32_t depth)
{
    uint32_t mips = d->mip_levels ? d->mip_levels : full_chain(d->width > depth ? d->width : depth, d->height);
    uint32_t layers = d->array_size ? d->array_size : 1;
    uint64_t per_layer = 0;
    for (uint32_t m = 0; m < mips; m++) {
        uint64_t w = d->width >> m ? d->width >> m : 1, h = d->height >> m ? d->height >> m : 1;
        uint64_t z = depth >> m ? depth >> m : 1;
        per_layer += (uint64_t)kcap_row_bytes(d->format, (uint32_t)w) * kcap_row_count(d->format, (uint32_t)h) * z;
    }
    return per_layer * layers;
}

/* ---- the changed ranges of an Unmap ---- */

void kcap_range_begin(const kcap_ranges *r, kcap_range_iter *it)
{
    it->p = r->encoded.data;
    it->end = r->encoded.data + r->encoded.size;
    it->next_offset = 0;
}

/* Reads a varint the decoder has already checked. */
static uint64_t iter_varint(kcap_range_iter *it)
{
    uint64_t v = 0;
    for (unsigned shift = 0; it->p < it->end; shift += 7) {
        uint8_t b = *it->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

bool kcap_range_next(kcap_range_iter *it, uint64_t *offset, uint64_t *size, const uint8_t **bytes)
{
    if (it->p >= it->end)
        return false;
    *offset = it->next_offset + iter_varint(it);
    *size = iter_varint(it);
    *bytes = it->p;
    it->p += *size;
    it->next_offset = *offset + *size;
    return true;
}

/* count, then per range: gap from the end of the previous one, length,
 * bytes. Each range lies inside the subresource's tight bytes; ranges are
 * in order and do not overlap. */
static void io_ranges(kcap_io *io, kcap_ranges *r)
{
    io_u32(io, &r->count, UINT32_MAX);
    io_u64(io, &r->tight_size, UINT64_MAX);
    if (io->mode != IO_READ && !r->list) { /* a decoded call, encoded again */
        put_bytes(io, r->encoded.data, (size_t)r->encoded.size);
        return;
    }
    if (io->mode != IO_READ) {
        uint64_t end = 0;
        for (uint32_t i = 0; i < r->count; i++) {
            uint64_t off = r->list[2 * i], n = r->list[2 * i + 1];
            put_varint(io, off - end);
            kcap_bytes b = {r->base + off, n};
            io_bytes(io, &b, UINT64_MAX);
            end = off + n;
        }
        return;
    }
    size_t start = io->pos;
    uint64_t end = 0;
    for (uint32_t i = 0; i < r->count && !io->error; i++) {
        uint64_t gap = get_varint(io);
        kcap_bytes b;
        io_bytes(io, &b, UINT64_MAX);
        if (io->error)
            break;
        if (gap > r->tight_size - end || b.size > r->tight_size - end - gap)
            fail(io, "a written range lies outside its subresource");
        end += gap + b.size;
    }
    r->encoded.data = io->in + start;
    r->encoded.size = io->pos - start;
    r->list = NULL;
    r->base = NULL;
}

/* ---- every record's fields ---- */

#define FORMAT_MAX (KILN_FORMAT_COUNT - 1)

/* A texture desc: CREATE_TEXTURE2D's fields; CREATE_TEXTURE1D's (no
 * height, which reads as 1); CREATE_TEXTURE3D's (a depth, no array size);
 * CREATE_TEXTURE_CUBE's (the size, no height nor array size, which read
 * as the size and 6). */
static void io_texture_desc(kcap_io *io, kcap_call *c)
{
    kiln_texture2d_desc *d = &c->u.texture.desc;
    uint32_t max = c->op == KCAP_OP_CREATE_TEXTURE3D ? 2048 : 8192;
    if (io->mode == IO_READ) {
        c->u.texture.dim = c->op == KCAP_OP_CREATE_TEXTURE1D ? 1 : c->op == KCAP_OP_CREATE_TEXTURE3D ? 3 : 0;
        c->u.texture.depth = 1;
        d->height = 1;
        d->array_size = 1;
    }
    bool cube = c->op == KCAP_OP_CREATE_TEXTURE_CUBE;
    io_u32(io, &d->width, max);
    if (c->op != KCAP_OP_CREATE_TEXTURE1D && !cube)
        io_u32(io, &d->height, max);
    if (c->op == KCAP_OP_CREATE_TEXTURE3D)
        io_u32(io, &c->u.texture.depth, max);
    io_u32(io, &d->mip_levels, 14);
    if (c->op != KCAP_OP_CREATE_TEXTURE3D && !cube)
        io_u32(io, &d->array_size, 512);
    if (cube && io->mode == IO_READ) {
        d->height = d->width;
        d->array_size = 6;
    }
    IO_ENUM(io, d->format, FORMAT_MAX);
    IO_ENUM(io, d->usage, KILN_USAGE_STAGING);
    io_u32(io, &d->bind_flags, UINT32_MAX);
    io_u32(io, &d->cpu_access, UINT32_MAX);
    if (io->mode == IO_READ && !io->error) {
        uint32_t *depth = &c->u.texture.depth;
        if (d->width == 0 || d->height == 0 || *depth == 0) {
            if (!tolerant(io)) {
                fail(io, "a texture size is 0");
                return;
            }
            d->width += !d->width;
            d->height += !d->height;
            *depth += !*depth;
        }
        uint32_t chain = full_chain(d->width > *depth ? d->width : *depth, d->height);
        if (d->mip_levels > chain) {
            if (!tolerant(io))
                fail(io, "more mip levels than the texture's chain");
            else
                d->mip_levels = chain;
        }
    }
}

static void io_stencil_face(kcap_io *io, kiln_stencil_face *f)
{
    IO_ENUM(io, f->fail_op, KILN_STENCIL_OP_DECR);
    IO_ENUM(io, f->depth_fail_op, KILN_STENCIL_OP_DECR);
    IO_ENUM(io, f->pass_op, KILN_STENCIL_OP_DECR);
    IO_ENUM(io, f->func, KILN_COMPARE_ALWAYS);
}

/* start, count (start + count <= max), then count ids. */
static void io_slot_ids(kcap_io *io, kcap_call *c, uint32_t max)
{
    io_u32(io, &c->u.slots.start, max);
    io_u32(io, &c->u.slots.count, max - c->u.slots.start);
    for (uint32_t i = 0; i < c->u.slots.count; i++)
        IO_ID(io, c->u.slots.ids[i]);
}

static void io_draw(kcap_io *io, kcap_call *c, bool indexed, bool instanced)
{
    IO_ID(io, c->ctx);
    io_u32(io, &c->u.draw.count, UINT32_MAX);
    if (instanced)
        io_u32(io, &c->u.draw.instances, UINT32_MAX);
    io_u32(io, &c->u.draw.start, UINT32_MAX);
    if (indexed)
        io_i32(io, &c->u.draw.base_vertex);
    if (instanced)
        io_u32(io, &c->u.draw.start_instance, UINT32_MAX);
    if (io->mode == IO_READ && !instanced)
        c->u.draw.instances = 1;
}

/* A geometry shader's name and desc fields (CREATE_GEOMETRY_SHADER, and
 * CREATE_GEOMETRY_SHADER_SO with one). */
static void io_gs_desc(kcap_io *io, kcap_call *c)
{
    io_str(io, c->u.shader.name, sizeof c->u.shader.name);
    IO_ENUM(io, c->u.shader.gs_input, KILN_GS_INPUT_TRIANGLE_ADJ);
    IO_ENUM(io, c->u.shader.gs_output, KILN_GS_OUTPUT_TRIANGLE_STRIP);
    io_u32(io, &c->u.shader.max_vertices, KILN_GS_MAX_OUTPUT_SCALARS);
    io_u32(io, &c->u.shader.num_varyings, KILN_MAX_VARYINGS);
    io_u32(io, &c->u.shader.flags, KILN_GS_WRITES_RT_ARRAY_INDEX);
}

static void fields(kcap_io *io, kcap_call *c)
{
    switch (c->op) {
    case KCAP_OP_NONE:
    case KCAP_OP_COUNT:
        fail(io, "op 0 is not a record");
        break;
    case KCAP_OP_DEVICE:
        IO_ENUM(io, c->u.device.backend, KILN_BACKEND_OSMESA);
        IO_ENUM(io, c->u.device.exec_mode, KILN_EXEC_SERIAL);
        io_u32(io, &c->u.device.num_threads, 256);
        io_u32(io, &c->u.device.ring_capacity, 1u << 20);
        io_u32(io, &c->u.device.transfer_size, 1u << 30);
        break;
    case KCAP_OP_CONTEXT_STATE:
        IO_ID(io, c->ctx);
        IO_ENUM(io, c->u.state.topology, KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ);
        IO_BOOL(io, c->u.state.viewport_set);
        io_floats(io, &c->u.state.viewport.x, 1);
        io_floats(io, &c->u.state.viewport.y, 1);
        io_floats(io, &c->u.state.viewport.width, 1);
        io_floats(io, &c->u.state.viewport.height, 1);
        io_floats(io, &c->u.state.viewport.min_depth, 1);
        io_floats(io, &c->u.state.viewport.max_depth, 1);
        io_i32(io, &c->u.state.scissor.left);
        io_i32(io, &c->u.state.scissor.top);
        io_i32(io, &c->u.state.scissor.right);
        io_i32(io, &c->u.state.scissor.bottom);
        io_floats(io, c->u.state.blend_factor, 4);
        io_u32(io, &c->u.state.stencil_ref, UINT32_MAX);
        IO_ENUM(io, c->u.state.index_format, KILN_INDEX_UINT32);
        io_u32(io, &c->u.state.index_offset, UINT32_MAX);
        for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++) {
            io_u32(io, &c->u.state.vb_stride[i], UINT32_MAX);
            io_u32(io, &c->u.state.vb_offset[i], UINT32_MAX);
        }
        break;
    case KCAP_OP_END:
    case KCAP_OP_FRAME:
    case KCAP_OP_DEVICE_GET_STATS:
        break;
    case KCAP_OP_FAILED:
        io_u32(io, &c->u.failed.op, KCAP_OP_COUNT - 1);
        io_i32(io, &c->u.failed.result);
        if (io->mode == IO_READ && !io->error && !kcap_op_known(c->u.failed.op))
            fail(io, "a failed call of an op this kiln does not know");
        break;
    case KCAP_OP_CREATE_BUFFER:
        IO_ID(io, c->out[0]);
        io_u32(io, &c->u.buffer.desc.size, 1u << 30);
        IO_ENUM(io, c->u.buffer.desc.usage, KILN_USAGE_STAGING);
        io_u32(io, &c->u.buffer.desc.bind_flags, UINT32_MAX);
        io_u32(io, &c->u.buffer.desc.cpu_access, UINT32_MAX);
        IO_BOOL(io, c->u.buffer.has_init);
        if (c->u.buffer.has_init)
            io_bytes(io, &c->u.buffer.init, c->u.buffer.desc.size);
        break;
    case KCAP_OP_CREATE_TEXTURE2D:
    case KCAP_OP_CREATE_TEXTURE2D_MS:   /* 1.4: then the sample count */
    case KCAP_OP_CREATE_TEXTURE_CUBE:   /* 1.4 */
    case KCAP_OP_CREATE_TEXTURE1D:      /* 1.4 */
    case KCAP_OP_CREATE_TEXTURE3D: {    /* 1.4 */
        IO_ID(io, c->out[0]);
        io_texture_desc(io, c);
        if (c->op == KCAP_OP_CREATE_TEXTURE2D_MS)
            io_u32(io, &c->u.texture.desc.sample_count, 64);
        IO_BOOL(io, c->u.texture.has_init);
        if (!c->u.texture.has_init || io->error)
            break;
        const kiln_texture2d_desc *d = &c->u.texture.desc;
        uint32_t depth = c->u.texture.depth ? c->u.texture.depth : 1;
        if (io->mode == IO_READ || !c->u.texture.src) { /* decoded: the bytes as they are */
            io_bytes(io, &c->u.texture.init, texture_init_bytes(d, depth));
            break;
        }
        /* Every subresource's rows (3D: of every depth slice; BC: rows of
         * blocks), tight, from the caller's pitches. */
        uint32_t mips = d->mip_levels ? d->mip_levels : full_chain(d->width > depth ? d->width : depth, d->height);
        uint32_t layers = d->array_size ? d->array_size : 1;
        put_varint(io, texture_init_bytes(d, depth));
        for (uint32_t s = 0; s < mips * layers; s++) {
            uint32_t m = s % mips, w = d->width >> m ? d->width >> m : 1,
                     h = d->height >> m ? d->height >> m : 1, z = depth >> m ? depth >> m : 1;
            const kiln_subresource_data *sd = &c->u.texture.src[s];
            uint32_t row = kcap_row_bytes(d->format, w);
            kcap_rows r = {row, kcap_row_count(d->format, h), sd->data, sd->row_pitch ? sd->row_pitch : row};
            size_t slice = r.pitch * r.rows;
            if (io->mode == IO_SIZE)
                io->size += (uint64_t)r.row_bytes * r.rows * z;
            else
                for (uint32_t k = 0; k < z; k++)
                    for (uint32_t y = 0; y < r.rows; y++)
                        io->put(io->user, (const uint8_t *)r.data + k * slice + (size_t)y * r.pitch,
                                r.row_bytes);
        }
        break;
    }
    case KCAP_OP_DESTROY_BUFFER:
    case KCAP_OP_DESTROY_TEXTURE:
    case KCAP_OP_BUFFER_GET_DESC:
    case KCAP_OP_TEXTURE_GET_DESC:
    case KCAP_OP_TEXTURE3D_GET_DESC: /* 1.4 */
    case KCAP_OP_DESTROY_RTV:
    case KCAP_OP_DESTROY_DSV:
    case KCAP_OP_DESTROY_SRV:
    case KCAP_OP_DESTROY_TIMELINE:
    case KCAP_OP_TIMELINE_GET_VALUE:
    case KCAP_OP_DESTROY_FENCE:
    case KCAP_OP_FENCE_POLL:
    case KCAP_OP_FENCE_WAIT_ASYNC:
    case KCAP_OP_DESTROY_QUERY:
    case KCAP_OP_DESTROY_VERTEX_SHADER:
    case KCAP_OP_DESTROY_PIXEL_SHADER:
    case KCAP_OP_DESTROY_INPUT_LAYOUT:
    case KCAP_OP_DESTROY_RASTERIZER_STATE:
    case KCAP_OP_DESTROY_DEPTH_STENCIL_STATE:
    case KCAP_OP_DESTROY_BLEND_STATE:
    case KCAP_OP_DESTROY_SAMPLER:
        IO_ID(io, c->u.obj.id);
        break;
    case KCAP_OP_CREATE_RTV:
    case KCAP_OP_CREATE_DSV:
        IO_ID(io, c->out[0]);
        IO_ID(io, c->u.view.texture);
        IO_BOOL(io, c->u.view.has_desc);
        if (c->u.view.has_desc) {
            IO_ENUM(io, c->u.view.rtv.format, FORMAT_MAX);
            io_u32(io, &c->u.view.rtv.mip_slice, 13);
            /* 1.4: up to a 3D texture's 2048 W slices */
            io_u32(io, &c->u.view.rtv.first_array_slice, 2047);
            io_u32(io, &c->u.view.rtv.array_size, 2048);
        }
        break;
    case KCAP_OP_CREATE_SRV:
    case KCAP_OP_CREATE_SRV_DIM: /* 1.4: the same, and the dimension */
        IO_ID(io, c->out[0]);
        IO_ID(io, c->u.view.texture);
        IO_BOOL(io, c->u.view.has_desc);
        if (c->u.view.has_desc) {
            IO_ENUM(io, c->u.view.srv.format, FORMAT_MAX);
            io_u32(io, &c->u.view.srv.most_detailed_mip, 13);
            io_u32(io, &c->u.view.srv.mip_levels, 14);
            io_u32(io, &c->u.view.srv.first_array_slice, 511);
            io_u32(io, &c->u.view.srv.array_size, 512);
            if (c->op == KCAP_OP_CREATE_SRV_DIM)
                IO_ENUM(io, c->u.view.srv.dimension, KILN_SRV_DIMENSION_TEXTURECUBE);
        }
        break;
    case KCAP_OP_CREATE_BUFFER_SRV: /* 1.4 */
        IO_ID(io, c->out[0]);
        IO_ID(io, c->u.view.texture); /* the buffer */
        IO_BOOL(io, c->u.view.has_desc);
        if (c->u.view.has_desc) {
            IO_ENUM(io, c->u.view.buf.format, FORMAT_MAX);
            io_u32(io, &c->u.view.buf.first_element, 1u << 30);
            io_u32(io, &c->u.view.buf.num_elements, 1u << 30);
        }
        break;
    case KCAP_OP_CLEAR_RTV:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.clear_rtv.view);
        io_floats(io, c->u.clear_rtv.color, 4);
        break;
    case KCAP_OP_CLEAR_DSV:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.clear_dsv.view);
        io_u32(io, &c->u.clear_dsv.flags, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL);
        io_f32(io, &c->u.clear_dsv.depth);
        io_u32(io, &c->u.clear_dsv.stencil, 255);
        break;
    case KCAP_OP_UPDATE_SUBRESOURCE:
    case KCAP_OP_UPDATE_SUBRESOURCE_3D: /* 1.4: the rows of several depth slices */
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.update.dst);
        io_u32(io, &c->u.update.sub, 512 * 14 - 1);
        IO_BOOL(io, c->u.update.has_box);
        if (c->u.update.has_box)
            io_box(io, &c->u.update.box);
        io_rows(io, &c->u.update.data);
        break;
    case KCAP_OP_COPY_RESOURCE:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.copy.dst);
        IO_ID(io, c->u.copy.src);
        break;
    case KCAP_OP_RESOLVE_SUBRESOURCE:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.resolve.dst);
        io_u32(io, &c->u.resolve.dst_sub, 512 * 14 - 1);
        IO_ID(io, c->u.resolve.src);
        io_u32(io, &c->u.resolve.src_sub, 512 * 14 - 1);
        IO_ENUM(io, c->u.resolve.format, FORMAT_MAX);
        break;
    case KCAP_OP_COPY_SUBRESOURCE_REGION:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.region.dst);
        io_u32(io, &c->u.region.dst_sub, 512 * 14 - 1);
        io_u32(io, &c->u.region.x, UINT32_MAX);
        io_u32(io, &c->u.region.y, UINT32_MAX);
        io_u32(io, &c->u.region.z, UINT32_MAX);
        IO_ID(io, c->u.region.src);
        io_u32(io, &c->u.region.src_sub, 512 * 14 - 1);
        IO_BOOL(io, c->u.region.has_box);
        if (c->u.region.has_box)
            io_box(io, &c->u.region.box);
        break;
    case KCAP_OP_MAP:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.map.res);
        io_u32(io, &c->u.map.sub, 512 * 14 - 1);
        io_u32(io, &c->u.map.type, KILN_MAP_WRITE_NO_OVERWRITE);
        io_u32(io, &c->u.map.flags, UINT32_MAX);
        if (io->mode == IO_READ && !io->error && c->u.map.type < KILN_MAP_READ) {
            if (tolerant(io))
                c->u.map.type = KILN_MAP_READ;
            else
                fail(io, "map type 0");
        }
        break;
    case KCAP_OP_UNMAP:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.unmap.res);
        io_u32(io, &c->u.unmap.sub, 512 * 14 - 1);
        io_u32(io, &c->u.unmap.kind, KCAP_UNMAP_RANGES);
        if (c->u.unmap.kind == KCAP_UNMAP_FULL)
            io_rows(io, &c->u.unmap.full);
        else if (c->u.unmap.kind == KCAP_UNMAP_RANGES)
            io_ranges(io, &c->u.unmap.ranges);
        break;
    case KCAP_OP_FLUSH:
    case KCAP_OP_FINISH:
    case KCAP_OP_CONTEXT_DESTROY:
        IO_ID(io, c->ctx);
        break;
    case KCAP_OP_CONTEXT_CREATE:
        IO_ID(io, c->out[0]);
        break;
    case KCAP_OP_CREATE_TIMELINE:
        IO_ID(io, c->out[0]);
        io_u64(io, &c->u.tl.value, UINT64_MAX);
        break;
    case KCAP_OP_TIMELINE_SIGNAL:
        IO_ID(io, c->u.tl.timeline);
        io_u64(io, &c->u.tl.value, UINT64_MAX);
        break;
    case KCAP_OP_CREATE_FENCE:
        IO_ID(io, c->out[0]);
        IO_ID(io, c->u.tl.timeline);
        io_u64(io, &c->u.tl.value, UINT64_MAX);
        break;
    case KCAP_OP_FENCE_MERGE:
        IO_ID(io, c->out[0]);
        IO_ID(io, c->u.merge.a);
        IO_ID(io, c->u.merge.b);
        break;
    case KCAP_OP_FENCE_WAIT:
        IO_ID(io, c->u.wait.fence);
        io_u64(io, &c->u.wait.timeout, UINT64_MAX);
        break;
    case KCAP_OP_CONTEXT_SIGNAL:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.tl.timeline);
        io_u64(io, &c->u.tl.value, UINT64_MAX);
        break;
    case KCAP_OP_CONTEXT_WAIT:
    case KCAP_OP_QUERY_BEGIN:
    case KCAP_OP_QUERY_END:
    case KCAP_OP_VS_SET_SHADER:
    case KCAP_OP_PS_SET_SHADER:
    case KCAP_OP_IA_SET_INPUT_LAYOUT:
    case KCAP_OP_RS_SET_STATE:
    case KCAP_OP_GENERATE_MIPS:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.obj.id);
        break;
    case KCAP_OP_CONTEXT_INSERT_FENCE:
        IO_ID(io, c->ctx);
        IO_ID(io, c->out[0]);
        break;
    case KCAP_OP_CONTEXT_SYNC_TOKEN:
    case KCAP_OP_CONTEXT_WAIT_SYNC_TOKEN:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.token.timeline);
        io_u64(io, &c->u.token.value, UINT64_MAX);
        break;
    case KCAP_OP_WAIT_SYNC_TOKEN:
        IO_ID(io, c->u.token.timeline);
        io_u64(io, &c->u.token.value, UINT64_MAX);
        io_u64(io, &c->u.token.timeout, UINT64_MAX);
        break;
    case KCAP_OP_CREATE_QUERY:
        IO_ID(io, c->out[0]);
        IO_ENUM(io, c->u.query.type, KILN_QUERY_TYPE_COUNT - 1);
        break;
    case KCAP_OP_QUERY_GET_DATA:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.get_data.query);
        IO_BOOL(io, c->u.get_data.has_data);
        io_u32(io, &c->u.get_data.flags, KILN_GET_DATA_DO_NOT_FLUSH);
        break;
    case KCAP_OP_CREATE_VERTEX_SHADER:
        IO_ID(io, c->out[0]);
        io_str(io, c->u.shader.name, sizeof c->u.shader.name);
        io_u32(io, &c->u.shader.num_inputs, KILN_MAX_INPUT_ELEMENTS);
        io_u32(io, &c->u.shader.num_varyings, KILN_MAX_VARYINGS);
        IO_BOOL(io, c->u.shader.has_glsl);
        break;
    case KCAP_OP_CREATE_PIXEL_SHADER:
        IO_ID(io, c->out[0]);
        io_str(io, c->u.shader.name, sizeof c->u.shader.name);
        io_u32(io, &c->u.shader.num_varyings, KILN_MAX_VARYINGS);
        io_u32(io, &c->u.shader.num_outputs, KILN_MAX_RENDER_TARGETS);
        io_u32(io, &c->u.shader.flags, KILN_PS_MAY_DISCARD | KILN_PS_NO_Z);
        IO_BOOL(io, c->u.shader.has_glsl);
        break;
    case KCAP_OP_CREATE_INPUT_LAYOUT: {
        kiln_input_layout_desc *d = &c->u.layout.desc;
        IO_ID(io, c->out[0]);
        IO_ID(io, c->u.layout.vs);
        io_u32(io, &d->num_elements, KILN_MAX_INPUT_ELEMENTS);
        for (uint32_t i = 0; i < d->num_elements; i++) {
            kiln_input_element *e = &d->elements[i];
            IO_ENUM(io, e->format, FORMAT_MAX);
            io_u32(io, &e->slot, KILN_MAX_VERTEX_BUFFERS - 1);
            io_u32(io, &e->offset, 2048);
            IO_BOOL(io, e->per_instance);
            io_u32(io, &e->instance_step_rate, UINT32_MAX);
        }
        break;
    }
    case KCAP_OP_CREATE_RASTERIZER_STATE: {
        kiln_rasterizer_desc *d = &c->u.rasterizer;
        IO_ID(io, c->out[0]);
        IO_ENUM(io, d->fill, KILN_FILL_WIREFRAME);
        IO_ENUM(io, d->cull, KILN_CULL_BACK);
        io_u32(io, &d->front_ccw, UINT32_MAX);
        io_i32(io, &d->depth_bias);
        io_f32(io, &d->depth_bias_clamp);
        io_f32(io, &d->slope_scaled_depth_bias);
        io_u32(io, &d->depth_clip_disable, UINT32_MAX);
        io_u32(io, &d->scissor_enable, UINT32_MAX);
        break;
    }
    case KCAP_OP_CREATE_DEPTH_STENCIL_STATE: {
        kiln_depth_stencil_desc *d = &c->u.depth_stencil;
        IO_ID(io, c->out[0]);
        io_u32(io, &d->depth_disable, UINT32_MAX);
        io_u32(io, &d->depth_write_disable, UINT32_MAX);
        IO_ENUM(io, d->depth_func, KILN_COMPARE_ALWAYS);
        io_u32(io, &d->stencil_enable, UINT32_MAX);
        io_u32(io, &d->stencil_read_mask, KILN_MASK_NONE);
        io_u32(io, &d->stencil_write_mask, KILN_MASK_NONE);
        io_stencil_face(io, &d->front);
        io_stencil_face(io, &d->back);
        break;
    }
    case KCAP_OP_CREATE_BLEND_STATE:
    case KCAP_OP_CREATE_BLEND_STATE_8: /* 1.3: all 8 targets; the older record 4 (the rest default) */
    case KCAP_OP_CREATE_BLEND_STATE_A2C: /* 1.4: all 8 targets, then alpha_to_coverage */
        IO_ID(io, c->out[0]);
        for (uint32_t i = 0; i < (c->op == KCAP_OP_CREATE_BLEND_STATE ? KCAP_BLEND_TARGETS_1_0
                                                                    : KILN_MAX_RENDER_TARGETS);
             i++) {
            kiln_blend_target *t = &c->u.blend.rt[i];
            IO_BOOL(io, t->enable);
            IO_ENUM(io, t->src, KILN_BLEND_INV_BLEND_FACTOR);
            IO_ENUM(io, t->dst, KILN_BLEND_INV_BLEND_FACTOR);
            IO_ENUM(io, t->op, KILN_BLEND_OP_MAX);
            IO_ENUM(io, t->src_alpha, KILN_BLEND_INV_BLEND_FACTOR);
            IO_ENUM(io, t->dst_alpha, KILN_BLEND_INV_BLEND_FACTOR);
            IO_ENUM(io, t->op_alpha, KILN_BLEND_OP_MAX);
            io_u32(io, &t->write_mask, KILN_COLOR_WRITE_NONE);
        }
        if (c->op == KCAP_OP_CREATE_BLEND_STATE_A2C)
            IO_BOOL(io, c->u.blend.alpha_to_coverage);
        break;
    case KCAP_OP_CREATE_SAMPLER:
    case KCAP_OP_CREATE_SAMPLER_CMP:   /* 1.3: the same, and the comparison function */
    case KCAP_OP_CREATE_SAMPLER_EXT:   /* 1.4: CMP's fields, then max_anisotropy */
    case KCAP_OP_CREATE_SAMPLER_W: {   /* 1.4: CMP's fields, then max_anisotropy and address_w */
        kiln_sampler_desc *d = &c->u.sampler;
        IO_ID(io, c->out[0]);
        /* 1.4 widens the filters to ANISOTROPIC, the modes to MIRROR_ONCE */
        IO_ENUM(io, d->min_filter, KILN_FILTER_ANISOTROPIC);
        IO_ENUM(io, d->mag_filter, KILN_FILTER_ANISOTROPIC);
        IO_ENUM(io, d->mip_filter, KILN_FILTER_ANISOTROPIC);
        IO_ENUM(io, d->address_u, KILN_ADDRESS_MIRROR_ONCE);
        IO_ENUM(io, d->address_v, KILN_ADDRESS_MIRROR_ONCE);
        io_f32(io, &d->mip_lod_bias);
        io_u32(io, &d->lod_clamp_enable, UINT32_MAX);
        io_f32(io, &d->min_lod);
        io_f32(io, &d->max_lod);
        io_floats(io, d->border_color, 4);
        if (c->op != KCAP_OP_CREATE_SAMPLER)
            IO_ENUM(io, d->comparison_func, KILN_COMPARE_ALWAYS);
        if (c->op == KCAP_OP_CREATE_SAMPLER_EXT || c->op == KCAP_OP_CREATE_SAMPLER_W)
            io_u32(io, &d->max_anisotropy, 16);
        if (c->op == KCAP_OP_CREATE_SAMPLER_W)
            IO_ENUM(io, d->address_w, KILN_ADDRESS_MIRROR_ONCE);
        break;
    }
    case KCAP_OP_IA_SET_VERTEX_BUFFERS:
        IO_ID(io, c->ctx);
        io_u32(io, &c->u.slots.start, KILN_MAX_VERTEX_BUFFERS);
        io_u32(io, &c->u.slots.count, KILN_MAX_VERTEX_BUFFERS - c->u.slots.start);
        for (uint32_t i = 0; i < c->u.slots.count; i++) {
            IO_ID(io, c->u.slots.ids[i]);
            io_u32(io, &c->u.slots.strides[i], UINT32_MAX);
            io_u32(io, &c->u.slots.offsets[i], UINT32_MAX);
        }
        break;
    case KCAP_OP_IA_SET_INDEX_BUFFER:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.ib.buffer);
        IO_ENUM(io, c->u.ib.format, KILN_INDEX_UINT32);
        io_u32(io, &c->u.ib.offset, UINT32_MAX);
        break;
    case KCAP_OP_IA_SET_TOPOLOGY:
        IO_ID(io, c->ctx);
        IO_ENUM(io, c->u.topology.topology, KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ);
        break;
    case KCAP_OP_VS_SET_CONSTANT_BUFFERS:
    case KCAP_OP_PS_SET_CONSTANT_BUFFERS:
        IO_ID(io, c->ctx);
        io_slot_ids(io, c, KILN_MAX_CONSTANT_BUFFERS);
        break;
    case KCAP_OP_PS_SET_SHADER_RESOURCES:
    case KCAP_OP_VS_SET_SHADER_RESOURCES: /* 1.4 */
    case KCAP_OP_GS_SET_SHADER_RESOURCES: /* 1.4 */
        IO_ID(io, c->ctx);
        io_slot_ids(io, c, KILN_MAX_SHADER_RESOURCES);
        break;
    case KCAP_OP_PS_SET_SAMPLERS:
    case KCAP_OP_VS_SET_SAMPLERS: /* 1.4 */
    case KCAP_OP_GS_SET_SAMPLERS: /* 1.4 */
        IO_ID(io, c->ctx);
        io_slot_ids(io, c, KILN_MAX_SAMPLERS);
        break;
    case KCAP_OP_RS_SET_VIEWPORT:
        IO_ID(io, c->ctx);
        io_f32(io, &c->u.viewport.x);
        io_f32(io, &c->u.viewport.y);
        io_f32(io, &c->u.viewport.width);
        io_f32(io, &c->u.viewport.height);
        io_f32(io, &c->u.viewport.min_depth);
        io_f32(io, &c->u.viewport.max_depth);
        break;
    case KCAP_OP_RS_SET_SCISSOR_RECT:
        IO_ID(io, c->ctx);
        io_i32(io, &c->u.scissor.left);
        io_i32(io, &c->u.scissor.top);
        io_i32(io, &c->u.scissor.right);
        io_i32(io, &c->u.scissor.bottom);
        break;
    case KCAP_OP_OM_SET_RENDER_TARGETS:
        IO_ID(io, c->ctx);
        io_u32(io, &c->u.rts.count, KILN_MAX_RENDER_TARGETS);
        for (uint32_t i = 0; i < c->u.rts.count; i++)
            IO_ID(io, c->u.rts.rtv[i]);
        IO_ID(io, c->u.rts.dsv);
        break;
    case KCAP_OP_OM_SET_BLEND_STATE:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.blend_set.state);
        IO_BOOL(io, c->u.blend_set.has_factor);
        if (c->u.blend_set.has_factor)
            io_floats(io, c->u.blend_set.factor, 4);
        break;
    case KCAP_OP_OM_SET_DEPTH_STENCIL_STATE:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.dss_set.state);
        io_u32(io, &c->u.dss_set.ref, UINT32_MAX);
        break;
    case KCAP_OP_DRAW:
        io_draw(io, c, false, false);
        break;
    case KCAP_OP_DRAW_INDEXED:
        io_draw(io, c, true, false);
        break;
    case KCAP_OP_DRAW_INSTANCED:
        io_draw(io, c, false, true);
        break;
    case KCAP_OP_DRAW_INDEXED_INSTANCED:
        io_draw(io, c, true, true);
        break;
    case KCAP_OP_SWAPCHAIN_CREATE:
        IO_ID(io, c->ctx);
        IO_ID(io, c->out[0]);
        io_u32(io, &c->u.swapchain.width, 8192);
        io_u32(io, &c->u.swapchain.height, 8192);
        IO_ENUM(io, c->u.swapchain.format, FORMAT_MAX);
        io_u32(io, &c->u.swapchain.buffer_count, 3);
        IO_ENUM(io, c->u.swapchain.mode, KILN_PRESENT_MAILBOX);
        IO_ENUM(io, c->u.swapchain.winsys, KILN_WINSYS_X11);
        break;
    case KCAP_OP_SWAPCHAIN_DESTROY:
    case KCAP_OP_SWAPCHAIN_PRESENT:
    case KCAP_OP_SWAPCHAIN_GET_STATS:
    case KCAP_OP_SWAPCHAIN_WAIT_IDLE:
        IO_ID(io, c->swapchain);
        break;
    case KCAP_OP_SET_PREDICATION:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.pred.query);
        IO_BOOL(io, c->u.pred.value);
        break;
    case KCAP_OP_CREATE_GEOMETRY_SHADER:
        IO_ID(io, c->out[0]);
        io_gs_desc(io, c);
        break;
    case KCAP_OP_DESTROY_GEOMETRY_SHADER:
        IO_ID(io, c->u.obj.id);
        break;
    case KCAP_OP_GS_SET_SHADER:
        IO_ID(io, c->ctx);
        IO_ID(io, c->u.obj.id);
        break;
    case KCAP_OP_CREATE_GEOMETRY_SHADER_SO:
        IO_ID(io, c->out[0]);
        IO_BOOL(io, c->u.shader.has_gs);
        if (c->u.shader.has_gs)
            io_gs_desc(io, c);
        io_u32(io, &c->u.shader.so_count, KILN_SO_MAX_ELEMENTS);
        for (uint32_t i = 0; i < c->u.shader.so_count; i++) {
            kiln_so_element *e = &c->u.shader.so[i];
            io_u32(io, &e->reg, KILN_MAX_VARYINGS);
            io_u32(io, &e->start_component, 3);
            io_u32(io, &e->component_count, 4);
            io_u32(io, &e->slot, KILN_SO_BUFFER_SLOTS - 1);
        }
        io_u32(io, &c->u.shader.so_stride, 2048);
        break;
    case KCAP_OP_SO_SET_TARGETS:
        IO_ID(io, c->ctx);
        io_u32(io, &c->u.slots.count, KILN_SO_BUFFER_SLOTS);
        for (uint32_t i = 0; i < c->u.slots.count; i++)
            IO_ID(io, c->u.slots.ids[i]);
        IO_BOOL(io, c->u.slots.has_offsets);
        if (c->u.slots.has_offsets)
            for (uint32_t i = 0; i < c->u.slots.count; i++)
                io_u32(io, &c->u.slots.offsets[i], UINT32_MAX);
        break;
    case KCAP_OP_DRAW_AUTO:
        IO_ID(io, c->ctx);
        break;
    case KCAP_OP_SWAPCHAIN_GET_BACK_BUFFER:
        IO_ID(io, c->swapchain);
        IO_ID(io, c->out[0]);
        IO_ID(io, c->out[1]);
        break;
    case KCAP_OP_SWAPCHAIN_RESIZE:
        IO_ID(io, c->swapchain);
        io_u32(io, &c->u.swapchain.width, 8192);
        io_u32(io, &c->u.swapchain.height, 8192);
        break;
    }
}

/* ---- framing ---- */

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void kcap_encode_header(uint8_t out[KCAP_HEADER_SIZE])
{
    memcpy(out, KCAP_MAGIC, 8); /* with its NUL */
    put_u16(out + 8, KCAP_VERSION_MAJOR);
    put_u16(out + 10, KCAP_VERSION_MINOR);
    put_u32(out + 12, KCAP_HEADER_SIZE);
}

bool kcap_decode_header(const uint8_t *bytes, size_t len, kcap_header *out, kcap_error *err)
{
    err->offset = 0;
    if (len < KCAP_HEADER_SIZE || memcmp(bytes, KCAP_MAGIC, 8) != 0) {
        snprintf(err->message, sizeof err->message, "%s",
                 len < 8 || memcmp(bytes, KCAP_MAGIC, len < 8 ? len : 8) != 0
                     ? "not a kiln capture (the file does not start with \"KILNCAP\")"
                     : "the file ends inside its 16-byte header");
        return false;
    }
    out->major = get_u16(bytes + 8);
    out->minor = get_u16(bytes + 10);
    out->size = get_u32(bytes + 12);
    if (out->major != KCAP_VERSION_MAJOR || out->minor > KCAP_VERSION_MINOR) {
        snprintf(err->message, sizeof err->message,
                 "capture format %u.%u; this kiln reads %u.0 to %u.%u", out->major, out->minor,
                 KCAP_VERSION_MAJOR, KCAP_VERSION_MAJOR, KCAP_VERSION_MINOR);
        return false;
    }
    if (out->size < KCAP_HEADER_SIZE || out->size > len) {
        err->offset = 12;
        snprintf(err->message, sizeof err->message, "header size %u is outside 16..%zu", out->size,
                 len);
        return false;
    }
    return true;
}

uint64_t kcap_encoded_size(const kcap_call *c)
{
    kcap_io io = {.mode = IO_SIZE};
    fields(&io, (kcap_call *)c);
    uint64_t payload = io.size;
    io.size = 0;
    put_varint(&io, (uint64_t)c->op);
    put_varint(&io, payload);
    return io.size + payload;
}

void kcap_encode(const kcap_call *c, kcap_put_fn put, void *user)
{
    kcap_io io = {.mode = IO_SIZE};
    fields(&io, (kcap_call *)c); /* the WRITE pass does not change *c */
    uint64_t payload = io.size;
    io = (kcap_io){.mode = IO_WRITE, .put = put, .user = user};
    put_varint(&io, (uint64_t)c->op);
    put_varint(&io, payload);
    fields(&io, (kcap_call *)c);
}

bool kcap_decode(const uint8_t *bytes, size_t len, size_t offset, unsigned flags, kcap_call *out,
                 size_t *next, kcap_error *err)
{
    memset(out, 0, sizeof *out);
    err->offset = offset;
    err->message[0] = 0;
    kcap_io io = {.mode = IO_READ, .flags = flags, .in = bytes + offset, .len = len - offset};
    uint64_t op = get_varint(&io);
    uint64_t payload = io.error ? 0 : get_varint(&io);
    if (io.error) {
        snprintf(err->message, sizeof err->message, "record header: %s", io.error);
        return false;
    }
    if (!kcap_op_known(op)) {
        if (!(flags & KCAP_DECODE_TOLERANT)) {
            snprintf(err->message, sizeof err->message,
                     "unknown op %llu (this kiln knows 1..%d; a newer capture?)",
                     (unsigned long long)op, KCAP_OP_COUNT - 1);
            return false;
        }
        /* onto the known ops, 1..KCAP_OP_COUNT - 1 */
        op = 1 + op % (KCAP_OP_COUNT - 1);
    }
    if (payload > io.len - io.pos) {
        snprintf(err->message, sizeof err->message,
                 "%s record of %llu bytes, but only %zu remain (truncated?)",
                 kcap_op_name((uint32_t)op), (unsigned long long)payload, io.len - io.pos);
        return false;
    }
    out->op = (kcap_op)op;
    /* Parse the payload alone: a field can never read the next record. */
    kcap_io p = {.mode = IO_READ, .flags = flags, .in = io.in + io.pos, .len = (size_t)payload};
    fields(&p, out);
    if (!p.error && p.pos != p.len)
        p.error = "bytes are left after the record's last field";
    if (p.error) {
        snprintf(err->message, sizeof err->message, "%s record: %s", kcap_op_name((uint32_t)op),
                 p.error);
        return false;
    }
    *next = offset + io.pos + (size_t)payload;
    return true;
}
