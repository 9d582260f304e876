/* test_manifest.c - the session reader's open of a pid_* directory (atf_session_reader_open,
 * atf_session_scan_threads): manifests of every kind (ours, the original tracer's,
 * missing, incomplete, unreadable with the offset where reading stopped, valid but
 * unusual, escaped and long names, odd values, symbols by location, build ids, timing
 * anchors, 2000 mutations), the thread_N directories found without one, and threads that
 * are missing or do not open; after each open the session still merges as the reference
 * says. Every session is written byte by byte by session_files.h, never through the
 * library's writer. */
#define ATF_IMPLEMENTATION
#include "atf.h"
#include "harness.h"
#include "session_files.h"

static void test_session_without_manifest(void) {
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(3);
    CHECK(fx_begin(&s));
    fx_standard(&s, 5, 200, 1);
    s.t[4].state = FX_CRASHED; /* no footer, torn tail: counted from the size */
    fx_write_all(&s);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(5, r.thread_count);
    CHECK_EQ(3, r.clock_type);
    CHECK_EQ(1, r.layout); /* taken from the files: slot 0 is layout 1 */
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    for (i = 0; i < r.thread_count; i++) {
        CHECK(!r.threads[i].in_manifest);
        CHECK(!r.threads[i].missing);
        CHECK_EQ(s.t[i].slot, r.threads[i].slot);
        CHECK_EQ(s.t[i].tid, r.threads[i].os_thread_id); /* from the index header */
        CHECK_EQ(s.t[i].detail, r.threads[i].reader.has_detail);
    }
    CHECK_EQ(ATF_COUNT_FROM_SIZE, r.threads[4].reader.index.counted);
    CHECK(atf_session_reader_symbol(&r, 1) == NULL);
    session_merge_matches(&r, &s, NULL, "no manifest");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_manifest_lists_missing_thread(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    const uint32_t extra[] = {9, 3};
    atf_session_thread *t;
    char path[512];
    rng_seed(4);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 100, 0);
    fx_write_all(&s);
    /* thread 3: listed, its directory exists but holds no index.atf */
    snprintf(path, sizeof path, "%s/thread_3", s.dir);
    mkdir(path, 0755);
    fx_manifest_modern(&s, extra, 2, 0, &man);
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(5, r.thread_count);
    t = atf_session_reader_thread(&r, 9);
    CHECK(t != NULL);
    if (t) {
        CHECK(t->in_manifest);
        CHECK(t->missing);
        CHECK_EQ(0, t->reader.index.event_count);
    }
    t = atf_session_reader_thread(&r, 3);
    CHECK(t != NULL);
    if (t) CHECK(t->missing);
    CHECK(r.threads[r.thread_count - 1].slot == 9); /* sorted by slot */
    session_merge_matches(&r, &s, NULL, "missing thread skipped");
    {   /* a filter naming only the missing thread yields nothing */
        const uint32_t only[] = {9};
        atf_merge_filter f;
        memset(&f, 0, sizeof f);
        f.slots = only;
        f.slot_count = 1;
        session_merge_matches(&r, &s, &f, "only the missing thread");
    }
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_original_tracer_manifest(void) {
    fx_session s;
    atf_session_reader r;
    const char *json =
        "{\n  \"format_version\": 1,\n  \"clock_type\": 1,\n  \"time_start_ns\": 0,\n"
        "  \"time_end_ns\": 0,\n  \"threads\": [\n    {\"id\": 0, \"has_detail\": true},\n"
        "    {\"id\": 1, \"has_detail\": true}\n  ],\n"
        "  \"modules\": [{\"module_id\": 0, \"path\": \"/app/bin\", \"base_address\": "
        "\"0x0000000100000000\", \"size\": 65536}],\n"
        "  \"symbols\": [\n"
        "    {\"function_id\": \"0x0000000000000003\", \"module_id\": 0, \"symbol_index\": 3, "
        "\"name\": \"main\"},\n"
        "    {\"function_id\": \"0x00000001000000ff\", \"module_id\": 1, \"symbol_index\": 255, "
        "\"name\": \"-[NSObject init]\"},\n"
        "    {\"function_id\": \"0x00000001000000FE\", \"module_id\": 1, \"symbol_index\": 254, "
        "\"name\": \"upper\"}\n  ]\n}\n";
    size_t i;
    rng_seed(5);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 300, 5000, 4, 0);
    fx_add(&s, 1, 1, 250, 5001, 4, 0);
    fx_shuffle(&s.t[1]); /* the original tracer's files are not time-ordered */
    fx_write_all(&s);
    fx_write_manifest_text(&s, json, strlen(json));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(1, r.format_version);
    CHECK_EQ(1, r.clock_type);  /* the manifest's value wins over the files' */
    CHECK_EQ(1, r.layout);      /* from the files */
    CHECK_EQ(fx_first_ts(&s), r.time_start_ns); /* 0 in the manifest: from the files */
    CHECK_EQ(fx_last_ts(&s), r.time_end_ns);
    CHECK_EQ(1, atf_session_reader_check_order(&r, NULL));
    CHECK_EQ(fx_min_ts(&s), r.time_start_ns);   /* the files' true range, once checked */
    CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
    CHECK_EQ(2, r.thread_count);
    for (i = 0; i < r.thread_count; i++) {
        CHECK(r.threads[i].manifest_has_detail);
        CHECK(!r.threads[i].reader.has_detail);   /* no detail.atf: no detail */
        CHECK_EQ(s.t[i].tid, r.threads[i].os_thread_id);
        CHECK_EQ(0, r.threads[i].events_dropped);
        CHECK_EQ(0, r.threads[i].name[0]);
    }
    CHECK_EQ(1, r.threads[1].out_of_order);
    CHECK_EQ(3, r.symbol_count);
    CHECK(r.symbol_count == 3 && strcmp(atf_session_reader_symbol(&r, 3), "main") == 0);
    CHECK(r.symbol_count == 3 &&
          strcmp(atf_session_reader_symbol(&r, 0x1000000FFull), "-[NSObject init]") == 0);
    CHECK(r.symbol_count == 3 && strcmp(atf_session_reader_symbol(&r, 0x1000000FEull), "upper") == 0);
    CHECK(atf_session_reader_symbol(&r, 4) == NULL);
    CHECK(atf_session_reader_symbol(&r, 0x100000000ull) == NULL);
    session_merge_matches(&r, &s, NULL, "original tracer");
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_manifest_incomplete(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    const char *empty_list = "{\"format_version\":2,\"threads\":[],\"time_start_ns\":0}";
    rng_seed(6);
    CHECK(fx_begin(&s));
    fx_standard(&s, 4, 120, 0);
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 2, &man); /* lists the first two of four */
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
    CHECK_EQ(4, r.thread_count);
    if (r.thread_count == 4) {
        CHECK(r.threads[0].in_manifest && r.threads[1].in_manifest);
        CHECK(!r.threads[2].in_manifest && !r.threads[3].in_manifest);
        CHECK_EQ(s.t[3].tid, r.threads[3].os_thread_id);
    }
    CHECK_EQ(3, r.symbol_count); /* what the manifest says is still used */
    session_merge_matches(&r, &s, NULL, "incomplete");
    atf_session_reader_close(&r);
    /* a manifest that lists no thread at all, with four on disk */
    fx_write_manifest_text(&s, empty_list, strlen(empty_list));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
    CHECK_EQ(4, r.thread_count);
    session_merge_matches(&r, &s, NULL, "empty thread list");
    atf_session_reader_close(&r);
    {   /* the time range: the manifest's when it lists everything, else the files' */
        const char *all = "{\"threads\":[{\"id\":0},{\"id\":1},{\"id\":2},{\"id\":4}],"
                          "\"time_start_ns\":5,\"time_end_ns\":6}";
        const char *some = "{\"threads\":[{\"id\":0},{\"id\":1}],\"time_start_ns\":5,"
                           "\"time_end_ns\":6}";
        fx_write_manifest_text(&s, all, strlen(all));
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
        CHECK_EQ(5, r.time_start_ns);
        CHECK_EQ(6, r.time_end_ns);
        atf_session_reader_close(&r);
        fx_write_manifest_text(&s, some, strlen(some));
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
        CHECK_EQ(fx_min_ts(&s), r.time_start_ns);
        CHECK_EQ(fx_max_ts(&s), r.time_end_ns);
        atf_session_reader_close(&r);
    }
    free(man.p);
    fx_end(&s);
}

