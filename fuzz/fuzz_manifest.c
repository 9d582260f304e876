/* fuzz_manifest.c - session reader: any bytes as manifest.json.
 *
 * The input becomes pid_1/manifest.json in a scratch directory whose pid_1/thread_0 is a
 * valid thread (index.atf + detail.atf, built once from tests/fixtures.h). The session is
 * opened (the manifest read into an exact-size heap buffer), every symbol is looked up,
 * every thread found by slot, and the whole session merged; the merge must yield each
 * event of each present thread once, in time order. See fuzz_common.h for the replay. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "fuzz_common.h"
#include "tests/fixtures.h"

#include <ctype.h>

static char pid_dir[1024];

/* ---- a reference JSON validator (RFC 8259), written apart from atf.h's parser ----
 * Same nesting limit as atf.h: a value deeper than REF_MAX_DEPTH containers is refused.
 * Text is not checked for UTF-8 (neither does atf.h). */
#define REF_MAX_DEPTH 32

typedef struct ref_json {
    const uint8_t *p;
    size_t n, i;
    int threads_key;      /* the root object has a member "threads" (raw key text) */
    int threads_array;    /* and the first such member is an array */
} ref_json;

static void ref_ws(ref_json *j) {
    while (j->i < j->n && (j->p[j->i] == ' ' || j->p[j->i] == '\t' || j->p[j->i] == '\n' ||
                           j->p[j->i] == '\r'))
        j->i++;
}

