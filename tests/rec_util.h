/* rec_util.h - helpers shared by the recording harnesses (test_session.c, test_crash.c):
 * a deterministic event generator, read-back checks against it, a manifest scanner and a
 * strict JSON validator, temporary directories. Include after atf.h and harness.h. */
#ifndef ATF_TEST_REC_UTIL_H
#define ATF_TEST_REC_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every helper is static; a harness uses some of them. */
#if defined(__GNUC__) || defined(__clang__)
#  define REC_UNUSED __attribute__((unused))
#else
#  define REC_UNUSED
#endif

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#  define REC_SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#    define REC_SANITIZED 1
#  endif
#endif

/* ---- the generator: event i of generator thread k --------------------------------- */

static REC_UNUSED uint64_t gen_hash(uint32_t k, uint64_t i) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(k + 1) << 40);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}
static REC_UNUSED uint64_t gen_ts(uint32_t k, uint64_t i) { return 1000000u + i * 8u + (k & 7u); }
static REC_UNUSED uint64_t gen_fid(uint32_t k, uint64_t i) {
    return ((uint64_t)(k + 1) << 32) | (uint32_t)(gen_hash(k, i) & 0xFFFFFFu);
}

/* The call/return/exception pattern with the writer's depth rules. */
typedef struct gen_state { uint32_t depth; } gen_state;

/* Kind of event i given the current depth; advances the depth like the writer does and
 * returns the depth the event is recorded with. */
static REC_UNUSED uint32_t gen_kind(uint32_t k, uint64_t i, gen_state *g, uint32_t *depth_out) {
    uint64_t h = gen_hash(k, i) >> 24;
    uint32_t kind;
    if (g->depth == 0 || (g->depth < 24 && (h & 1u))) kind = ATF_EVENT_CALL;
    else kind = (h % 53 == 0) ? ATF_EVENT_EXCEPTION : ATF_EVENT_RETURN;
    if (kind == ATF_EVENT_CALL) {
        *depth_out = g->depth++;
    } else {
        if (g->depth) g->depth--;
        *depth_out = g->depth;
    }
    return kind;
}

/* Pushes event i through the public calls; returns the push result. */
static REC_UNUSED atf_result gen_push(atf_writer *w, uint32_t k, uint64_t i, gen_state *g) {
    uint32_t depth;
    uint32_t kind = gen_kind(k, i, g, &depth);
    if (kind == ATF_EVENT_CALL) return atf_writer_call(w, gen_fid(k, i), gen_ts(k, i));
    if (kind == ATF_EVENT_RETURN) return atf_writer_return(w, gen_fid(k, i), gen_ts(k, i));
    return atf_writer_exception(w, gen_fid(k, i), gen_ts(k, i));
}

/* Detail payload of event i: 8..71 bytes, deterministic. */
static REC_UNUSED size_t gen_payload(uint32_t k, uint64_t i, uint8_t *out) {
    size_t n = 8 + (size_t)(gen_hash(k, i) % 64), j;
    for (j = 0; j < n; j++) out[j] = (uint8_t)(k * 7 + i * 13 + j * 29);
    return n;
}

/* Pushes event i with a detail payload. */
static REC_UNUSED atf_result gen_push_detail(atf_writer *w, uint32_t k, uint64_t i, gen_state *g) {
    uint8_t p[80];
    uint32_t depth;
    uint32_t kind = gen_kind(k, i, g, &depth);
    size_t n = gen_payload(k, i, p);
    return atf_writer_event_detail(w, kind, gen_fid(k, i), gen_ts(k, i),
                                   kind == ATF_EVENT_CALL ? ATF_DETAIL_FUNCTION_CALL
                                                          : ATF_DETAIL_FUNCTION_RETURN,
                                   p, n);
}

/* ---- bitmaps ------------------------------------------------------------------------ */
static REC_UNUSED uint8_t *bits_new(uint64_t n) { return (uint8_t *)calloc((size_t)(n / 8 + 1), 1); }
static REC_UNUSED void bits_set(uint8_t *b, uint64_t i) { b[i / 8] = (uint8_t)(b[i / 8] | (1u << (i % 8))); }
static REC_UNUSED int bits_get(const uint8_t *b, uint64_t i) { return (b[i / 8] >> (i % 8)) & 1; }

/* ---- read-back ---------------------------------------------------------------------- */

/* Expected content of generator thread k: `produced` events, those flagged in `dropped`
 * (may be NULL) absent. Checks every index event of `tr` in order: timestamp, function,
 * kind, depth (layout 1), thread id (layout 1), timestamps non-decreasing. Returns the
 * number of events that matched before the first mismatch (== the count when all do). */
static REC_UNUSED uint64_t check_index_against(const atf_thread_reader *tr, uint32_t k, uint64_t produced,
                                    const uint8_t *dropped, int layout) {
    gen_state g = {0};
    uint64_t i, seq = 0, prev_ts = 0;
    for (i = 0; i < produced && seq < tr->index.event_count; i++) {
        uint32_t depth, kind = gen_kind(k, i, &g, &depth);
        atf_index_event ev;
        if (dropped && bits_get(dropped, i)) continue;
        atf_index_reader_get(&tr->index, seq, &ev);
        if (ev.timestamp_ns != gen_ts(k, i) || ev.function_id != gen_fid(k, i) || ev.kind != kind ||
            (layout == ATF_LAYOUT_1 && (ev.call_depth != depth || ev.thread_id != tr->index.header.thread_id)) ||
            ev.timestamp_ns < prev_ts) {
            printf("  thread %u: index event %llu (generated %llu) differs: ts %llu/%llu fid %llx/%llx "
                   "kind %u/%u depth %u/%u\n", k, (unsigned long long)seq, (unsigned long long)i,
                   (unsigned long long)ev.timestamp_ns, (unsigned long long)gen_ts(k, i),
                   (unsigned long long)ev.function_id, (unsigned long long)gen_fid(k, i), ev.kind, kind,
                   ev.call_depth, depth);
            return seq;
        }
        prev_ts = ev.timestamp_ns;
        seq++;
    }
    return seq;
}