static void test_manifest_unreadable(void) {
    static const char *bad[] = {
        "",
        "not json",
        "{\"threads\":[{\"id\":0},]}",           /* trailing comma */
        "{\"threads\":[],}",
        "{\"threads\":[{\"id\":01}]}",           /* leading zero */
        "{\"threads\":[{\"id\":1.}]}",
        "{\"threads\":[{\"id\":.5}]}",
        "{\"threads\":[{\"id\":-}]}",
        "{\"threads\":[{\"id\":1e}]}",
        "{\"threads\":[{\"id\":1e+}]}",
        "{\"threads\":[{\"id\":1-2}]}",
        "{\"threads\":[{\"id\":+1}]}",
        "{\"threads\":[{\"id\":0x10}]}",
        "{\"threads\":[]} x",
        "{\"threads\":[]}}",
        "{\"threads\":[{\"id\":0,\"name\":\"a\tb\"}]}", /* raw control character */
        "{\"threads\":[{\"id\":0,\"name\":\"\\x\"}]}",  /* bad escape */
        "{\"threads\":[{\"id\":0,\"name\":\"\\u12G4\"}]}",
        "{\"threads\":[{\"id\":0,\"name\":\"\\u12\"}]}",
        "{\"threads\":[{\"id\":0,\"name\":\"open}]}",
        "{\"threads\":[{\"id\":tru}]}",
        "{\"threads\":[{\"id\":nul}]}",
        "{\"threads\":[{\"id\":True}]}",
        "{'threads':[]}",
        "{\"threads\" [] }",
        "{\"threads\":[] \"x\":1}",
        "{threads:[]}",
        "{\"threads\":{}}",                      /* wrong shape */
        "{\"threads\":5}",
        "[{\"threads\":[]}]",
        "\"threads\"",
        ("{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"threads\":[]}"), /* too deep */
        "{\"threads\":[]}\x01",
    };
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(7);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 60, 0);
    fx_write_all(&s);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        atf_result rc;
        fx_write_manifest_text(&s, bad[i], strlen(bad[i]));
        rc = atf_session_reader_open(&r, s.dir, NULL);
        CHECK_RESULT(ATF_OK, rc);
        if (r.manifest != ATF_MANIFEST_UNREADABLE) printf("  accepted: %s\n", bad[i]);
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK_EQ(3, r.thread_count);
        if (rc == ATF_OK) session_merge_matches(&r, &s, NULL, bad[i]);
        atf_session_reader_close(&r);
    }
    {   /* a NUL byte inside the text */
        static const char nul[] = "{\"threads\":[{\"id\":0\0}]}";
        fx_write_manifest_text(&s, nul, sizeof nul - 1);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        atf_session_reader_close(&r);
    }
    {   /* a directory where manifest.json should be: there, but unreadable */
        char path[512];
        snprintf(path, sizeof path, "%s/manifest.json", s.dir);
        unlink(path);
        mkdir(path, 0755);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK_EQ(3, r.thread_count);
        atf_session_reader_close(&r);
        rmdir(path);
    }
    fx_end(&s);
}