static int ref_is_digit(ref_json *j) { return j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9'; }

static int ref_string(ref_json *j) { /* at the opening quote */
    j->i++;
    while (j->i < j->n) {
        uint8_t c = j->p[j->i++];
        if (c == '"') return 1;
        if (c < 0x20) return 0;
        if (c == '\\') {
            if (j->i >= j->n) return 0;
            c = j->p[j->i++];
            if (c == 'u') {
                int k;
                for (k = 0; k < 4; k++, j->i++)
                    if (j->i >= j->n || !isxdigit(j->p[j->i])) return 0;
            } else if (!(c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                         c == 'r' || c == 't')) {
                return 0;
            }
        }
    }
    return 0;
}

static int ref_number(ref_json *j) {
    if (j->i < j->n && j->p[j->i] == '-') j->i++;
    if (!ref_is_digit(j)) return 0;
    if (j->p[j->i] == '0') j->i++;
    else while (ref_is_digit(j)) j->i++;
    if (j->i < j->n && j->p[j->i] == '.') {
        j->i++;
        if (!ref_is_digit(j)) return 0;
        while (ref_is_digit(j)) j->i++;
    }
    if (j->i < j->n && (j->p[j->i] == 'e' || j->p[j->i] == 'E')) {
        j->i++;
        if (j->i < j->n && (j->p[j->i] == '+' || j->p[j->i] == '-')) j->i++;
        if (!ref_is_digit(j)) return 0;
        while (ref_is_digit(j)) j->i++;
    }
    return 1;
}

static int ref_value(ref_json *j, int depth) {
    static const char *const words[3] = { "true", "false", "null" };
    int k;
    ref_ws(j);
    if (j->i >= j->n || depth > REF_MAX_DEPTH) return 0;
    if (j->p[j->i] == '{' || j->p[j->i] == '[') {
        int object = j->p[j->i] == '{';
        uint8_t close = object ? '}' : ']';
        j->i++;
        ref_ws(j);
        if (j->i < j->n && j->p[j->i] == close) {
            j->i++;
            return 1;
        }
        for (;;) {
            ref_ws(j);
            int is_threads = 0;
            if (object) {
                size_t key = j->i + 1;
                if (j->i >= j->n || j->p[j->i] != '"' || !ref_string(j)) return 0;
                is_threads = depth == 0 && !j->threads_key && j->i - 1 - key == 7 &&
                             memcmp(j->p + key, "threads", 7) == 0;
                ref_ws(j);
                if (j->i >= j->n || j->p[j->i] != ':') return 0;
                j->i++;
                ref_ws(j);
                if (is_threads) {
                    j->threads_key = 1;
                    j->threads_array = j->i < j->n && j->p[j->i] == '[';
                }
            }
            if (!ref_value(j, depth + 1)) return 0;
            ref_ws(j);
            if (j->i >= j->n) return 0;
            if (j->p[j->i] == close) {
                j->i++;
                return 1;
            }
            if (j->p[j->i++] != ',') return 0;
        }
    }
    if (j->p[j->i] == '"') return ref_string(j);
    if (j->p[j->i] == '-' || ref_is_digit(j)) return ref_number(j);
    for (k = 0; k < 3; k++) {
        size_t w = strlen(words[k]);
        if (j->n - j->i >= w && memcmp(j->p + j->i, words[k], w) == 0) {
            j->i += w;
            return 1;
        }
    }
    return 0;
}

/* 1 when the text is one well-formed JSON value whose root is an object with a member
 * "threads" that is an array (what a manifest must be), 0 otherwise. */
static int ref_manifest(const uint8_t *p, size_t n) {
    ref_json j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.n = n;
    if (!ref_value(&j, 0)) return 0;
    ref_ws(&j);
    return j.i == j.n && j.threads_array;
}

static void write_fixture_thread(const char *dir, const char *name) {
    fx_buf index = { NULL, 0, 0 }, detail = { NULL, 0, 0 };
    char path[1200];
    fx_entry_build(fx_catalog_find(name), &index, &detail);
    fuzz_mkdir(dir);
    snprintf(path, sizeof path, "%s/index.atf", dir);
    fuzz_write_file(path, index.data, index.len);
    if (detail.len) {
        snprintf(path, sizeof path, "%s/detail.atf", dir);
        fuzz_write_file(path, detail.data, detail.len);
    }
    fx_buf_free(&index);
    fx_buf_free(&detail);
}

static void setup(void) {
    char dir[1100];
    if (pid_dir[0]) return;
    snprintf(pid_dir, sizeof pid_dir, "%s/pid_1", fuzz_scratch_dir());
    fuzz_mkdir(pid_dir);
    snprintf(dir, sizeof dir, "%s/thread_0", pid_dir);
    write_fixture_thread(dir, "thread_l1_detail");
}

/* Symbols: sorted, each with a name or a location (a name whole, never longer than the
 * text); one listed by location only takes a name offline, one with a name keeps it. */
static void check_symbols(atf_session_reader *r, size_t size) {
    size_t i;
    for (i = 0; i < r->symbol_count; i++) {
        atf_session_symbol *y = &r->symbols[i];
        const char *name = atf_session_reader_symbol(r, y->function_id);
        if (i) FUZZ_CHECK(r->symbols[i - 1].function_id <= y->function_id);
        FUZZ_CHECK(y->name != NULL || y->has_offset);
        if (y->name) FUZZ_CHECK(strlen(y->name) < size);
        /* the first entry of an id answers for it */
        if (i == 0 || r->symbols[i - 1].function_id != y->function_id) {
            const char *had = y->name;
            FUZZ_CHECK(name == had);
            FUZZ_CHECK(atf_session_reader_name_symbol(r, y->function_id, "offline") == ATF_OK);
            name = atf_session_reader_symbol(r, y->function_id);
            FUZZ_CHECK(name != NULL && name == y->name);
            FUZZ_CHECK(had ? name == had : strcmp(name, "offline") == 0);
        }
    }
    if (r->symbol_count == 0)
        FUZZ_CHECK(atf_session_reader_name_symbol(r, 1, "x") == ATF_E_NOT_FOUND);
}

/* The command line, build ids and anchors: within the text, well formed, and an exact
 * anchor's reading at its own host_ns is its value. */
static void check_metadata(const atf_session_reader *r, size_t size) {
    size_t i, k;
    if (r->cmdline) FUZZ_CHECK(strlen(r->cmdline) < size);
    for (i = 0; i < r->module_count; i++) {
        const char *b = r->modules[i].build_id;
        FUZZ_CHECK(memchr(b, '\0', sizeof r->modules[i].build_id) != NULL);
        for (k = 0; b[k]; k++) FUZZ_CHECK((b[k] >= '0' && b[k] <= '9') || (b[k] >= 'a' && b[k] <= 'f'));
    }
    for (i = 0; i < r->anchor_count; i++) {
        const atf_session_anchor *a = &r->anchors[i];
        int64_t v = 0;
        FUZZ_CHECK(memchr(a->name, '\0', sizeof a->name) != NULL);
        FUZZ_CHECK(atf_session_reader_anchor(r, a->name) != NULL);
        FUZZ_CHECK(a->timescale >= 0 && a->rate > 0);
        if (a->timescale > 0) {
            FUZZ_CHECK(a->rate == (double)a->timescale && a->value_f == (double)a->value);
            FUZZ_CHECK(atf_anchor_value_at(a, a->host_ns, &v) == ATF_OK && v == a->value);
            (void)atf_anchor_value_at(a, 0, &v);
            (void)atf_anchor_value_at(a, UINT64_MAX, &v);
        } else {
            FUZZ_CHECK(atf_anchor_value_at(a, a->host_ns, &v) == ATF_E_ARG);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[1100];
    atf_session_reader r;
    atf_reader_options opt;
    atf_merge m;
    atf_merge_item item;
    atf_result rc;
    uint64_t expected = 0, seen = 0, last_ts = 0;
    size_t i;
    setup();
    snprintf(path, sizeof path, "%s/manifest.json", pid_dir);
    fuzz_write_file(path, data, size);
    memset(&opt, 0, sizeof opt);
    opt.no_mmap = 1;
    rc = atf_session_reader_open(&r, pid_dir, &opt);
    FUZZ_CHECK(rc == ATF_OK); /* thread_0 is always there and valid */
    FUZZ_CHECK(r.manifest <= ATF_MANIFEST_INCOMPLETE);
    /* what is not JSON of a manifest's shape is refused as a whole, and what is, is read */
    FUZZ_CHECK((r.manifest != ATF_MANIFEST_UNREADABLE) == ref_manifest(data, size));
    (void)atf_manifest_state_str(r.manifest);
    /* an unreadable manifest says where: a byte of the input, or its end */
    FUZZ_CHECK((r.manifest == ATF_MANIFEST_UNREADABLE) == (r.manifest_error.code != ATF_OK));
    FUZZ_CHECK(r.manifest_error.code == ATF_OK || r.manifest_error.offset <= size);
    FUZZ_CHECK(r.thread_count >= 1);
    for (i = 0; i < r.thread_count; i++) {
        atf_session_thread *t = &r.threads[i];
        if (i) FUZZ_CHECK(r.threads[i - 1].slot < t->slot);
        FUZZ_CHECK(atf_session_reader_thread(&r, t->slot) == t);
        FUZZ_CHECK(memchr(t->name, '\0', sizeof t->name) != NULL);
        if (t->slot == 0) FUZZ_CHECK(!t->missing && t->reader.index.event_count == 24);
        else FUZZ_CHECK(t->missing);
        if (!t->missing) expected += t->reader.index.event_count;
    }
    check_symbols(&r, size);
    check_metadata(&r, size);
    (void)atf_session_reader_symbol(&r, 0);
    (void)atf_session_reader_symbol(&r, UINT64_MAX);
    (void)atf_session_reader_symbol(&r, fx_function_id(3));
    FUZZ_CHECK(atf_merge_init(&m, &r, NULL) == ATF_OK);
    while (atf_merge_next(&m, &item) == ATF_OK) {
        FUZZ_CHECK(item.event.timestamp_ns >= last_ts);
        FUZZ_CHECK(item.thread && !item.thread->missing && item.slot == item.thread->slot);
        last_ts = item.event.timestamp_ns;
        seen++;
    }
    FUZZ_CHECK(seen == expected);
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    return 0;
}