/* ---- files and text ----------------------------------------------------------------- */

static REC_UNUSED char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char *)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

static REC_UNUSED int path_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static REC_UNUSED void rm_rf(const char *path) {
    char cmd[1200];
#if defined(_WIN32)
    size_t i;
    snprintf(cmd, sizeof cmd, "rmdir /s /q \"%s\"", path);
    for (i = 10; cmd[i]; i++) if (cmd[i] == '/') cmd[i] = '\\'; /* the path, not the switches */
#else
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
#endif
    if (system(cmd) != 0) printf("  (could not remove %s)\n", path);
}

/* The object of thread `slot` in a manifest ("{"id":slot,..."), or NULL. */
static REC_UNUSED const char *manifest_thread(const char *json, uint32_t slot) {
    char key[40];
    snprintf(key, sizeof key, "{\"id\":%u,", slot);
    return strstr(json, key);
}

/* The unsigned number after "key": within the object starting at obj (up to its '}'). */
static REC_UNUSED int manifest_u64(const char *obj, const char *key, uint64_t *out) {
    char pat[64];
    const char *end = obj ? strchr(obj, '}') : NULL, *at;
    if (!obj) return 0;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    at = strstr(obj, pat);
    if (!at || (end && at > end)) return 0;
    *out = strtoull(at + strlen(pat), NULL, 10);
    return 1;
}

/* ---- a strict JSON validator (RFC 8259) --------------------------------------------- */
typedef struct json_in { const unsigned char *p; int depth; } json_in;

static REC_UNUSED void json_ws(json_in *j) {
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r') j->p++;
}

static REC_UNUSED int json_value(json_in *j);

static REC_UNUSED int json_string(json_in *j) {
    if (*j->p != '"') return 0;
    j->p++;
    for (;;) {
        unsigned char c = *j->p;
        if (c == '"') {
            j->p++;
            return 1;
        }
        if (c < 0x20) return 0; /* includes the terminating NUL */
        if (c == '\\') {
            j->p++;
            if (*j->p == 'u') {
                int k;
                for (k = 1; k <= 4; k++)
                    if (!strchr("0123456789abcdefABCDEF", j->p[k]) || !j->p[k]) return 0;
                j->p += 5;
            } else if (*j->p && strchr("\"\\/bfnrt", *j->p)) {
                j->p++;
            } else {
                return 0;
            }
        } else if (c < 0x80) {
            j->p++;
        } else {
            size_t n = atf__utf8_len(j->p);
            if (!n) return 0;
            j->p += n;
        }
    }
}

static REC_UNUSED int json_number(json_in *j) {
    const unsigned char *start = j->p;
    if (*j->p == '-') j->p++;
    if (*j->p == '0') j->p++;
    else if (*j->p >= '1' && *j->p <= '9') while (*j->p >= '0' && *j->p <= '9') j->p++;
    else return 0;
    if (*j->p == '.') {
        j->p++;
        if (!(*j->p >= '0' && *j->p <= '9')) return 0;
        while (*j->p >= '0' && *j->p <= '9') j->p++;
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-') j->p++;
        if (!(*j->p >= '0' && *j->p <= '9')) return 0;
        while (*j->p >= '0' && *j->p <= '9') j->p++;
    }
    return j->p > start;
}

static REC_UNUSED int json_value(json_in *j) {
    json_ws(j);
    if (++j->depth > 64) return 0;
    if (*j->p == '{') {
        j->p++;
        json_ws(j);
        if (*j->p == '}') {
            j->p++;
        } else {
            for (;;) {
                json_ws(j);
                if (!json_string(j)) return 0;
                json_ws(j);
                if (*j->p++ != ':') return 0;
                if (!json_value(j)) return 0;
                json_ws(j);
                if (*j->p == ',') { j->p++; continue; }
                if (*j->p++ != '}') return 0;
                break;
            }
        }
    } else if (*j->p == '[') {
        j->p++;
        json_ws(j);
        if (*j->p == ']') {
            j->p++;
        } else {
            for (;;) {
                if (!json_value(j)) return 0;
                json_ws(j);
                if (*j->p == ',') { j->p++; continue; }
                if (*j->p++ != ']') return 0;
                break;
            }
        }
    } else if (*j->p == '"') {
        if (!json_string(j)) return 0;
    } else if (!strncmp((const char *)j->p, "true", 4)) {
        j->p += 4;
    } else if (!strncmp((const char *)j->p, "false", 5)) {
        j->p += 5;
    } else if (!strncmp((const char *)j->p, "null", 4)) {
        j->p += 4;
    } else if (!json_number(j)) {
        return 0;
    }
    j->depth--;
    return 1;
}

/* 1 when text is exactly one valid JSON value (surrounded by whitespace). */
static REC_UNUSED int json_valid(const char *text) {
    json_in j;
    j.p = (const unsigned char *)text;
    j.depth = 0;
    if (!json_value(&j)) return 0;
    json_ws(&j);
    return *j.p == '\0';
}

#endif