/* An unreadable manifest says where reading stopped: the byte the JSON reader refused,
 * or the value that does not make a manifest. The error names manifest.json. */
static void test_manifest_error_offset(void) {
#define BAD(json, offset) { json, sizeof json - 1, offset }
    static const struct { const char *text; size_t len; uint64_t offset; } bad[] = {
        BAD("", 0),
        BAD("{\"threads\":[{\"id\":0},]}", 21),            /* the ']' after a comma */
        BAD("{\"threads\":[]} x", 15),                     /* text after the value */
        BAD("{\"threads\":[{\"id\":01}]}", 19),            /* the digit after a 0 */
        BAD("{\"threads\":[{\"id\":1.}]}", 20),            /* no digit after '.' */
        BAD("{\"threads\":[{\"id\":0,\"name\":\"a\tb\"}]}", 29), /* raw tab */
        BAD("{\"threads\":[{\"id\":0,\"name\":\"\\u12G4\"}]}", 32), /* 'G' */
        BAD("{\"threads\":[{\"id\":0,\"name\":\"open}]}", 35), /* unterminated */
        BAD("{\"threads\":[{\"id\":0\0}]}", 19),           /* a NUL byte */
        BAD("{\"threads\":{}}", 11),                       /* "threads" not an array */
        BAD("  {\"x\":1}", 2),                              /* no "threads": the object */
        BAD("[{\"threads\":[]}]", 0),                      /* not an object */
    };
#undef BAD
    char deep[200];
    fx_session s;
    atf_session_reader r;
    size_t i, k, n = 0;
    rng_seed(11);
    CHECK(fx_begin(&s));
    fx_standard(&s, 2, 20, 0);
    fx_write_all(&s);
    for (i = 0; i <= sizeof bad / sizeof bad[0]; i++) {
        const char *json = i < sizeof bad / sizeof bad[0] ? bad[i].text : deep;
        size_t len = i < sizeof bad / sizeof bad[0] ? bad[i].len : 0;
        uint64_t offset = i < sizeof bad / sizeof bad[0] ? bad[i].offset : 0;
        if (json == deep) { /* the container 33 deep: the root and 32 arrays above it */
            n = (size_t)snprintf(deep, sizeof deep, "{\"a\":");
            for (k = 0; k < 40; k++) deep[n++] = '[';
            len = n;
            offset = 5 + 31;
        }
        fx_write_manifest_text(&s, json, len);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK_RESULT(ATF_E_CORRUPT, r.manifest_error.code);
        CHECK_EQ(offset, r.manifest_error.offset);
        if (r.manifest_error.offset != offset) printf("  case %u\n", (unsigned)i);
        CHECK(strstr(r.manifest_error.path, "/manifest.json") != NULL);
        CHECK(r.manifest_error.what != NULL);
        CHECK_RESULT(ATF_OK, r.error.code); /* the session itself is fine */
        atf_session_reader_close(&r);
    }
    {   /* readable, missing, and a directory in its place */
        char path[512];
        fx_write_manifest_text(&s, "{\"threads\":[]}", 14);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_RESULT(ATF_OK, r.manifest_error.code);
        atf_session_reader_close(&r);
        snprintf(path, sizeof path, "%s/manifest.json", s.dir);
        unlink(path);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
        CHECK_RESULT(ATF_OK, r.manifest_error.code);
        atf_session_reader_close(&r);
        mkdir(path, 0755);
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
        CHECK(r.manifest_error.code != ATF_OK);
        CHECK(strstr(r.manifest_error.path, "/manifest.json") != NULL);
        atf_session_reader_close(&r);
        rmdir(path);
    }
    fx_end(&s);
}

