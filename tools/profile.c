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

/* ==== per function name ============================================================== */
/* The row of name id; NULL when out of memory. */
static profile_named *profile_named_row(profile_by_name *b, uint32_t name) {
    int is_new;
    uint64_t *pos;
    if (b->count == b->cap) { /* room first: a name mapped is always a row */
        size_t cap = b->cap ? b->cap * 2 : 64;
        profile_named *items = (profile_named *)realloc(b->items, cap * sizeof *items);
        if (!items) return NULL;
        b->items = items;
        b->cap = cap;
    }
    if ((pos = walk_map_put(&b->rows, name, &is_new)) == NULL) return NULL;
    if (is_new) {
        *pos = b->count;
        memset(&b->items[b->count], 0, sizeof b->items[b->count]);
        b->items[b->count++].name = name;
    }
    return &b->items[*pos];
}

atf_result profile_by_name_add(profile_by_name *b, profile_names *names, const profile_fns *f,
                               size_t side) {
    size_t i;
    if (side >= PROFILE_SIDES) side = PROFILE_SIDES - 1;
    for (i = 0; i < f->count; i++) {
        const profile_fn *fn = &f->fns[i];
        uint32_t name = profile_name_id(names, fn->name);
        profile_named *row = name == UINT32_MAX ? NULL : profile_named_row(b, name);
        if (!row) return ATF_E_NOMEM;
        row->calls[side] += fn->calls;
        row->total_ns[side] += fn->total_ns;
        row->self_ns[side] += fn->self_ns;
    }
    return ATF_OK;
}

