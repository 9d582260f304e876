/* query.c - the hottest functions of a session, by self time.
 *
 *   build/examples/query SESSION_DIR/pid_N [COUNT]     (COUNT defaults to 10)
 *
 * Reads the events of every thread in time order through the merge, pairs each return
 * with its call on a per-thread stack, and adds up per function: calls, self time (time
 * in the function minus time in the functions it called) and total time (counted for the
 * outermost activation only, so recursion is not counted twice). Calls still open at the
 * end of a thread are closed at its last event. Names come from the manifest.
 */
#define ATF_IMPLEMENTATION
#include "atf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-function figures and per-(thread, function) activations: open addressing -- */
typedef struct fn_stat {
    uint64_t fid, calls, self_ns, total_ns;
    uint32_t slot;               /* active table only: the thread */
    uint32_t active;             /* active table only: activations on that thread's stack */
    int used;
} fn_stat;

typedef struct table {
    fn_stat *e;
    size_t cap, used;            /* cap is a power of two */
} table;

static size_t hash_key(uint64_t fid, uint32_t slot) {
    uint64_t h = (fid ^ ((uint64_t)slot << 48)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20);
}

/* The entry for (fid, slot), created when missing; NULL when out of memory. */
static fn_stat *table_get(table *t, uint64_t fid, uint32_t slot) {
    size_t i;
    if ((t->used + 1) * 2 > t->cap) {
        table bigger;
        bigger.cap = t->cap ? t->cap * 2 : 1024;
        bigger.used = 0;
        bigger.e = (fn_stat *)calloc(bigger.cap, sizeof *bigger.e);
        if (!bigger.e) return NULL;
        for (i = 0; i < t->cap; i++) {
            if (t->e[i].used) {
                size_t j = hash_key(t->e[i].fid, t->e[i].slot) & (bigger.cap - 1);
                while (bigger.e[j].used) j = (j + 1) & (bigger.cap - 1);
                bigger.e[j] = t->e[i];
                bigger.used++;
            }
        }
        free(t->e);
        *t = bigger;
    }
    for (i = hash_key(fid, slot) & (t->cap - 1); t->e[i].used; i = (i + 1) & (t->cap - 1))
        if (t->e[i].fid == fid && t->e[i].slot == slot) return &t->e[i];
    t->e[i].used = 1;
    t->e[i].fid = fid;
    t->e[i].slot = slot;
    t->used++;
    return &t->e[i];
}

/* ---- per-thread call stacks -------------------------------------------------------- */
typedef struct frame {
    uint64_t fid, start_ns, child_ns;
    uint32_t slot;
} frame;

typedef struct stack {
    frame *f;
    size_t len, cap;
    uint64_t last_ns;            /* timestamp of the thread's latest event */
} stack;

typedef struct query {
    table stats;                 /* key: fid (slot 0) */
    table active;                /* key: (fid, slot) */
    int oom;
} query;

static void push(query *q, stack *s, uint32_t slot, uint64_t fid, uint64_t ts) {
    frame *f;
    fn_stat *a = table_get(&q->active, fid, slot);
    if (!a) { q->oom = 1; return; }
    if (s->len == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        frame *g = (frame *)realloc(s->f, cap * sizeof *g);
        if (!g) { q->oom = 1; return; }
        s->f = g;
        s->cap = cap;
    }
    f = &s->f[s->len];
    f->fid = fid;
    f->start_ns = ts;
    f->child_ns = 0;
    f->slot = slot;
    a->active++;
    s->len++;
}

/* Pops the top frame, which ends at ts. */
static void pop(query *q, stack *s, uint64_t ts) {
    frame *f = &s->f[--s->len];
    uint64_t dur = ts > f->start_ns ? ts - f->start_ns : 0;
    fn_stat *a = table_get(&q->active, f->fid, f->slot);
    fn_stat *st = table_get(&q->stats, f->fid, 0);
    if (!a || !st) { q->oom = 1; return; }
    st->calls++;
    st->self_ns += dur > f->child_ns ? dur - f->child_ns : 0;
    if (--a->active == 0) st->total_ns += dur; /* outermost activation */
    if (s->len) s->f[s->len - 1].child_ns += dur;
}

/* A return (or exception) of fid at ts: closes the frames above fid's, then fid's. A
 * return with no matching call (recording began inside the function) is ignored. */