static void test_manifest_valid_but_unusual(void) {
    static const char *good[] = {
        " \t\r\n{ \"threads\" : [ { \"id\" : 0 } , {\"id\":1},{\"id\":2} ] } \n",
        ("{\"x\":{\"y\":[1,-2.5e+10,0.0,-0,1E3,true,false,null,\"\\/\\b\\f\\r\\t\"]},"
         "\"threads\":[{\"id\":0},{\"id\":1},{\"id\":2}]}"),
        "{\"threads\":[{\"id\":0,\"extra\":{\"deep\":[[[[[[[[[[]]]]]]]]]]}},{\"id\":1},{\"id\":2}]}",
        "{\"threads\":[{\"id\":2},{\"id\":0},{\"id\":1},{\"id\":0}]}",  /* unsorted, repeated */
        "{\"threads\":[{\"id\":0},{\"id\":1},{\"id\":2},7,\"x\",[],{\"no_id\":1}]}",
    };
    fx_session s;
    atf_session_reader r;
    size_t i;
    rng_seed(8);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 50, 10, 3, 0);
    fx_add(&s, 1, 2, 50, 10, 3, 0);
    fx_add(&s, 2, 1, 50, 10, 3, 0);
    fx_write_all(&s);
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        fx_write_manifest_text(&s, good[i], strlen(good[i]));
        CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
        if (r.manifest != ATF_MANIFEST_OK) printf("  refused: %s\n", good[i]);
        CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
        CHECK_EQ(3, r.thread_count);
        session_merge_matches(&r, &s, NULL, good[i]);
        atf_session_reader_close(&r);
    }
    fx_end(&s);
}

static void test_manifest_escaped_names(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    char longname[3000];
    size_t i;
    const char *sym;
    rng_seed(9);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 10, 10, 3, 0);
    fx_add(&s, 1, 1, 10, 10, 3, 0);
    fx_write_all(&s);
    for (i = 0; i < 2500; i++) longname[i] = (char)('a' + i % 26);
    longname[2500] = '\0';
    text_str(&man, "{\"threads\":[{\"id\":0,\"name\":\"t\\\"q\\\\b\\nn\\u00e9\\ud83d\\ude00\"},"
                   "{\"id\":1,\"name\":\"lone \\ud800 high, lone \\udc00 low\"}],\"symbols\":["
                   "{\"function_id\":\"0x0000000000000001\",\"name\":\"a\\\"b\\\\c\\nd\\u00e9"
                   "\\uD83D\\uDE00\\u0041\\/\"},{\"function_id\":17,\"name\":\"");
    text_str(&man, longname);
    text_str(&man, "\"},{\"function_id\":\"0x0000000000000002\",\"name\":\"\\u20ac\\u0000cut\"}]}");
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(2, r.thread_count);
    if (r.thread_count == 2) {
        CHECK(strcmp(r.threads[0].name, "t\"q\\b\nn\xC3\xA9\xF0\x9F\x98\x80") == 0);
        /* unpaired surrogates are not valid UTF-8: each becomes U+FFFD */
        CHECK(strcmp(r.threads[1].name, "lone \xEF\xBF\xBD high, lone \xEF\xBF\xBD low") == 0);
    }
    sym = atf_session_reader_symbol(&r, 1);
    CHECK(sym && strcmp(sym, "a\"b\\c\nd\xC3\xA9\xF0\x9F\x98\x80" "A/") == 0);
    sym = atf_session_reader_symbol(&r, 17);
    CHECK(sym && strcmp(sym, longname) == 0); /* long C++ names are kept whole */
    sym = atf_session_reader_symbol(&r, 2);
    CHECK(sym && strcmp(sym, "\xE2\x82\xAC") == 0); /* \u0000 ends the C string */
    atf_session_reader_close(&r);
    free(man.p);
    /* a thread name longer than the field is cut on a UTF-8 character boundary */
    man.p = NULL;
    man.len = man.cap = 0;
    text_str(&man, "{\"threads\":[{\"id\":0,\"name\":\"");
    for (i = 0; i < 40; i++) text_str(&man, "\\u00e9");
    text_str(&man, "\"},{\"id\":1,\"name\":\"");
    for (i = 0; i < 40; i++) text_str(&man, "\xC3\xA9");
    text_str(&man, "\"}]}");
    fx_write_manifest_text(&s, man.p, man.len);
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    for (i = 0; i < r.thread_count; i++) {
        size_t len = strlen(r.threads[i].name), k;
        CHECK(len >= 60 && len < sizeof r.threads[i].name);
        CHECK_EQ(0, len % 2);
        for (k = 0; k + 1 < len; k += 2)
            CHECK((unsigned char)r.threads[i].name[k] == 0xC3 &&
                  (unsigned char)r.threads[i].name[k + 1] == 0xA9);
    }
    atf_session_reader_close(&r);
    free(man.p);
    fx_end(&s);
}