void profile_by_name_free(profile_by_name *b) {
    walk_map_free(&b->rows);
    free(b->items);
    memset(b, 0, sizeof *b);
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

/* The root, added when p has no node yet: 1, else 0 (out of memory). */
static int profile_root(profile_paths *p) {
    if (p->count) return 1;
    if (!profile_paths_grow(p)) return 0;
    memset(&p->nodes[PROFILE_ROOT], 0, sizeof p->nodes[PROFILE_ROOT]);
    p->count = 1;
    return 1;
}

/* The node of name under parent, added when new (the root first); UINT32_MAX when out of
 * memory. */
static uint32_t profile_child(profile_paths *p, uint32_t parent, uint32_t name) {
    int is_new;
    uint64_t *pos;
    profile_node *n;
    /* room first: a key mapped is a node */
    if (!profile_root(p) || !profile_paths_grow(p)) return UINT32_MAX;
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

/* ==== pruning: the sketch ============================================================= */
atf_result profile_sketch_init(profile_sketch *k, unsigned bits) {
    memset(k, 0, sizeof *k);
    if (bits < 4 || bits > 28) bits = 20;
    k->mask = ((size_t)1 << bits) - 1;
    k->cells = (uint64_t *)calloc(PROFILE_SKETCH_ROWS * (k->mask + 1), sizeof *k->cells);
    return k->cells ? ATF_OK : ATF_E_NOMEM;
}

void profile_sketch_free(profile_sketch *k) {
    free(k->cells);
    memset(k, 0, sizeof *k);
}

/* Mixes 64 bits (MurmurHash3's finalizer). */
static uint64_t profile_mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The hash of a path: that of its parent's path and of its last frame's text. */
static uint64_t profile_path_hash(uint64_t parent, uint64_t frame) {
    return profile_mix(parent * 0x9E3779B97F4A7C15ull + frame);
}

/* The counter of path hash h in row r of k. */
static uint64_t *profile_sketch_cell(const profile_sketch *k, size_t r, uint64_t h) {
    uint64_t x = r ? profile_mix(h ^ 0x5bd1e9955bd1e995ull) : h;
    return &k->cells[r * (k->mask + 1) + ((size_t)x & k->mask)];
}

static uint64_t profile_sketch_get(const profile_sketch *k, uint64_t h) {
    uint64_t v = *profile_sketch_cell(k, 0, h), w;
    size_t r;
    for (r = 1; r < PROFILE_SKETCH_ROWS; r++)
        if ((w = *profile_sketch_cell(k, r, h)) < v) v = w;
    return v;
}

/* ==== collecting ===================================================================== */
#define PROFILE_PRUNED UINT32_MAX       /* a depth of the stack whose path has no node */

typedef struct profile_walk {
    const cli_trace *src;
    const walk_ctx *walk;
    profile_fns *fns;               /* optional */
    profile_paths *paths;           /* optional */
    profile_sketch *sketch;         /* optional: fill it (profile_sketch_collect) */
    size_t side;
    walk_map fid_names;             /* fid -> name id in paths (ids are this trace's) */
    walk_map fid_hashes;            /* fid -> the hash of its frame's text */
    uint32_t *stack;                /* the node of each depth in the thread (or subtree) */
    uint64_t *hashes;               /* the path hash of each depth (sketch, pruning) */
    size_t cap;
    uint32_t base;                  /* the parent of the thread's outermost calls */
    uint64_t base_hash;             /*   and its path hash */
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

/* The hash of fid's frame text (the same in every trace that names it so); 0 with nomem
 * set when out of memory. */
static uint64_t profile_fid_hash(profile_walk *pw, uint64_t fid) {
    int is_new;
    uint64_t *v = walk_map_put(&pw->fid_hashes, fid, &is_new);
    if (!v) {
        pw->nomem = 1;
        return 0;
    }
    if (is_new) {
        char hex[24];
        char *frame = profile_frame_text(cli_trace_name(pw->src, fid, hex, sizeof hex));
        if (!frame) {
            pw->nomem = 1;
            return 0;
        }
        *v = profile_hash(frame);
        free(frame);
    }
    return *v;
}

/* Room for depth d on the stacks: 1, else 0 with nomem set. */
static int profile_room(profile_walk *pw, size_t d) {
    size_t cap = pw->cap ? pw->cap * 2 : 64;
    uint32_t *s;
    uint64_t *h;
    if (d < pw->cap) return 1;
    while (cap <= d) cap *= 2;
    s = (uint32_t *)realloc(pw->stack, cap * sizeof *s);
    if (s) pw->stack = s;
    h = s ? (uint64_t *)realloc(pw->hashes, cap * sizeof *h) : NULL;
    if (!h) {
        pw->nomem = 1;
        return 0;
    }
    pw->hashes = h;
    pw->cap = cap;
    return 1;
}

static void profile_enter(void *ctx, size_t ti, uint64_t fid, uint64_t ts, size_t depth) {
    profile_walk *pw = (profile_walk *)ctx;
    size_t d = walk_depth_in_subtree(pw->walk, ti, depth);
    uint32_t name, node, parent;
    const profile_sketch *prune = pw->paths ? pw->paths->prune : NULL;
    (void)ts;
    if (pw->nomem || !profile_room(pw, d)) return;
    parent = d ? pw->stack[d - 1] : pw->base;
    if (pw->sketch || prune) {
        if (parent == PROFILE_PRUNED) { /* left out with its caller */
            pw->stack[d] = PROFILE_PRUNED;
            return;
        }
        pw->hashes[d] = profile_path_hash(d ? pw->hashes[d - 1] : pw->base_hash,
                                          profile_fid_hash(pw, fid));
        if (prune && profile_sketch_get(prune, pw->hashes[d]) < pw->paths->prune_ns) {
            pw->stack[d] = PROFILE_PRUNED;
            return;
        }
    }
    if (!pw->paths) {
        pw->stack[d] = 0; /* a path of the sketch */
        return;
    }
    if ((name = profile_fid_name(pw, fid)) == UINT32_MAX ||
        (node = profile_child(pw->paths, parent, name)) == UINT32_MAX) {
        pw->nomem = 1;
        return;
    }
    pw->stack[d] = node;
}

static void profile_leave(void *ctx, size_t ti, const walk_frame *f, uint64_t end_ns,
                          size_t depth, int how, int outermost) {
    profile_walk *pw = (profile_walk *)ctx;
    uint64_t dur = walk_frame_ns(f, end_ns), self = walk_frame_self_ns(f, end_ns);
    size_t d = walk_depth_in_subtree(pw->walk, ti, depth);
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
    if (pw->sketch) {
        size_t r;
        if (pw->stack[d] == PROFILE_PRUNED) return;
        for (r = 0; r < PROFILE_SKETCH_ROWS; r++)
            *profile_sketch_cell(pw->sketch, r, pw->hashes[d]) += dur;
        if (d == 0) pw->sketch->outer_ns[pw->side] += dur;
    }
    if (pw->paths) {
        profile_node *n;
        if (d == 0) { /* an outermost call: its thread's frame and the root count it */
            profile_node *root = &pw->paths->nodes[PROFILE_ROOT];
            root->calls[pw->side]++;
            root->total_ns[pw->side] += dur;
            if (pw->base != PROFILE_ROOT) {
                pw->paths->nodes[pw->base].calls[pw->side]++;
                pw->paths->nodes[pw->base].total_ns[pw->side] += dur;
            }
        }
        if (pw->stack[d] == PROFILE_PRUNED) return;
        n = &pw->paths->nodes[pw->stack[d]];
        n->calls[pw->side]++;
        n->total_ns[pw->side] += dur;
        n->self_ns[pw->side] += self;
    }
}

/* The text of the frame thread i's paths hang under (mode NAME or TID) into text. */
static void profile_thread_text(const cli_trace *s, size_t i, profile_frame_mode mode,
                                char *text, size_t cap) {
    const atf_session_thread *t = &s->reader.threads[i];
    char name[80];
    cli_thread_name(t, name, sizeof name);
    if (mode == PROFILE_FRAME_TID)
        snprintf(text, cap, "%s-%llu/%u", name, (cli_ull)cli_trace_pid(s), cli_thread_tid(t));
    else
        snprintf(text, cap, "%s", name);
}

/* The frame thread i's paths hang under (mode NAME or TID); UINT32_MAX when out of
 * memory. */
static uint32_t profile_thread_node(profile_paths *p, const cli_trace *s, size_t i,
                                    profile_frame_mode mode) {
    char text[128];
    uint32_t id, node;
    profile_thread_text(s, i, mode, text, sizeof text);
    if ((id = profile_frame_id(&p->names, text)) == UINT32_MAX ||
        (node = profile_child(p, PROFILE_ROOT, id)) == UINT32_MAX)
        return UINT32_MAX;
    p->nodes[node].is_thread = 1;
    return node;
}

/* The path hash of thread i's frame (0: none, mode NONE); nomem set when out of memory. */
static uint64_t profile_thread_hash(profile_walk *pw, const cli_trace *s, size_t i,
                                    profile_frame_mode mode) {
    char text[128], *frame;
    uint64_t h;
    if (mode == PROFILE_FRAME_NONE) return 0;
    profile_thread_text(s, i, mode, text, sizeof text);
    if ((frame = profile_frame_text(text)) == NULL) {
        pw->nomem = 1;
        return 0;
    }
    h = profile_path_hash(0, profile_hash(frame));
    free(frame);
    return h;
}

/* The walk of profile_collect and profile_sketch_collect. */
static atf_result profile_run(cli_trace *s, walk_ctx *w, profile_fns *fns, profile_paths *paths,
                              profile_sketch *sketch, size_t side, profile_frame_mode mode,
                              cli_progress *p) {
    profile_walk pw;
    atf_result rc = ATF_OK;
    size_t i;
    memset(&pw, 0, sizeof pw);
    pw.src = s;
    pw.walk = w;
    pw.fns = fns;
    pw.paths = paths;
    pw.sketch = sketch;
    pw.side = side < PROFILE_SIDES ? side : PROFILE_SIDES - 1;
    if (!walk_init(w, s->reader.thread_count)) return ATF_E_NOMEM;
    w->by_name = cli_trace_by_name(s); /* template instances as one (--demangle short) */
    w->ctx = &pw;
    w->leave = profile_leave;
    if (paths || sketch) w->enter = profile_enter;
    if (paths && !profile_root(paths)) pw.nomem = 1;
    for (i = 0; i < s->reader.thread_count && rc == ATF_OK && !pw.nomem; i++) {
        if (!cli_trace_selected(s, i)) continue;
        pw.base = PROFILE_ROOT;
        if (paths && mode != PROFILE_FRAME_NONE &&
            (pw.base = profile_thread_node(paths, s, i, mode)) == UINT32_MAX) {
            pw.nomem = 1;
            break;
        }
        pw.base_hash = profile_thread_hash(&pw, s, i, mode);
        if (pw.nomem) break;
        rc = walk_run(w, s, &s->reader.threads[i].slot, p);
    }
    walk_map_free(&pw.fid_names);
    walk_map_free(&pw.fid_hashes);
    free(pw.stack);
    free(pw.hashes);
    w->ctx = NULL;
    return rc == ATF_OK && pw.nomem ? ATF_E_NOMEM : rc;
}

atf_result profile_collect(cli_trace *s, walk_ctx *w, profile_fns *fns, profile_paths *paths,
                           size_t side, profile_frame_mode mode, cli_progress *p) {
    return profile_run(s, w, fns, paths, NULL, side, mode, p);
}

atf_result profile_sketch_collect(cli_trace *s, walk_ctx *w, profile_fns *fns,
                                  profile_sketch *k, size_t side, profile_frame_mode mode,
                                  cli_progress *p) {
    return profile_run(s, w, fns, NULL, k, side, mode, p);
}
