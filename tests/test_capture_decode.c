/*
 * The capture decoder and the replay's checks against damaged captures.
 *
 * - Round trip: every record of real captures (example scenes, small)
 *   decodes and encodes back to the same bytes.
 * - Truncation at every byte offset: always refused, at exactly the offset
 *   of the first record the cut damages (or of the missing END).
 * - Random byte flips: a clean refusal with an offset inside the file, or
 *   a replay that runs to its end; never a crash (the asan preset runs
 *   this under AddressSanitizer and UndefinedBehaviorSanitizer).
 * - Random bytes decoded in the tolerant mode (what a fuzzer uses): records
 *   or errors, nothing else.
 * - Hand-built bad records: the exact offset and reason of each.
 */
#include "capture_util.h"
#include "scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a growable byte buffer, as a kcap_put_fn sink ---- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(void *user, const void *bytes, size_t n)
{
    buf *b = user;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->n, bytes, n);
    b->n += n;
}

/* A live capture of one scene at a small size, in memory. */
static uint8_t *capture_scene(const char *name, uint32_t w, uint32_t h, size_t *len)
{
    const scene *sc = NULL;
    for (size_t i = 0; i < demo_num_scenes; i++)
        if (strcmp(demo_scenes[i]->name, name) == 0)
            sc = demo_scenes[i];
    char path[128];
    snprintf(path, sizeof path, "capture_decode_%s.kcap", name);
    uint8_t *pixels = malloc((size_t)w * h * 4);
    demo d = {.w = w, .h = h, .scene = name};
    d.dev = th_device(KILN_EXEC_SERIAL, 0);
    d.ctx = kiln_device_immediate_context(d.dev);
    CHECK_RESULT(kiln_capture_begin(d.dev, path), KILN_OK);
    CHECK(sc && demo_render(&d, sc, 1, pixels, NULL, NULL, NULL) == 0);
    CHECK_RESULT(kiln_capture_end(d.dev), KILN_OK);
    kiln_device_destroy(d.dev);
    free(pixels);
    uint8_t *bytes = cu_read(path, len);
    remove(path);
    return bytes;
}

/* Start offsets of the records (after the header); returns the count. */
static size_t record_starts(const uint8_t *bytes, size_t len, size_t *starts, size_t max)
{
    kcap_header h;
    kcap_error err;
    size_t n = 0;
    if (!kcap_decode_header(bytes, len, &h, &err))
        return 0;
    kcap_call c;
    for (size_t off = h.size, next; off < len && n < max; off = next) {
        if (!kcap_decode(bytes, len, off, 0, &c, &next, &err))
            break;
        starts[n++] = off;
    }
    return n;
}

static void test_round_trip(const uint8_t *bytes, size_t len)
{
    kcap_header h;
    kcap_error err;
    CHECK(kcap_decode_header(bytes, len, &h, &err));
    size_t records = 0, same = 0;
    kcap_call c;
    for (size_t off = h.size, next; off < len; off = next) {
        if (!kcap_decode(bytes, len, off, 0, &c, &next, &err)) {
            CHECK(!"a record of a live capture does not decode");
            fprintf(stderr, "    at %llu: %s\n", (unsigned long long)err.offset, err.message);
            return;
        }
        buf b = {0};
        kcap_encode(&c, put, &b);
        records++;
        same +=
            b.n == next - off && kcap_encoded_size(&c) == b.n && memcmp(b.p, bytes + off, b.n) == 0;
        free(b.p);
    }
    CHECK(records > 3);
    CHECK_EQ_INT(same, records);
}

static kiln_result replay(const uint8_t *bytes, size_t len, kcap_replay_report *rep)
{
    return cu_replay(bytes, len, KILN_EXEC_SERIAL, 0, NULL, NULL, rep);
}

static void test_truncation(const uint8_t *bytes, size_t len)
{
    static size_t starts[1 << 16];
    size_t n = record_starts(bytes, len, starts, sizeof starts / sizeof starts[0]);
    kcap_replay_report rep;
    CHECK_RESULT(replay(bytes, len, &rep), KILN_OK);
    size_t exact = 0, k = 0;
    for (size_t cut = 0; cut < len; cut++) {
        while (k < n && starts[k] <= cut)
            k++;
        /* The record the cut damages, or the offset where END is missing. */
        size_t want = cut < KCAP_HEADER_SIZE ? 0 : k ? starts[k - 1] : KCAP_HEADER_SIZE;
        kiln_result r = replay(bytes, cut, &rep);
        bool ok = r != KILN_OK && rep.error.offset == want && rep.error.message[0];
        exact += ok;
        if (!ok && len - exact < 5)
            fprintf(stderr, "    cut at %zu: %s, offset %llu (want %zu): %s\n", cut,
                    kiln_result_string(r), (unsigned long long)rep.error.offset, want,
                    rep.error.message);
    }
    CHECK_EQ_INT(exact, len);
}

