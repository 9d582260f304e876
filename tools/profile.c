/* profile.c - per function and per call path figures from the walk (see profile.h),
 * shared by stats, export --format folded and diff.
 * SPDX-License-Identifier: MIT */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

/* ==== names ========================================================================== */
static uint64_t profile_hash(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* s as a frame of a folded stack, newly allocated (NULL when out of memory): valid UTF-8
 * (an invalid byte as U+FFFD), with ';' and control characters as '_', so that the
 * separators of the format (';' between frames, a line per stack) never appear in it. */
static char *profile_frame_text(const char *s) {
    size_t len = strlen(s), n, i;
    char *f = (char *)malloc(len * 3 + 1); /* an invalid byte becomes U+FFFD: 3 bytes */
    if (!f) return NULL;
    n = cli_utf8_clean(s, f, len * 3 + 1);
    for (i = 0; i < n; i++)
        if (f[i] == ';' || (unsigned char)f[i] < 0x20 || f[i] == 0x7f) f[i] = '_';
    f[n] = '\0';
    return f;
}

/* Places id at its hash in slots (a free one exists). */
static void profile_names_place(uint32_t *slots, size_t cap, uint64_t hash, uint32_t id) {
    size_t i;
    for (i = (size_t)hash & (cap - 1); slots[i]; i = (i + 1) & (cap - 1)) {}
    slots[i] = id + 1;
}

uint32_t profile_name_id(profile_names *n, const char *s) {
    uint64_t h = profile_hash(s);
    profile_name *e;
    size_t i;
    if (n->slot_cap)
        for (i = (size_t)h & (n->slot_cap - 1); n->slots[i]; i = (i + 1) & (n->slot_cap - 1)) {
            const profile_name *it = &n->items[n->slots[i] - 1];
            if (it->hash == h && strcmp(it->text, s) == 0) return n->slots[i] - 1;
        }
    if (n->count >= UINT32_MAX - 1) return UINT32_MAX;
    if ((n->count + 1) * 2 > n->slot_cap) { /* at most half full */
        size_t cap = n->slot_cap ? n->slot_cap * 2 : 64, k;
        uint32_t *slots = (uint32_t *)calloc(cap, sizeof *slots);
        if (!slots) return UINT32_MAX;
        for (k = 0; k < n->count; k++)
            profile_names_place(slots, cap, n->items[k].hash, (uint32_t)k);
        free(n->slots);
        n->slots = slots;
        n->slot_cap = cap;
    }
    if (n->count == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 64;
        profile_name *items = (profile_name *)realloc(n->items, cap * sizeof *items);
        if (!items) return UINT32_MAX;
        n->items = items;
        n->cap = cap;
    }
    e = &n->items[n->count];
    e->hash = h;
    if ((e->text = (char *)malloc(strlen(s) + 1)) == NULL) return UINT32_MAX;
    memcpy(e->text, s, strlen(s) + 1);
    profile_names_place(n->slots, n->slot_cap, h, (uint32_t)n->count);
    return (uint32_t)n->count++;
}

void profile_names_free(profile_names *n) {
    size_t i;
    for (i = 0; i < n->count; i++) free(n->items[i].text);
    free(n->items);
    free(n->slots);
    memset(n, 0, sizeof *n);
}

/* The id of s as a frame (profile_frame_text), so that names that read the same as frames
 * are one frame; UINT32_MAX when out of memory. */
static uint32_t profile_frame_id(profile_names *n, const char *s) {
    char *frame = profile_frame_text(s);
    uint32_t id = frame ? profile_name_id(n, frame) : UINT32_MAX;
    free(frame);
    return id;
}

/* ==== per function =================================================================== */
const profile_fn *profile_fns_find(const profile_fns *f, uint64_t fid) {
    const uint64_t *pos = walk_map_find(&f->index, fid);
    return pos ? &f->fns[*pos] : NULL;
}

void profile_fns_name(profile_fns *f, const cli_trace *t) {
    size_t i;
    for (i = 0; i < f->count; i++) {
        profile_fn *fn = &f->fns[i];
        fn->name = cli_trace_name(t, fn->fid, fn->hex, sizeof fn->hex);
    }
}

void profile_fns_free(profile_fns *f) {
    walk_map_free(&f->index);
    free(f->fns);
    memset(f, 0, sizeof *f);
}

/* The entry of fid, added (zeroed) when new; NULL when out of memory. */
static profile_fn *profile_fns_put(profile_fns *f, uint64_t fid) {
    int is_new;
    uint64_t *pos;
    profile_fn *fn;
    if (f->count == f->cap) { /* room first: a fid mapped is always an entry */
        size_t cap = f->cap ? f->cap * 2 : 64;
        profile_fn *fns = (profile_fn *)realloc(f->fns, cap * sizeof *fns);
        if (!fns) return NULL;
        f->fns = fns;
        f->cap = cap;
    }
    if ((pos = walk_map_put(&f->index, fid, &is_new)) == NULL) return NULL;
    if (is_new) {
        *pos = f->count;
        fn = &f->fns[f->count++];
        memset(fn, 0, sizeof *fn);
        fn->fid = fid;
        fn->min_ns = UINT64_MAX;
    }
    return &f->fns[*pos];
}

/* ==== per call path ================================================================== */
void profile_paths_free(profile_paths *p) {
    profile_names_free(&p->names);
    free(p->nodes);
    walk_map_free(&p->children);
    memset(p, 0, sizeof *p);
}

/* Room for one more node: 1, else 0. */
static int profile_paths_grow(profile_paths *p) {
    size_t cap = p->cap ? p->cap * 2 : 256;
    profile_node *nodes;
    if (p->count < p->cap) return 1;
    if (p->count >= UINT32_MAX - 1) return 0; /* ids are 32-bit */
    if ((nodes = (profile_node *)realloc(p->nodes, cap * sizeof *nodes)) == NULL) return 0;
    p->nodes = nodes;
    p->cap = cap;
    return 1;
}

/* The node of name under parent, added when new (the root first); UINT32_MAX when out of
 * memory. */
static uint32_t profile_child(profile_paths *p, uint32_t parent, uint32_t name) {
    int is_new;
    uint64_t *pos;
    profile_node *n;
    if (p->count == 0) {
        if (!profile_paths_grow(p)) return UINT32_MAX;
        memset(&p->nodes[PROFILE_ROOT], 0, sizeof p->nodes[PROFILE_ROOT]);
        p->count = 1;
    }
    if (!profile_paths_grow(p)) return UINT32_MAX; /* room first: a key mapped is a node */
    if ((pos = walk_map_put(&p->children, (uint64_t)parent << 32 | name, &is_new)) == NULL)
        return UINT32_MAX;
    if (!is_new) return (uint32_t)*pos;
    *pos = p->count;
    n = &p->nodes[p->count];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->name = name;
    return (uint32_t)p->count++;
}

int profile_parse_frame_mode(const cli_command *cmd, const char *text, profile_frame_mode *mode) {
    if (strcmp(text, "name") == 0) *mode = PROFILE_FRAME_NAME;
    else if (strcmp(text, "tid") == 0) *mode = PROFILE_FRAME_TID;
    else if (strcmp(text, "none") == 0) *mode = PROFILE_FRAME_NONE;
    else return cli_usage_error(cmd, "--thread-frame: '%s' is none of name, tid, none", text);
    return CLI_CONTINUE;
}

/* Sorts names by their bytes (never equal: names are distinct). */
typedef struct profile_ranked {
    const char *text;
    uint32_t id;
} profile_ranked;

static int profile_by_text(const void *x, const void *y) {
    const profile_ranked *a = (const profile_ranked *)x, *b = (const profile_ranked *)y;
    return strcmp(a->text, b->text);
}

static int profile_by_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The order of profile_paths_order: the children of each node grouped after it (a
 * counting sort by parent), each group sorted by the rank of its frames, then a
 * depth-first walk from the root. */
atf_result profile_paths_order(const profile_paths *p, uint32_t **order) {
    size_t n = p->count, i, k, done = 0, top = 0;
    uint32_t *rank = NULL, *stack = NULL, *out = NULL;
    size_t *start = NULL;
    uint64_t *kids = NULL;
    profile_ranked *byname = NULL;
    atf_result rc = ATF_E_NOMEM;
    *order = NULL;
    if (n <= 1) return (*order = (uint32_t *)malloc(sizeof **order)) ? ATF_OK : ATF_E_NOMEM;
    rank = (uint32_t *)malloc((p->names.count + 1) * sizeof *rank);
    byname = (profile_ranked *)malloc((p->names.count + 1) * sizeof *byname);
    start = (size_t *)calloc(n + 1, sizeof *start);
    kids = (uint64_t *)malloc(n * sizeof *kids);
    stack = (uint32_t *)malloc(n * sizeof *stack);
    out = (uint32_t *)malloc(n * sizeof *out);
    if (!rank || !byname || !start || !kids || !stack || !out) goto done;
    for (i = 0; i < p->names.count; i++) {
        byname[i].text = p->names.items[i].text;
        byname[i].id = (uint32_t)i;
    }
    qsort(byname, p->names.count, sizeof *byname, profile_by_text);
    for (i = 0; i < p->names.count; i++) rank[byname[i].id] = (uint32_t)i;
    /* kids[start[q] .. start[q + 1]) are q's children as rank << 32 | node, sorted */
    for (i = 1; i < n; i++) start[p->nodes[i].parent + 1]++;
    for (i = 0; i < n; i++) start[i + 1] += start[i];
    for (i = 1; i < n; i++) {
        size_t q = p->nodes[i].parent;
        kids[start[q]++] = (uint64_t)rank[p->nodes[i].name] << 32 | i;
    }
    for (i = n; i > 0; i--) start[i] = start[i - 1]; /* back to the groups' starts */
    start[0] = 0;
    for (i = 0; i < n; i++)
        if (start[i + 1] - start[i] > 1)
            qsort(kids + start[i], start[i + 1] - start[i], sizeof *kids, profile_by_u64);
    /* preorder: a node, then its children's subtrees in order (pushed last to first) */
    for (k = start[PROFILE_ROOT + 1]; k > start[PROFILE_ROOT]; k--)
        stack[top++] = (uint32_t)kids[k - 1];
    while (top) {
        uint32_t q = stack[--top];
        out[done++] = q;
        for (k = start[q + 1]; k > start[q]; k--) stack[top++] = (uint32_t)kids[k - 1];
    }
    *order = out;
    out = NULL;
    rc = ATF_OK;
done:
    free(rank);
    free(byname);
    free(start);
    free(kids);
    free(stack);
    free(out);
    return rc;
}

int profile_path_text(const profile_paths *p, uint32_t node, profile_text *t) {
    size_t len = 0, at;
    uint32_t q;
    for (q = node; q != PROFILE_ROOT; q = p->nodes[q].parent)
        len += strlen(p->names.items[p->nodes[q].name].text) + (len ? 1 : 0);
    if (len + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        char *s;
        while (cap < len + 1) cap *= 2;
        if ((s = (char *)realloc(t->s, cap)) == NULL) return 0;
        t->s = s;
        t->cap = cap;
    }
    t->len = at = len;
    t->s[len] = '\0';
    for (q = node; q != PROFILE_ROOT; q = p->nodes[q].parent) { /* from the end */
        const char *f = p->names.items[p->nodes[q].name].text;
        size_t n = strlen(f);
        at -= n;
        memcpy(t->s + at, f, n);
        if (at) t->s[--at] = ';';
    }
    return 1;
}

/* ==== collecting ===================================================================== */
typedef struct profile_walk {
    const cli_trace *src;
    const walk_ctx *walk;
    profile_fns *fns;               /* optional */
    profile_paths *paths;           /* optional */
    size_t side;
    walk_map fid_names;             /* fid -> name id in paths (ids are this trace's) */
    uint32_t *stack;                /* the node of each depth in the thread (or subtree) */
    size_t cap;
    uint32_t base;                  /* the parent of the thread's outermost calls */
    int nomem;
} profile_walk;

/* The name id of fid in the paths; UINT32_MAX when out of memory. */
static uint32_t profile_fid_name(profile_walk *pw, uint64_t fid) {
    int is_new;
    uint64_t *v = walk_map_put(&pw->fid_names, fid, &is_new);
    if (!v) return UINT32_MAX;
    if (is_new) {
        char hex[24];
        const char *name = cli_trace_name(pw->src, fid, hex, sizeof hex);
        uint32_t id = profile_frame_id(&pw->paths->names, name);
        if (id == UINT32_MAX) {
            *v = UINT32_MAX; /* never read: the collect fails */
            return UINT32_MAX;
        }
        *v = id;
    }
    return (uint32_t)*v;
}

static void profile_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    profile_walk *pw = (profile_walk *)ctx;
    size_t d = walk_depth_in_subtree(pw->walk, ti, depth);
    uint32_t name, node;
    (void)ts;
    if (pw->nomem) return;
    if (d >= pw->cap) {
        size_t cap = pw->cap ? pw->cap * 2 : 64;
        uint32_t *s;
        while (cap <= d) cap *= 2;
        if ((s = (uint32_t *)realloc(pw->stack, cap * sizeof *s)) == NULL) {
            pw->nomem = 1;
            return;
        }
        pw->stack = s;
        pw->cap = cap;
    }
    if ((name = profile_fid_name(pw, fid)) == UINT32_MAX ||
        (node = profile_child(pw->paths, d ? pw->stack[d - 1] : pw->base, name)) == UINT32_MAX) {
        pw->nomem = 1;
        return;
    }
    pw->stack[d] = node;
}

