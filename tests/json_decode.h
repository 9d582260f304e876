/* json_decode.h - a strict JSON decoder for tests that check what the atf command prints.
 *
 * Strict RFC 8259: j_parse() reads the whole text into nodes (objects and arrays link
 * their members in order), decodes strings (escapes, surrogate pairs) into UTF-8, keeps
 * numbers as their text, and rejects anything else, including invalid UTF-8, nesting
 * deeper than 64 and trailing garbage. Node 0 is the root; j_get/j_str/j_u64/j_i64 read
 * the members of an object, j_count/j_at/j_find the elements of an array (or the members
 * of an object); j_free releases a document (also after a failed parse). j_utf8_len
 * tells a valid UTF-8 sequence, for checks of other output too.
 * Self-contained (C library only); include once per test program, which uses some of
 * its readers. */
#ifndef ATF_TESTS_JSON_DECODE_H
#define ATF_TESTS_JSON_DECODE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define JD_UNUSED __attribute__((unused))
#else
#  define JD_UNUSED
#endif

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0 when it is not one:
 * a stray continuation byte, an overlong form, a surrogate or a code point past U+10FFFF. */
static JD_UNUSED size_t j_utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len, i;
    unsigned long cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1Fu;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0Fu;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07u;
    else return 0;
    if (n < len) return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp < 0xE000))
        return 0;
    return len;
}

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jnode {
    int type;
    char *key;                   /* member name inside an object, else NULL */
    char *str;                   /* J_STR: decoded; J_NUM: the literal */
    long child, next;            /* first member/element, next sibling; -1 = none */
} jnode;

typedef struct jdoc {
    jnode *nodes;
    size_t count, cap;
    const char *p, *end;
    int depth;
} jdoc;

static long j_new(jdoc *d, int type) {
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        jnode *n = (jnode *)realloc(d->nodes, cap * sizeof *n);
        if (!n) return -1;
        d->nodes = n;
        d->cap = cap;
    }
    memset(&d->nodes[d->count], 0, sizeof *d->nodes);
    d->nodes[d->count].type = type;
    d->nodes[d->count].child = d->nodes[d->count].next = -1;
    return (long)d->count++;
}

