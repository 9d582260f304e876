/* shm_drain.c - one process produces, another drains: rings in shared memory.
 *
 * The parent maps a MAP_SHARED region and forks. The child formats two rings in it
 * (atf_ring_init), binds a writer to them (atf_producer_init) and records calls and returns
 * with a detail record on every other event. The writer's default overflow policy
 * (ATF_OVERFLOW_BLOCK) waits for the parent whenever a ring is full, so nothing is lost
 * (were the parent to stop draining for a second, the child would drop and count instead
 * of hanging). Then it closes its writer and exits. The parent opens
 * a session in manual drain mode, attaches the child's rings (atf_session_attach_rings)
 * once they are formatted, pumps until the child is done, closes the session, reads the
 * thread back and prints a summary. Exits 0 when every event and every detail record is
 * on disk, with exact links.
 *
 *   build/examples/shm_drain [root]      (default root: /tmp/atf_shm_demo) */
#define ATF_IMPLEMENTATION
#include "atf.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define EVENTS 200000u
#define INDEX_SLOTS 16384u
#define DETAIL_BYTES (1024u * 1024u)

/* The child: formats the rings, then produces. Never returns. */
static void produce(uint8_t *shared, size_t index_size, size_t detail_size) {
    void *index_mem = shared, *detail_mem = shared + index_size;
    atf_producer w;
    uint32_t i;
    if (atf_ring_init(index_mem, index_size, ATF_RING_INDEX, INDEX_SLOTS, ATF_LAYOUT_1,
                      (uint32_t)getpid()) != ATF_OK ||
        atf_ring_init(detail_mem, detail_size, ATF_RING_DETAIL, DETAIL_BYTES, ATF_LAYOUT_1,
                      (uint32_t)getpid()) != ATF_OK ||
        atf_producer_init(&w, index_mem, index_size, detail_mem, detail_size, ATF_DETAIL_ALWAYS) != ATF_OK)
        _exit(2);
    for (i = 0; i < EVENTS; i++) {
        uint64_t fid = (uint64_t)(i % 100) + 1, ts = atf_now_ns();
        if (i % 2 == 0) {
            atf_detail_payload p;
            uint8_t buf[ATF_DETAIL_PAYLOAD_SIZE];
            memset(&p, 0, sizeof p);
            p.function_id = fid;
            p.x[0] = i;
            atf_producer_event_detail(&w, ATF_EVENT_CALL, fid, ts, ATF_DETAIL_FUNCTION_CALL, buf,
                                    atf_detail_payload_encode(&p, buf, sizeof buf));
        } else {
            atf_producer_return(&w, fid, ts);
        }
    }
    atf_producer_close(&w);
    _exit(w.dropped || w.detail_dropped ? 3 : 0);
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : "/tmp/atf_shm_demo";
    size_t index_size = atf_ring_memory_size(ATF_RING_INDEX, INDEX_SLOTS);
    size_t detail_size = atf_ring_memory_size(ATF_RING_DETAIL, DETAIL_BYTES);
    uint8_t *shared = (uint8_t *)mmap(NULL, index_size + detail_size, PROT_READ | PROT_WRITE,
                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    atf_session *s = NULL;
    atf_session_config cfg;
    atf_thread_reader tr;
    atf_reader_options opt;
    atf_error err;
    atf_result rc;
    char dir[1024], thread_dir[1100];
    uint64_t linked = 0, detail_dropped, i;
    int status = 0, ok;
    pid_t child;

    if (shared == MAP_FAILED) return perror("mmap"), 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.drain_mode = ATF_DRAIN_MANUAL;
    cfg.session_name = "shm_demo";
    if ((rc = atf_session_open(&s, root, &cfg)) != ATF_OK) {
        fprintf(stderr, "atf_session_open: %s\n", atf_result_str(rc));
        return 1;
    }
    snprintf(dir, sizeof dir, "%s", atf_session_path(s));

    child = fork();
    if (child < 0) return perror("fork"), 1;
    if (child == 0) produce(shared, index_size, detail_size);

    /* attach once the child has formatted the rings (the magic is stored last) */
    while ((rc = atf_session_attach_rings(s, shared, index_size, shared + index_size, detail_size,
                                          "shm child", NULL)) == ATF_E_MAGIC)
        sched_yield();
    if (rc != ATF_OK) {
        fprintf(stderr, "atf_session_attach_rings: %s\n", atf_result_str(rc));
        return 1;
    }
    /* drain while the child produces; it marks its rings closed when done */
    while (!__atomic_load_n(&((atf_ring_header *)shared)->closed, __ATOMIC_ACQUIRE)) {
        if ((rc = atf_session_pump(s)) != ATF_OK) break;
        usleep(200);
    }
    waitpid(child, &status, 0);
    atf_session_pump(s);
    rc = atf_session_close_ex(s, &err);
    if (rc != ATF_OK) {
        char line[800];
        fprintf(stderr, "session: %s\n", atf_error_format(&err, line, sizeof line));
        return 1;
    }

    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    snprintf(thread_dir, sizeof thread_dir, "%s/thread_0", dir);
    if ((rc = atf_thread_reader_open(&tr, thread_dir, &opt)) != ATF_OK) {
        fprintf(stderr, "read back: %s\n", atf_result_str(rc));
        return 1;
    }
    for (i = 0; i < tr.index.event_count; i++) {
        atf_index_event ev;
        atf_index_reader_get(&tr.index, i, &ev);
        linked += ev.detail_seq != ATF_NO_DETAIL;
    }
    detail_dropped = ((atf_ring_header *)(shared + index_size))->dropped;
    ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && tr.index.event_count == EVENTS &&
         tr.has_detail && tr.detail.event_count == EVENTS / 2 && detail_dropped == 0 &&
         linked == tr.detail.event_count && tr.gap_count == 0 &&
         atf_thread_reader_verify_links(&tr) == ATF_OK && tr.index.header.thread_id == (uint32_t)child;
    printf("shm_drain: child %d produced %u events and %u detail records (%llu dropped);\n"
           "  parent wrote %llu index events (%s, CRC %s) and %llu detail records, %llu linked, "
           "links %s\n  %s\n",
           (int)child, EVENTS, EVENTS / 2, (unsigned long long)detail_dropped,
           (unsigned long long)tr.index.event_count, atf_count_source_str(tr.index.counted),
           atf_crc_state_str(tr.index.crc_state), (unsigned long long)tr.detail.event_count,
           (unsigned long long)linked, ok ? "exact" : "WRONG", thread_dir);
    atf_thread_reader_close(&tr);
    munmap(shared, index_size + detail_size);
    if (argc <= 1) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    }
    return ok ? 0 : 1;
}