static void profile_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns,
                          size_t depth, int how, int outermost) {
    profile_walk *pw = (profile_walk *)ctx;
    uint64_t dur = walk_frame_ns(f, end_ns), self = walk_frame_self_ns(f, end_ns);
    (void)how;
    if (pw->nomem) return;
    if (pw->fns) {
        profile_fn *fn = profile_fns_put(pw->fns, f->fid);
        if (!fn) {
            pw->nomem = 1;
            return;
        }
        fn->calls++;
        fn->sum_ns += dur;
        if (outermost) fn->total_ns += dur;
        fn->self_ns += self;
        if (dur < fn->min_ns) fn->min_ns = dur;
        if (dur > fn->max_ns) fn->max_ns = dur;
    }
    if (pw->paths) {
        profile_node *n = &pw->paths->nodes[pw->stack[walk_depth_in_subtree(pw->walk, ti, depth)]];
        n->calls[pw->side]++;
        n->total_ns[pw->side] += dur;
        n->self_ns[pw->side] += self;
    }
}

/* The frame thread i's paths hang under (mode NAME or TID); UINT32_MAX when out of
 * memory. */
static uint32_t profile_thread_node(profile_paths *p, const cli_trace *s, size_t i,
                                    profile_frame_mode mode) {
    const atf_session_thread *t = &s->reader.threads[i];
    char name[80], text[128];
    uint32_t id, node;
    cli_thread_name(t, name, sizeof name);
    if (mode == PROFILE_FRAME_TID)
        snprintf(text, sizeof text, "%s-%llu/%u", name, (cli_ull)cli_trace_pid(s),
                 cli_thread_tid(t));
    else
        snprintf(text, sizeof text, "%s", name);
    if ((id = profile_frame_id(&p->names, text)) == UINT32_MAX ||
        (node = profile_child(p, PROFILE_ROOT, id)) == UINT32_MAX)
        return UINT32_MAX;
    p->nodes[node].is_thread = 1;
    return node;
}