static void test_manifest_odd_values(void) {
    /* ids that are not slot numbers are ignored (the directories are then found by the
     * scan); has_detail as a number; huge numbers do not wrap into small slots */
    const char *json =
        "{\"threads\":[{\"id\":0,\"has_detail\":1},{\"id\":4294967297},{\"id\":-1},"
        "{\"id\":1.5},{\"id\":18446744073709551617},{\"id\":1e0},{\"id\":\"0x0\"}],"
        "\"time_start_ns\":99999999999999999999999,\"clock_type\":\"boottime\"}";
    fx_session s;
    atf_session_reader r;
    rng_seed(10);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 20, 10, 3, 0);
    fx_add(&s, 1, 1, 20, 10, 3, 0);
    fx_write_all(&s);
    fx_write_manifest_text(&s, json, strlen(json));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(2, r.thread_count);
    if (r.thread_count == 2) {
        CHECK(r.threads[0].in_manifest);
        CHECK(r.threads[0].manifest_has_detail); /* the first listing of a slot wins */
        CHECK_EQ(1, r.threads[1].slot);
        CHECK(!r.threads[1].in_manifest); /* no id above named slot 1 */
    }
    CHECK_EQ(ATF_MANIFEST_INCOMPLETE, r.manifest);
    CHECK_EQ(3, r.clock_type); /* not a number in the manifest: from the files */
    session_merge_matches(&r, &s, NULL, "odd values");
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* The keys of this writer and the older spellings: symbols by location only (offset as
 * "0x..." or a number), a symbol with neither name nor location skipped, build ids
 * validated and lowercased, the command line, and anchors exact when they can be. */