static void j_ws(jdoc *d) {
    while (d->p < d->end && (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r')) d->p++;
}

static int j_hex4(jdoc *d, unsigned *v) {
    int i;
    *v = 0;
    if (d->end - d->p < 4) return 0;
    for (i = 0; i < 4; i++) {
        char c = *d->p++;
        *v <<= 4;
        if (c >= '0' && c <= '9') *v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') *v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    return 1;
}

static size_t j_utf8_put(char *o, unsigned cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | (cp >> 6 & 63)); o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | (cp >> 12 & 63));
    o[2] = (char)(0x80 | (cp >> 6 & 63)); o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* A string at d->p (after the opening quote); returns the decoded copy or NULL. */
static char *j_string(jdoc *d) {
    const char *start = d->p;
    char *out, *o;
    size_t n = 0;
    while (d->p < d->end && *d->p != '"') { /* measure, checking escapes loosely */
        if (*d->p == '\\') d->p++;
        d->p++;
    }
    if (d->p >= d->end) return NULL;
    n = (size_t)(d->p - start);
    d->p = start;
    out = o = (char *)malloc(n * 2 + 8);
    if (!out) return NULL;
    while (*d->p != '"') {
        unsigned char c = (unsigned char)*d->p;
        if (c < 0x20) goto fail;
        if (c == '\\') {
            d->p++;
            switch (*d->p++) {
            case '"': *o++ = '"'; break;
            case '\\': *o++ = '\\'; break;
            case '/': *o++ = '/'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u': {
                unsigned cp, lo;
                if (!j_hex4(d, &cp)) goto fail;
                if (cp >= 0xDC00 && cp < 0xE000) goto fail;
                if (cp >= 0xD800 && cp < 0xDC00) {
                    if (d->end - d->p < 6 || d->p[0] != '\\' || d->p[1] != 'u') goto fail;
                    d->p += 2;
                    if (!j_hex4(d, &lo) || lo < 0xDC00 || lo >= 0xE000) goto fail;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                o += j_utf8_put(o, cp);
                break;
            }
            default: goto fail;
            }
        } else {
            size_t k = j_utf8_len((const unsigned char *)d->p, (size_t)(d->end - d->p));
            if (!k) goto fail;
            memcpy(o, d->p, k);
            o += k;
            d->p += k;
        }
    }
    d->p++;
    *o = '\0';
    return out;
fail:
    free(out);
    return NULL;
}

static long j_value(jdoc *d);

static long j_container(jdoc *d, int type) {
    long node = j_new(d, type), prev = -1;
    char close = type == J_ARR ? ']' : '}';
    if (node < 0 || ++d->depth > 64) return -1;
    d->p++;
    j_ws(d);
    if (d->p < d->end && *d->p == close) {
        d->p++;
        d->depth--;
        return node;
    }
    for (;;) {
        char *key = NULL;
        long v;
        j_ws(d);
        if (type == J_OBJ) {
            if (d->p >= d->end || *d->p != '"') return -1;
            d->p++;
            if ((key = j_string(d)) == NULL) return -1;
            j_ws(d);
            if (d->p >= d->end || *d->p != ':') { free(key); return -1; }
            d->p++;
        }
        v = j_value(d);
        if (v < 0) { free(key); return -1; }
        d->nodes[v].key = key;
        if (prev < 0) d->nodes[node].child = v;
        else d->nodes[prev].next = v;
        prev = v;
        j_ws(d);
        if (d->p < d->end && *d->p == ',') { d->p++; continue; }
        if (d->p < d->end && *d->p == close) { d->p++; break; }
        return -1;
    }
    d->depth--;
    return node;
}

static long j_value(jdoc *d) {
    long n;
    j_ws(d);
    if (d->p >= d->end) return -1;
    switch (*d->p) {
    case '{': return j_container(d, J_OBJ);
    case '[': return j_container(d, J_ARR);
    case '"': {
        char *s;
        d->p++;
        if ((s = j_string(d)) == NULL || (n = j_new(d, J_STR)) < 0) { free(s); return -1; }
        d->nodes[n].str = s;
        return n;
    }
    case 't': case 'f': case 'n': {
        const char *w = *d->p == 't' ? "true" : *d->p == 'f' ? "false" : "null";
        size_t k = strlen(w);
        if ((size_t)(d->end - d->p) < k || memcmp(d->p, w, k) != 0) return -1;
        d->p += k;
        return j_new(d, *w == 'n' ? J_NULL : J_BOOL);
    }
    default: {
        const char *s = d->p;
        if (*d->p == '-') d->p++;
        if (d->p >= d->end) return -1;
        if (*d->p == '0') d->p++;
        else if (*d->p >= '1' && *d->p <= '9') while (d->p < d->end && *d->p >= '0' && *d->p <= '9') d->p++;
        else return -1;
        if (d->p < d->end && *d->p == '.') {
            d->p++;
            if (d->p >= d->end || *d->p < '0' || *d->p > '9') return -1;
            while (d->p < d->end && *d->p >= '0' && *d->p <= '9') d->p++;
        }
        if (d->p < d->end && (*d->p == 'e' || *d->p == 'E')) {
            d->p++;
            if (d->p < d->end && (*d->p == '+' || *d->p == '-')) d->p++;
            if (d->p >= d->end || *d->p < '0' || *d->p > '9') return -1;
            while (d->p < d->end && *d->p >= '0' && *d->p <= '9') d->p++;
        }
        if ((n = j_new(d, J_NUM)) < 0) return -1;
        d->nodes[n].str = (char *)malloc((size_t)(d->p - s) + 1);
        if (!d->nodes[n].str) return -1;
        memcpy(d->nodes[n].str, s, (size_t)(d->p - s));
        d->nodes[n].str[d->p - s] = '\0';
        return n;
    }
    }
}

static JD_UNUSED void j_free(jdoc *d) {
    size_t i;
    for (i = 0; i < d->count; i++) {
        free(d->nodes[i].key);
        free(d->nodes[i].str);
    }
    free(d->nodes);
    memset(d, 0, sizeof *d);
}

/* Parses text (len bytes); 1 when it is one valid JSON value and nothing else. */
static JD_UNUSED int j_parse(jdoc *d, const char *text, size_t len) {
    long root;
    memset(d, 0, sizeof *d);
    d->p = text;
    d->end = text + len;
    root = j_value(d);
    j_ws(d);
    return root == 0 && d->p == d->end;
}

static JD_UNUSED long j_get(const jdoc *d, long obj, const char *key) {
    long c;
    if (obj < 0 || d->nodes[obj].type != J_OBJ) return -1;
    for (c = d->nodes[obj].child; c >= 0; c = d->nodes[c].next)
        if (strcmp(d->nodes[c].key, key) == 0) return c;
    return -1;
}

static JD_UNUSED const char *j_str(const jdoc *d, long obj, const char *key) {
    long n = j_get(d, obj, key);
    return n >= 0 && (d->nodes[n].type == J_STR || d->nodes[n].type == J_NUM) ? d->nodes[n].str : "";
}

static JD_UNUSED uint64_t j_u64(const jdoc *d, long obj, const char *key) {
    return strtoull(j_str(d, obj, key), NULL, 10);
}

static JD_UNUSED int64_t j_i64(const jdoc *d, long obj, const char *key) {
    return (int64_t)strtoll(j_str(d, obj, key), NULL, 10);
}

/* 1 when member key of obj is there and null. */
static JD_UNUSED int j_is_null(const jdoc *d, long obj, const char *key) {
    long n = j_get(d, obj, key);
    return n >= 0 && d->nodes[n].type == J_NULL;
}

/* The elements of an array, or the members of an object; 0 for no node (-1). */
static JD_UNUSED size_t j_count(const jdoc *d, long node) {
    size_t n = 0;
    long c;
    for (c = node >= 0 ? d->nodes[node].child : -1; c >= 0; c = d->nodes[c].next) n++;
    return n;
}

/* Element k of an array (member k of an object), or -1. */
static JD_UNUSED long j_at(const jdoc *d, long node, size_t k) {
    long c = node >= 0 ? d->nodes[node].child : -1;
    for (; c >= 0 && k; k--) c = d->nodes[c].next;
    return c;
}

/* The element of array arr whose member key is the text want, or -1. */
static JD_UNUSED long j_find(const jdoc *d, long arr, const char *key, const char *want) {
    long c;
    for (c = arr >= 0 ? d->nodes[arr].child : -1; c >= 0; c = d->nodes[c].next)
        if (strcmp(j_str(d, c, key), want) == 0) return c;
    return -1;
}

#endif /* ATF_TESTS_JSON_DECODE_H */