static void test_flips(const uint8_t *bytes, size_t len, uint64_t seed, int rounds)
{
    th_rng rng = {seed};
    uint8_t *copy = malloc(len);
    int refused = 0, replayed = 0;
    for (int i = 0; i < rounds; i++) {
        memcpy(copy, bytes, len);
        uint32_t flips = 1 + th_below(&rng, 3);
        for (uint32_t f = 0; f < flips; f++)
            copy[th_below(&rng, (uint32_t)len)] ^= (uint8_t)(1 + th_below(&rng, 255));
        kcap_replay_report rep;
        kiln_result r = replay(copy, len, &rep);
        if (r == KILN_OK) {
            replayed++;
        } else {
            refused++;
            CHECK(rep.error.offset <= len && rep.error.message[0]);
        }
    }
    fprintf(stderr, "    %d damaged copies: %d refused, %d replayed\n", rounds, refused, replayed);
    CHECK(refused > 0);
    free(copy);
}

static void test_tolerant(uint64_t seed)
{
    th_rng rng = {seed};
    uint8_t junk[512];
    uint64_t records = 0;
    for (int i = 0; i < 4000; i++) {
        size_t len = 1 + th_below(&rng, sizeof junk);
        for (size_t k = 0; k < len; k++)
            junk[k] = (uint8_t)th_next(&rng);
        kcap_call c;
        kcap_error err;
        size_t next;
        for (size_t off = 0; off < len; off = next) {
            if (!kcap_decode(junk, len, off, KCAP_DECODE_TOLERANT, &c, &next, &err)) {
                CHECK(err.offset == off && err.message[0]);
                break;
            }
            CHECK(next > off && next <= len && c.op > KCAP_OP_NONE && c.op < KCAP_OP_COUNT);
            records++;
        }
    }
    CHECK(records > 0);
}

/* ---- hand-built records ---- */

static void emit(buf *b, kcap_call c) { kcap_encode(&c, put, b); }

/* Header, DEVICE, context 1's state. */
static void start(buf *b)
{
    uint8_t h[KCAP_HEADER_SIZE];
    kcap_encode_header(h);
    put(b, h, sizeof h);
    kcap_call dev = {.op = KCAP_OP_DEVICE};
    dev.u.device.ring_capacity = 64;
    dev.u.device.transfer_size = 1u << 16;
    emit(b, dev);
    emit(b, (kcap_call){.op = KCAP_OP_CONTEXT_STATE, .ctx = 1});
}

/* Expects the capture refused at `at` with `text` in the message. */
static void expect_refused(buf *b, size_t at, const char *text, int line)
{
    kcap_replay_report rep;
    kiln_result r = replay(b->p, b->n, &rep);
    bool ok = r != KILN_OK && rep.error.offset == at && strstr(rep.error.message, text);
    th_check(ok, text, __FILE__, line);
    if (!ok)
        fprintf(stderr, "    got %s at %llu: %s (want offset %zu)\n", kiln_result_string(r),
                (unsigned long long)rep.error.offset, rep.error.message, at);
    free(b->p);
    *b = (buf){0};
}

#define REFUSED(b, at, text) expect_refused((b), (at), (text), __LINE__)