static void test_manifest_locations_and_anchors(void) {
    const char *json =
        "{\"threads\":[],\"cmdline\":\"a b\\tc\","
        "\"modules\":[{\"module_id\":0,\"path\":\"/x\",\"build_id\":\"ABCDEF01\"},"
        "{\"module_id\":1,\"build_id\":\"xyz\"},{\"module_id\":2,\"build_id\":7}],"
        "\"symbols\":[{\"function_id\":\"0x0000000100000002\",\"offset\":\"0x40\"},"
        "{\"function_id\":\"0x3\",\"module_id\":5,\"offset\":16},"
        "{\"function_id\":\"0x4\"},{\"function_id\":\"0x5\",\"name\":\"\"},"
        "{\"function_id\":\"0x6\",\"offset\":-1}],"
        "\"timing_anchors\":["
        "{\"name\":\"exact\",\"host_ns\":1,\"value\":-9223372036854775808,\"timescale\":48000,\"rate\":1},"
        "{\"name\":\"old int\",\"host_ns\":2,\"value\":1234,\"rate\":48000},"
        "{\"name\":\"old double\",\"host_ns\":3,\"value\":1.7954915830846867e+18,\"rate\":1e9},"
        "{\"name\":\"fraction\",\"host_ns\":4,\"value\":0.25,\"rate\":1000},"
        "{\"name\":\"fast\",\"host_ns\":5,\"value\":7,\"rate\":4294967296},"
        "{\"name\":\"huge\",\"host_ns\":6,\"value\":9223372036854775808,\"rate\":1},"
        "{\"name\":\"bad scale\",\"host_ns\":7,\"value\":3,\"timescale\":0,\"rate\":10}]}";
    fx_session s;
    atf_session_reader r;
    const atf_session_anchor *a;
    CHECK(fx_begin(&s));
    fx_write_manifest_text(&s, json, strlen(json));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK(r.cmdline && strcmp(r.cmdline, "a b\tc") == 0);
    CHECK_EQ(3, r.module_count);
    if (r.module_count == 3) {
        CHECK(strcmp(r.modules[0].build_id, "abcdef01") == 0);
        CHECK(strcmp(r.modules[1].build_id, "") == 0);
        CHECK(strcmp(r.modules[2].build_id, "") == 0);
    }
    CHECK_EQ(3, r.symbol_count); /* 0x4 has neither; 0x6's offset is no offset */
    if (r.symbol_count == 3) {
        CHECK(r.symbols[0].function_id == 3 && r.symbols[0].name == NULL && r.symbols[0].has_offset);
        CHECK_EQ(5, r.symbols[0].module_id);
        CHECK_EQ(16, r.symbols[0].offset);
        CHECK(r.symbols[1].function_id == 5 && r.symbols[1].name && !r.symbols[1].has_offset);
        CHECK(r.symbols[2].function_id == 0x100000002ull && r.symbols[2].name == NULL);
        CHECK_EQ(1, r.symbols[2].module_id); /* from the function id */
        CHECK_EQ(0x40, r.symbols[2].offset);
    }
    CHECK(atf_session_reader_symbol(&r, 3) == NULL); /* a location is no name */
    CHECK_EQ(7, r.anchor_count);
    a = atf_session_reader_anchor(&r, "exact");
    CHECK(a && a->timescale == 48000 && a->value == INT64_MIN && a->rate == 48000.0);
    a = atf_session_reader_anchor(&r, "old int");
    CHECK(a && a->timescale == 48000 && a->value == 1234);
    a = atf_session_reader_anchor(&r, "old double"); /* an integer double: exact */
    CHECK(a && a->timescale == 1000000000 && a->value == 1795491583084686592ll);
    a = atf_session_reader_anchor(&r, "fraction");
    CHECK(a && a->timescale == 0 && a->value_f == 0.25 && a->rate == 1000.0);
    a = atf_session_reader_anchor(&r, "fast"); /* rate beyond int32: not exact */
    CHECK(a && a->timescale == 0 && a->value_f == 7.0 && a->rate == 4294967296.0);
    a = atf_session_reader_anchor(&r, "huge"); /* beyond int64 */
    CHECK(a && a->timescale == 0 && a->value_f == 9223372036854775808.0);
    a = atf_session_reader_anchor(&r, "bad scale"); /* timescale 0: the rate decides */
    CHECK(a && a->timescale == 10 && a->value == 3);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_json_mutations_never_crash(void) {
    fx_session s;
    atf_session_reader r;
    text man = {NULL, 0, 0};
    char *buf;
    size_t i, counts[4] = {0, 0, 0, 0};
    rng_seed(11);
    CHECK(fx_begin(&s));
    fx_add(&s, 0, 1, 30, 10, 3, 0);
    fx_add(&s, 1, 2, 30, 10, 3, 0);
    fx_add(&s, 2, 1, 30, 10, 3, 0);
    fx_write_all(&s);
    fx_manifest_modern(&s, NULL, 0, 0, &man);
    buf = (char *)malloc(man.len + 20000);
    for (i = 0; i < 2000; i++) {
        size_t len = man.len, k, pos = (size_t)rng_below(man.len);
        atf_result rc;
        memcpy(buf, man.p, man.len);
        switch (i % 8) {
        case 0: /* byte flips */
            for (k = 0; k <= rng_below(4); k++) buf[rng_below(len)] = (char)rng_below(256);
            break;
        case 1: /* bit flip */
            buf[pos] = (char)(buf[pos] ^ (1 << rng_below(8)));
            break;
        case 2: /* truncation */
            len = pos;
            break;
        case 3: /* a structural character replaced by another */
            buf[pos] = "{}[]\":,\\0-e."[rng_below(12)];
            break;
        case 4: /* deep nesting inserted */
            {
                size_t depth = i % 16 == 4 ? 10000 : (size_t)rng_below(80);
                char open = rng_below(2) ? '[' : '{';
                memmove(buf + pos + depth, buf + pos, len - pos);
                for (k = 0; k < depth; k++) buf[pos + k] = open;
                len += depth;
            }
            break;
        case 5: /* a range deleted */
            k = (size_t)rng_below(len - pos + 1);
            memmove(buf + pos, buf + pos + k, len - pos - k);
            len -= k;
            break;
        case 6: /* a range duplicated */
            k = (size_t)rng_below(len - pos + 1);
            if (k > 10000) k = 10000;
            memmove(buf + pos + k, buf + pos, len - pos);
            len += k;
            break;
        default: /* digits and quotes */
            for (k = 0; k <= rng_below(3); k++) buf[rng_below(len)] = "0123456789\"\\"[rng_below(12)];
            break;
        }
        if (i == 1999) { /* the extreme case, plain: 10000 '[' and nothing else */
            memset(buf, '[', 10000);
            len = 10000;
        }
        fx_write_manifest_text(&s, buf, len);
        rc = atf_session_reader_open(&r, s.dir, NULL);
        CHECK_RESULT(ATF_OK, rc);
        if (rc != ATF_OK) break;
        /* INCOMPLETE too: a mutation can leave valid JSON with an id changed or dropped */
        CHECK(r.manifest == ATF_MANIFEST_OK || r.manifest == ATF_MANIFEST_UNREADABLE ||
              r.manifest == ATF_MANIFEST_INCOMPLETE);
        counts[r.manifest]++;
        {   /* every thread on disk is still found and merged */
            atf_merge m;
            atf_merge_item it;
            size_t n = 0;
            CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
            while (atf_merge_next(&m, &it) == ATF_OK) n++;
            CHECK_EQ(90, n);
            atf_merge_deinit(&m);
        }
        atf_session_reader_close(&r);
    }
    CHECK(counts[ATF_MANIFEST_OK] > 100);         /* the mutations were not all fatal */
    CHECK(counts[ATF_MANIFEST_UNREADABLE] > 1000);
    free(buf);
    free(man.p);
    fx_end(&s);
}

/* Neither a manifest was read nor is there a thread_N directory: the open fails, saying
 * what it found. */
static void test_no_thread_at_all(void) {
    fx_session s;
    atf_session_reader r;
    const char *broken = "{\"threads\":[{\"id\":0}";
    CHECK(fx_begin(&s));
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_E_NOT_FOUND, r.error.code);
    CHECK_EQ(0, r.thread_count);
    CHECK(r.threads == NULL);
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    fx_write_manifest_text(&s, broken, strlen(broken)); /* a manifest that cannot be read */
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(0, r.thread_count);
    CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest); /* kept after the failure */
    CHECK_RESULT(ATF_E_CORRUPT, r.manifest_error.code);
    CHECK(strstr(r.manifest_error.path, "manifest.json") != NULL);
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, "/nonexistent/atf/pid_1", NULL));
    CHECK_RESULT(ATF_E_ARG, atf_session_reader_open(&r, NULL, NULL));
    fx_end(&s);
}

