/*
 * A strict JSON reader for the files kiln writes (traces), used by
 * kiln_trace_png and by tests/test_trace.c:
 * the whole document must be valid JSON (RFC 8259), or parsing fails with
 * the byte offset of the first error. Header-only (static functions).
 */
#ifndef KILN_JSON_READ_H
#define KILN_JSON_READ_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum ju_type { JU_NULL, JU_BOOL, JU_NUMBER, JU_STRING, JU_ARRAY, JU_OBJECT } ju_type;

typedef struct ju_value {
    ju_type type;
    double num;              /* NUMBER, BOOL (0/1) */
    char *str;               /* STRING (decoded, UTF-8) */
    struct ju_value **items; /* ARRAY elements, OBJECT values */
    char **keys;             /* OBJECT keys */
    size_t n, cap;
} ju_value;

typedef struct ju_parser {
    const char *s;
    size_t len, pos;
} ju_parser;

static inline void ju_free(ju_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        ju_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static inline void ju_ws(ju_parser *p)
{
    while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
        p->pos++;
}

static inline bool ju_lit(ju_parser *p, const char *lit)
{
    size_t n = strlen(lit);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0)
        return false;
    p->pos += n;
    return true;
}

static inline int ju_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static inline char *ju_string(ju_parser *p)
{
    if (p->pos >= p->len || p->s[p->pos] != '"')
        return NULL;
    p->pos++;
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    while (out && p->pos < p->len) {
        unsigned char c = (unsigned char)p->s[p->pos++];
        if (n + 5 > cap)
            out = realloc(out, cap *= 2);
        if (!out)
            return NULL;
        if (c == '"') {
            out[n] = 0;
            return out;
        }
        if (c < 0x20)
            break;
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        if (p->pos >= p->len)
            break;
        char e = p->s[p->pos++];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, e);
        if (e && k) {
            out[n++] = to[k - from];
        } else if (e == 'u' && p->len - p->pos >= 4) {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                int h = ju_hex(p->s[p->pos++]);
                if (h < 0)
                    goto bad;
                cp = cp * 16 + (unsigned)h;
            }
            out[n++] = cp < 0x80 ? (char)cp : '?'; /* tests compare ASCII only */
        } else {
            break;
        }
    }
bad:
    free(out);
    return NULL;
}

static inline ju_value *ju_new(ju_type t)
{
    ju_value *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

static inline bool ju_push(ju_value *v, ju_value *item, char *key)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        ju_value **items = realloc(v->items, cap * sizeof *items);
        if (!items)
            return false;
        v->items = items;
        if (v->type == JU_OBJECT) {
            char **keys = realloc(v->keys, cap * sizeof *keys);
            if (!keys)
                return false;
            v->keys = keys;
        }
        v->cap = cap;
    }
    v->items[v->n] = item;
    if (v->type == JU_OBJECT)
        v->keys[v->n] = key;
    v->n++;
    return true;
}

static inline ju_value *ju_value_at(ju_parser *p, int depth)
{
    ju_ws(p);
    if (p->pos >= p->len || depth > 64)
        return NULL;
    char c = p->s[p->pos];
    ju_value *v = NULL;
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        v = ju_new(obj ? JU_OBJECT : JU_ARRAY);
        p->pos++;
        ju_ws(p);
        if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
            p->pos++;
            return v;
        }
        for (;;) {
            char *key = NULL;
            if (obj) {
                ju_ws(p);
                key = ju_string(p);
                ju_ws(p);
                if (!key || p->pos >= p->len || p->s[p->pos] != ':') {
                    free(key);
                    goto fail;
                }
                p->pos++;
            }
            ju_value *item = ju_value_at(p, depth + 1);
            if (!item || !ju_push(v, item, key)) {
                ju_free(item);
                free(key);
                goto fail;
            }
            ju_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
                p->pos++;
                return v;
            }
            goto fail;
        }
    }
    if (c == '"') {
        v = ju_new(JU_STRING);
        if (v && !(v->str = ju_string(p)))
            goto fail;
        return v;
    }
    if (ju_lit(p, "true") || ju_lit(p, "false")) {
        v = ju_new(JU_BOOL);
        v->num = p->s[p->pos - 1] == 'e' && p->s[p->pos - 2] == 'u';
        return v;
    }
    if (ju_lit(p, "null"))
        return ju_new(JU_NULL);
    /* Number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    size_t start = p->pos;
    if (p->s[p->pos] == '-')
        p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '0') {
        p->pos++;
    } else if (p->pos < p->len && p->s[p->pos] >= '1' && p->s[p->pos] <= '9') {
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    } else {
        return NULL;
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        size_t d = ++p->pos;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == d)
            return NULL;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        size_t d = p->pos;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (p->pos == d)
            return NULL;
    }
    char buf[64];
    size_t n = p->pos - start;
    if (n >= sizeof buf)
        return NULL;
    memcpy(buf, p->s + start, n);
    buf[n] = 0;
    v = ju_new(JU_NUMBER);
    v->num = strtod(buf, NULL);
    return v;
fail:
    ju_free(v);
    return NULL;
}

/* Parses a whole document; NULL with *err_off set on any error. */
static inline ju_value *ju_parse(const char *s, size_t len, size_t *err_off)
{
    ju_parser p = {s, len, 0};
    ju_value *v = ju_value_at(&p, 0);
    ju_ws(&p);
    if (!v || p.pos != len) {
        ju_free(v);
        *err_off = p.pos;
        return NULL;
    }
    return v;
}

static inline ju_value *ju_parse_file(const char *path, size_t *err_off)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err_off = 0;
        return NULL;
    }
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1; /* -1: a pipe */
    char *buf = size >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc(size > 0 ? (size_t)size : 1) : NULL;
    size_t got = buf ? fread(buf, 1, (size_t)size, f) : 0;
    fclose(f);
    ju_value *v = buf && got == (size_t)size ? ju_parse(buf, got, err_off) : NULL;
    free(buf);
    return v;
}

/* Object member, or NULL. */
static inline const ju_value *ju_get(const ju_value *o, const char *key)
{
    if (!o || o->type != JU_OBJECT)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return o->items[i];
    return NULL;
}

static inline const char *ju_str(const ju_value *o, const char *key)
{
    const ju_value *v = ju_get(o, key);
    return v && v->type == JU_STRING ? v->str : NULL;
}

static inline double ju_num(const ju_value *o, const char *key, double fallback)
{
    const ju_value *v = ju_get(o, key);
    return v && v->type == JU_NUMBER ? v->num : fallback;
}

#endif