static void test_bad_records(void)
{
    buf b = {0};
    size_t at;
    const uint8_t end[] = {KCAP_OP_END, 0};

    /* A good one first: it replays. */
    start(&b);
    put(&b, end, sizeof end);
    kcap_replay_report rep;
    CHECK_RESULT(replay(b.p, b.n, &rep), KILN_OK);
    free(b.p);
    b = (buf){0};

    start(&b);
    at = b.n;
    put(&b, (const uint8_t[]){0x7f, 0x00}, 2);
    put(&b, end, sizeof end);
    REFUSED(&b, at, "unknown op 127");

    start(&b);
    at = b.n;
    put(&b, (const uint8_t[]){KCAP_OP_FLUSH, 200, 1, 1}, 4);
    REFUSED(&b, at, "truncated");

    start(&b);
    at = b.n;
    put(&b, (const uint8_t[]){KCAP_OP_FLUSH, 2, 1, 9}, 4); /* context 1, then a stray byte */
    put(&b, end, sizeof end);
    REFUSED(&b, at, "left after");

    start(&b);
    at = b.n;
    put(&b, (const uint8_t[]){KCAP_OP_FLUSH, 3, 0x80, 0x80, 0x80}, 5); /* varint runs out */
    put(&b, end, sizeof end);
    REFUSED(&b, at, "ends inside");

    start(&b);
    at = b.n;
    /* CREATE_BUFFER id 5, size 16, DEFAULT, vertex, no cpu, init of 3 bytes. */
    put(&b, (const uint8_t[]){KCAP_OP_CREATE_BUFFER, 10, 5, 16, 0, 1, 0, 1, 3, 1, 2, 3}, 12);
    put(&b, end, sizeof end);
    REFUSED(&b, at, "does not match");

    start(&b);
    at = b.n;
    put(&b, (const uint8_t[]){KCAP_OP_MAP, 5, 1, 5, 0, 9, 0}, 7); /* map type 9 */
    put(&b, end, sizeof end);
    REFUSED(&b, at, "out of range");

    start(&b);
    at = b.n;
    put(&b, (const uint8_t[]){KCAP_OP_CREATE_VERTEX_SHADER, 6, 7, 3, 'a', ' ', 'b', 1}, 8);
    put(&b, end, sizeof end);
    REFUSED(&b, at, "printable");

    /* Well-formed records the replay refuses. */
    start(&b);
    at = b.n;
    emit(&b, (kcap_call){.op = KCAP_OP_DESTROY_BUFFER, .u.obj.id = 0x100003});
    put(&b, end, sizeof end);
    REFUSED(&b, at, "was not created");

    start(&b);
    at = b.n;
    emit(&b, (kcap_call){.op = KCAP_OP_FLUSH, .ctx = 7});
    put(&b, end, sizeof end);
    REFUSED(&b, at, "context 7 does not exist");

    start(&b);
    kcap_call cb = {.op = KCAP_OP_CREATE_BUFFER, .out = {0x100001}};
    cb.u.buffer.desc = (kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    emit(&b, cb);
    at = b.n;
    kcap_call up = {.op = KCAP_OP_UPDATE_SUBRESOURCE, .ctx = 1};
    static const uint8_t data[128];
    up.u.update.dst = 0x100001;
    up.u.update.data = (kcap_rows){128, 1, data, 128}; /* the buffer has 64 */
    emit(&b, up);
    put(&b, end, sizeof end);
    REFUSED(&b, at, "region holds");

    start(&b);
    emit(&b, cb);
    at = b.n;
    kcap_call tex = {.op = KCAP_OP_DESTROY_TEXTURE, .u.obj.id = 0x100001};
    emit(&b, tex);
    put(&b, end, sizeof end);
    REFUSED(&b, at, "is a buffer, not a texture");

    start(&b);
    put(&b, end, sizeof end);
    at = b.n;
    emit(&b, (kcap_call){.op = KCAP_OP_FRAME});
    REFUSED(&b, at, "records follow END");

    start(&b);
    at = b.n;
    REFUSED(&b, at, "without an END");

    /* The header. */
    start(&b);
    put(&b, end, sizeof end);
    b.p[0] = 'X';
    REFUSED(&b, 0, "not a kiln capture");
    start(&b);
    put(&b, end, sizeof end);
    b.p[8] = 2; /* major 2 */
    b.p[10] = 0;
    REFUSED(&b, 0, "format 2.0");
    start(&b);
    put(&b, end, sizeof end);
    b.p[10] = 9; /* minor 9: records this kiln may not know */
    REFUSED(&b, 0, "format 1.9");
}

int main(void)
{
    static const struct {
        const char *scene;
        uint32_t w, h;
        int flips;
    } inputs[] = {{"triangle", 32, 18, 600}, {"mosaic", 32, 18, 300}, {"cube", 24, 16, 300}};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        size_t len = 0;
        uint8_t *bytes = capture_scene(inputs[i].scene, inputs[i].w, inputs[i].h, &len);
        CHECK(bytes != NULL);
        if (!bytes)
            continue;
        fprintf(stderr, "%s: %zu bytes\n", inputs[i].scene, len);
        test_round_trip(bytes, len);
        test_truncation(bytes, len);
        test_flips(bytes, len, 0x9e3779b97f4a7c15ull + i, inputs[i].flips);
        free(bytes);
    }
    test_tolerant(12345);
    test_bad_records();
    return th_exit();
}