/* Without a readable manifest, thread_N directories alone open the session, none of them
 * opening: each is listed with why, the first error in r->error. A file named thread_N is
 * no thread directory. */
static void test_thread_dirs_without_manifest(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    char path[1200];
    const char *junk = "not an index file, not at all";
    const char *broken = "{\"threads\":[";
    CHECK(fx_begin(&s));
    snprintf(path, sizeof path, "%s/thread_9", s.dir);
    CHECK(write_file(path, junk, strlen(junk)) == 0); /* a file: no thread */
    CHECK_RESULT(ATF_E_NOT_FOUND, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(0, r.thread_count);
    snprintf(path, sizeof path, "%s/thread_2", s.dir);
    CHECK(mkdir(path, 0755) == 0); /* no index.atf */
    snprintf(path, sizeof path, "%s/thread_5", s.dir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/thread_5/index.atf", s.dir);
    CHECK(write_file(path, junk, strlen(junk)) == 0); /* not an index file */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(2, r.thread_count);
    CHECK(r.error.code != ATF_OK);
    CHECK(strstr(r.error.path, "thread_5") != NULL);
    if (r.thread_count == 2) {
        CHECK_EQ(2, r.threads[0].slot);
        CHECK_EQ(5, r.threads[1].slot);
        CHECK(r.threads[0].missing && !r.threads[1].missing);
        CHECK(!r.threads[0].in_manifest && !r.threads[1].in_manifest);
        CHECK_RESULT(ATF_E_NOT_FOUND, r.threads[0].open_result);
        CHECK_RESULT(r.error.code, r.threads[1].open_result);
    }
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);

    fx_write_manifest_text(&s, broken, strlen(broken)); /* unreadable: the scan still counts */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_UNREADABLE, r.manifest);
    CHECK_EQ(2, r.thread_count);
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* The scan names each thread_N directory once, skipping files and names that are not a
 * slot (leading zero, too large, trailing text). */
static void scan_count(void *ctx, uint32_t slot) {
    uint64_t *sum = (uint64_t *)ctx;
    sum[0]++;
    sum[1] += slot;
}

static void test_scan_threads(void) {
    fx_session s;
    uint64_t sum[2] = {0, 0};
    const char *dirs[] = {"thread_0", "thread_7", "thread_4294967295", "thread_07",
                          "thread_4294967296", "thread_3x", "thread_", "pid_3"};
    char path[1200];
    size_t i;
    CHECK(fx_begin(&s));
    for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", s.dir, dirs[i]);
        CHECK(mkdir(path, 0755) == 0);
    }
    snprintf(path, sizeof path, "%s/thread_8", s.dir);
    CHECK(write_file(path, "x", 1) == 0);
    CHECK_EQ(0, atf_session_scan_threads(s.dir, scan_count, sum));
    CHECK_EQ(3, sum[0]);
    CHECK_EQ(7 + (uint64_t)UINT32_MAX, sum[1]);
    CHECK(atf_session_scan_threads("/nonexistent/atf/pid_1", scan_count, sum) != 0);
    CHECK_EQ(3, sum[0]);
    fx_end(&s);
}

/* A manifest that was read opens the session though no thread opens: a session stopped
 * before any thread attached lists none; listed threads that are not there are missing. */
static void test_manifest_without_an_opening_thread(void) {
    fx_session s;
    atf_session_reader r;
    atf_merge m;
    atf_merge_item it;
    const char *none = "{\"threads\":[],\"state\":\"recording\",\"timing_anchors\":"
                       "[{\"name\":\"wall_clock_ns\",\"host_ns\":5,\"value\":7}]}";
    const char *listed = "{\"threads\":[{\"id\":3},{\"id\":0}],\"state\":\"closed\"}";
    CHECK(fx_begin(&s));
    fx_write_manifest_text(&s, none, strlen(none));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(0, r.thread_count);
    CHECK_RESULT(ATF_OK, r.error.code);
    CHECK(strcmp(r.state, "recording") == 0);
    CHECK_EQ(1, r.anchor_count);
    if (r.anchor_count == 1) { /* an integer without a rate: exact, in ns */
        CHECK_EQ(7, r.anchors[0].value);
        CHECK_EQ(1000000000, r.anchors[0].timescale);
    }
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);

    fx_write_manifest_text(&s, listed, strlen(listed));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(ATF_MANIFEST_OK, r.manifest);
    CHECK_EQ(2, r.thread_count);
    CHECK_RESULT(ATF_OK, r.error.code); /* missing is no error of the files */
    if (r.thread_count == 2) {
        CHECK_EQ(0, r.threads[0].slot);
        CHECK_EQ(3, r.threads[1].slot);
        CHECK(r.threads[0].missing && r.threads[1].missing);
        CHECK(r.threads[0].in_manifest && r.threads[1].in_manifest);
        CHECK_RESULT(ATF_E_NOT_FOUND, r.threads[1].open_result);
    }
    CHECK(strcmp(r.state, "closed") == 0);
    CHECK_RESULT(ATF_OK, atf_merge_init(&m, &r, NULL));
    CHECK_RESULT(ATF_E_RANGE, atf_merge_next(&m, &it));
    atf_merge_deinit(&m);
    atf_session_reader_close(&r);
    fx_end(&s);
}