atf_result profile_collect(cli_trace *s, walk_ctx *w, profile_fns *fns, profile_paths *paths,
                           size_t side, profile_frame_mode mode, cli_progress *p) {
    profile_walk pw;
    atf_result rc = ATF_OK;
    size_t i;
    memset(&pw, 0, sizeof pw);
    pw.src = s;
    pw.walk = w;
    pw.fns = fns;
    pw.paths = paths;
    pw.side = side < PROFILE_SIDES ? side : PROFILE_SIDES - 1;
    if (!walk_init(w, s->reader.thread_count)) return ATF_E_NOMEM;
    w->by_name = cli_trace_by_name(s); /* template instances as one (--demangle short) */
    w->ctx = &pw;
    w->leave = profile_leave;
    if (paths) w->enter = profile_enter;
    for (i = 0; i < s->reader.thread_count && rc == ATF_OK && !pw.nomem; i++) {
        if (!cli_trace_selected(s, i)) continue;
        pw.base = PROFILE_ROOT;
        if (paths && mode != PROFILE_FRAME_NONE &&
            (pw.base = profile_thread_node(paths, s, i, mode)) == UINT32_MAX) {
            pw.nomem = 1;
            break;
        }
        rc = walk_run(w, s, &s->reader.threads[i].slot, p);
    }
    walk_map_free(&pw.fid_names);
    free(pw.stack);
    w->ctx = NULL;
    return rc == ATF_OK && pw.nomem ? ATF_E_NOMEM : rc;
}
