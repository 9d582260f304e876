/* hello.c - the smallest program that records a session and reads it back.
 *
 *   build/examples/hello [ROOT]      (ROOT defaults to ./traces)
 *
 * Records a few nested calls on the main thread, closes the session (which finalizes
 * the files and the manifest), then opens it again and prints every event in time order.
 */
#define ATF_IMPLEMENTATION
#include "atf.h"

#include <stdio.h>

enum { FN_MAIN = 1, FN_GREET = 2 };

static int record(const char *root, char *session_dir, size_t cap) {
    atf_session *session;
    atf_producer *w;
    int i;
    if (atf_session_open(&session, root, NULL) != ATF_OK) return 1;
    atf_session_add_symbol(session, FN_MAIN, "main");
    atf_session_add_symbol(session, FN_GREET, "greet");
    w = atf_session_producer(session);
    atf_producer_call(w, FN_MAIN, atf_now_ns());
    for (i = 0; i < 3; i++) {
        atf_producer_call(w, FN_GREET, atf_now_ns());
        atf_producer_return(w, FN_GREET, atf_now_ns());
    }
    atf_producer_return(w, FN_MAIN, atf_now_ns());
    snprintf(session_dir, cap, "%s", atf_session_path(session));
    return atf_session_close(session) == ATF_OK ? 0 : 1;
}

static int read_back(const char *session_dir) {
    atf_session_reader reader;
    atf_merge merge;
    atf_merge_item item;
    if (atf_session_reader_open(&reader, session_dir, NULL) != ATF_OK) return 1;
    atf_merge_init(&merge, &reader, NULL);
    while (atf_merge_next(&merge, &item) == ATF_OK) {
        const char *name = atf_session_reader_symbol(&reader, item.event.function_id);
        printf("%*s%-6s %s\n", (int)item.event.call_depth * 2, "",
               atf_event_kind_str(item.event.kind), name ? name : "?");
    }
    atf_merge_deinit(&merge);
    atf_session_reader_close(&reader);
    return 0;
}

int main(int argc, char **argv) {
    char dir[1024];
    if (record(argc > 1 ? argv[1] : "traces", dir, sizeof dir) != 0) {
        fprintf(stderr, "hello: recording failed\n");
        return 1;
    }
    printf("recorded %s\n", dir);
    return read_back(dir);
}