static void leave(query *q, stack *s, uint64_t fid, uint64_t ts) {
    size_t i = s->len;
    while (i > 0 && s->f[i - 1].fid != fid) i--;
    if (i == 0) return;
    while (s->len >= i && !q->oom) pop(q, s, ts);
}

static int by_self_desc(const void *a, const void *b) {
    const fn_stat *x = (const fn_stat *)a, *y = (const fn_stat *)b;
    if (x->self_ns != y->self_ns) return x->self_ns < y->self_ns ? 1 : -1;
    if (x->calls != y->calls) return x->calls < y->calls ? 1 : -1;
    return (x->fid > y->fid) - (x->fid < y->fid);
}

int main(int argc, char **argv) {
    atf_session_reader reader;
    atf_merge merge;
    atf_merge_item item;
    query q;
    stack *stacks;
    fn_stat *rows;
    size_t i, n = 0, top = 10;
    uint64_t events = 0, self_sum = 0;
    char err[1024];
    atf_result rc;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s SESSION_DIR/pid_N [COUNT]\n", argv[0]);
        return 2;
    }
    if (argc == 3) { /* a second path here (a glob that matched two) is not a count */
        char *end;
        top = (size_t)strtoul(argv[2], &end, 10);
        if (end == argv[2] || *end) {
            fprintf(stderr, "%s: COUNT '%s' is not a number (one pid_N directory at a "
                            "time)\n", argv[0], argv[2]);
            return 2;
        }
    }
    rc = atf_session_reader_open(&reader, argv[1], NULL);
    if (rc != ATF_OK) {
        fprintf(stderr, "query: %s\n", atf_error_format(&reader.error, err, sizeof err));
        return 1;
    }
    rc = atf_merge_init(&merge, &reader, NULL);
    if (rc != ATF_OK) {
        fprintf(stderr, "query: merge: %s\n", atf_result_str(rc));
        atf_session_reader_close(&reader);
        return 1;
    }
    memset(&q, 0, sizeof q);
    stacks = (stack *)calloc(reader.thread_count ? reader.thread_count : 1, sizeof *stacks);
    if (!stacks) q.oom = 1;
    while (!q.oom && atf_merge_next(&merge, &item) == ATF_OK) {
        stack *s = &stacks[item.thread - reader.threads];
        uint64_t ts = item.event.timestamp_ns;
        events++;
        s->last_ns = ts;
        if (item.event.kind == ATF_EVENT_CALL)
            push(&q, s, item.slot, item.event.function_id, ts);
        else if (item.event.kind == ATF_EVENT_RETURN || item.event.kind == ATF_EVENT_EXCEPTION)
            leave(&q, s, item.event.function_id, ts);
    }
    for (i = 0; stacks && i < reader.thread_count; i++) {
        while (stacks[i].len && !q.oom) pop(&q, &stacks[i], stacks[i].last_ns);
        free(stacks[i].f);
    }
    free(stacks);
    atf_merge_deinit(&merge);
    if (q.oom) {
        fprintf(stderr, "query: out of memory\n");
        atf_session_reader_close(&reader);
        return 1;
    }

    rows = (fn_stat *)malloc((q.stats.used ? q.stats.used : 1) * sizeof *rows);
    if (!rows) {
        fprintf(stderr, "query: out of memory\n");
        atf_session_reader_close(&reader);
        return 1;
    }
    for (i = 0; i < q.stats.cap; i++)
        if (q.stats.e[i].used) {
            rows[n++] = q.stats.e[i];
            self_sum += q.stats.e[i].self_ns;
        }
    qsort(rows, n, sizeof *rows, by_self_desc);

    printf("%s: %zu threads, %llu events, %zu functions\n", argv[1], reader.thread_count,
           (unsigned long long)events, n);
    printf("%4s %12s %7s %10s %12s  %s\n", "rank", "self ms", "self %", "calls", "total ms",
           "function");
    for (i = 0; i < n && i < top; i++) {
        const char *name = atf_session_reader_symbol(&reader, rows[i].fid);
        char hex[24];
        if (!name) {
            snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)rows[i].fid);
            name = hex;
        }
        printf("%4zu %12.3f %6.1f%% %10llu %12.3f  %s\n", i + 1, (double)rows[i].self_ns / 1e6,
               self_sum ? 100.0 * (double)rows[i].self_ns / (double)self_sum : 0.0,
               (unsigned long long)rows[i].calls, (double)rows[i].total_ns / 1e6, name);
    }
    free(rows);
    free(q.stats.e);
    free(q.active.e);
    atf_session_reader_close(&reader);
    return 0;
}