/* Every thread invalid: the session opens, with or without a manifest; each thread says
 * why, the first error is kept. */
static void test_manifest_with_only_invalid_threads(void) {
    fx_session s;
    atf_session_reader r;
    char path[512];
    const char *listed = "{\"threads\":[{\"id\":0}],\"state\":\"recording\"}";
    static const uint8_t garbage[10] = {'A', 'T', 'I', '2', 1, 1, 0, 0, 0, 0};
    CHECK(fx_begin(&s));
    snprintf(path, sizeof path, "%s/thread_0", s.dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/thread_0/index.atf", s.dir);
    write_file(path, garbage, sizeof garbage); /* torn inside the header */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_RESULT(ATF_E_TRUNCATED, r.error.code);
    CHECK_EQ(ATF_MANIFEST_MISSING, r.manifest);
    CHECK_EQ(1, r.thread_count);
    if (r.thread_count == 1) {
        CHECK(!r.threads[0].in_manifest);
        CHECK_RESULT(ATF_E_TRUNCATED, r.threads[0].open_result);
    }
    atf_session_reader_close(&r);
    fx_write_manifest_text(&s, listed, strlen(listed));
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(1, r.thread_count);
    CHECK_RESULT(ATF_E_TRUNCATED, r.error.code);
    CHECK(strstr(r.error.path, "thread_0/index.atf") != NULL);
    if (r.thread_count == 1) {
        CHECK(!r.threads[0].missing);
        CHECK_RESULT(ATF_E_TRUNCATED, r.threads[0].open_result);
    }
    CHECK(strcmp(r.state, "recording") == 0);
    atf_session_reader_close(&r);
    fx_end(&s);
}

static void test_invalid_thread_file_does_not_sink_the_session(void) {
    fx_session s;
    atf_session_reader r;
    atf_session_thread *t;
    char path[512];
    static const uint8_t garbage[10] = {'A', 'T', 'I', '2', 1, 1, 0, 0, 0, 0};
    rng_seed(13);
    CHECK(fx_begin(&s));
    fx_standard(&s, 3, 80, 0);
    fx_write_all(&s);
    snprintf(path, sizeof path, "%s/thread_7", s.dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/thread_7/index.atf", s.dir);
    write_file(path, garbage, sizeof garbage); /* torn inside the header */
    CHECK_RESULT(ATF_OK, atf_session_reader_open(&r, s.dir, NULL));
    CHECK_EQ(4, r.thread_count);
    CHECK_RESULT(ATF_E_TRUNCATED, r.error.code); /* the first problem is kept */
    CHECK(strstr(r.error.path, "thread_7/index.atf") != NULL);
    t = atf_session_reader_thread(&r, 7);
    CHECK(t != NULL);
    if (t) {
        CHECK_RESULT(ATF_E_TRUNCATED, t->open_result);
        CHECK(!t->missing);
    }
    if (r.thread_count) {
        CHECK_RESULT(ATF_OK, r.threads[0].open_result);
        session_merge_matches(&r, &s, NULL, "bad thread skipped");
    }
    atf_session_reader_close(&r);
    fx_end(&s);
}

static const test_case tests[] = {
    {"session_without_manifest", test_session_without_manifest},
    {"manifest_lists_missing_thread", test_manifest_lists_missing_thread},
    {"original_tracer_manifest", test_original_tracer_manifest},
    {"manifest_incomplete", test_manifest_incomplete},
    {"manifest_unreadable", test_manifest_unreadable},
    {"manifest_error_offset", test_manifest_error_offset},
    {"manifest_valid_but_unusual", test_manifest_valid_but_unusual},
    {"manifest_escaped_names", test_manifest_escaped_names},
    {"manifest_odd_values", test_manifest_odd_values},
    {"manifest_locations_and_anchors", test_manifest_locations_and_anchors},
    {"json_mutations_never_crash", test_json_mutations_never_crash},
    {"no_thread_at_all", test_no_thread_at_all},
    {"thread_dirs_without_manifest", test_thread_dirs_without_manifest},
    {"scan_threads", test_scan_threads},
    {"manifest_without_an_opening_thread", test_manifest_without_an_opening_thread},
    {"manifest_with_only_invalid_threads", test_manifest_with_only_invalid_threads},
    {"invalid_thread_file_does_not_sink_the_session", test_invalid_thread_file_does_not_sink_the_session},
};

HARNESS_MAIN("manifest", tests)
