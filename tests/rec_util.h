/* rec_util.h - helpers shared by the recording harnesses (test_session.c, test_crash.c, ...):
 * a deterministic event generator, read-back checks against it, and (in a program that
 * compiles the implementation) manifest checks through the library's JSON reader; files
 * and directories come from scratch_dir.h. Include after atf.h and harness.h. */
#ifndef ATF_TEST_REC_UTIL_H
#define ATF_TEST_REC_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scratch_dir.h"

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
static REC_UNUSED atf_result gen_push(atf_producer *w, uint32_t k, uint64_t i, gen_state *g) {
    uint32_t depth;
    uint32_t kind = gen_kind(k, i, g, &depth);
    if (kind == ATF_EVENT_CALL) return atf_producer_call(w, gen_fid(k, i), gen_ts(k, i));
    if (kind == ATF_EVENT_RETURN) return atf_producer_return(w, gen_fid(k, i), gen_ts(k, i));
    return atf_producer_exception(w, gen_fid(k, i), gen_ts(k, i));
}

/* Detail payload of event i: 8..71 bytes, deterministic. */
static REC_UNUSED size_t gen_payload(uint32_t k, uint64_t i, uint8_t *out) {
    size_t n = 8 + (size_t)(gen_hash(k, i) % 64), j;
    for (j = 0; j < n; j++) out[j] = (uint8_t)(k * 7 + i * 13 + j * 29);
    return n;
}

/* Pushes event i with a detail payload. */
static REC_UNUSED atf_result gen_push_detail(atf_producer *w, uint32_t k, uint64_t i, gen_state *g) {
    uint8_t p[80];
    uint32_t depth;
    uint32_t kind = gen_kind(k, i, g, &depth);
    size_t n = gen_payload(k, i, p);
    return atf_producer_event_detail(w, kind, gen_fid(k, i), gen_ts(k, i),
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

/* ---- files and text ------------------------------------------------------------------ */

/* The names the recording harnesses use for scratch_dir.h's helpers. */
static REC_UNUSED char *read_text(const char *path) { return read_file(path, NULL); }
static REC_UNUSED void rm_rf(const char *path) { remove_tree(path); }

/* ---- the manifest, through the library's own JSON reader ------------------------------- */
#if defined(ATF_IMPLEMENTATION)

/* 1 when text is exactly one JSON value (RFC 8259, as the session reader takes it) and
 * valid UTF-8 throughout (the reader lets bytes >= 0x80 through unchecked). */
static REC_UNUSED int json_valid(const char *text) {
    atf__json j;
    size_t root, i, n = strlen(text), step;
    if (!atf__json_parse(&j, text, n, &root)) return 0;
    for (i = 0; i < n; i += step) {
        step = atf_utf8_sequence(text + i, 4);
        if (step == 0) return 0;
    }
    return 1;
}

/* The object of thread `slot` in the manifest's "threads" array, or NULL (also when the
 * text is not valid JSON). */
static REC_UNUSED const char *manifest_thread(const char *json, uint32_t slot) {
    atf__json j;
    size_t root, e;
    uint32_t id;
    if (!json || !atf__json_parse(&j, json, strlen(json), &root)) return NULL;
    for (e = atf__json_first(&j, atf__json_get(&j, root, "threads")); e != ATF__JSON_NONE;
         e = atf__json_next(&j, e))
        if (atf__json_u32(&j, atf__json_get(&j, e, "id"), &id) && id == slot) return json + e;
    return NULL;
}

/* The unsigned number of member `key`, searched from `at` (inside a validated manifest:
 * the start of an object, or any point between its members) to the end of that object;
 * values in between are skipped whole. 1 and *out when found. */
static REC_UNUSED int manifest_u64(const char *at, const char *key, uint64_t *out) {
    atf__json j;
    size_t i = 0, klen = strlen(key);
    if (!at) return 0;
    j.s = at;
    j.n = strlen(at);
    if (at[0] == '{') i = 1;
    for (;;) {
        i = atf__json_space(&j, i);
        if (i >= j.n || at[i] == '}') return 0;
        if (at[i] == ',' || at[i] == ']') {
            i++;
        } else if (at[i] == '"') {
            size_t name = i + 1, colon, value;
            i = atf__json_skip(&j, i);
            colon = atf__json_space(&j, i);
            if (colon >= j.n || at[colon] != ':') continue; /* a string value, not a name */
            value = atf__json_space(&j, colon + 1);
            if (i - 1 - name == klen && memcmp(at + name, key, klen) == 0)
                return atf__json_u64(&j, value, out);
            i = atf__json_skip(&j, value);
        } else {
            size_t next = atf__json_skip(&j, i);
            if (next <= i) return 0; /* not where a value or a member can start */
            i = next;
        }
    }
}

#endif

#endif
