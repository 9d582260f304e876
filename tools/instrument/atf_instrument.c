/* atf_instrument.c - an auto-tracer: every function entry and exit of every thread of a
 * program compiled with -finstrument-functions, recorded into an ATF session.
 * SPDX-License-Identifier: MIT
 *
 *   cc -O2 -g -finstrument-functions -c prog.c        your code: instrumented
 *   cc -O2 -I<dir of atf.h> -c atf_instrument.c       this file: never instrumented
 *   cc -o prog prog.o atf_instrument.o -ldl -lpthread
 *   ATF_TRACE_DIR=traces ./prog                       -> traces/session_<time>/pid_<pid>/
 * or, without relinking, as a preloaded shared library (what `atf record` does):
 *   cc -O2 -fPIC -shared -I<dir of atf.h> -o libatf_instrument.so atf_instrument.c -ldl -lpthread
 *   cc -O2 -g -finstrument-functions -o prog prog.c   your code: instrumented, no tracer
 *   LD_PRELOAD=./libatf_instrument.so ./prog
 *
 * How it works
 *   - A constructor reads the settings and lists the loaded modules with dl_iterate_phdr
 *     (module 0 is the executable, the others follow in load order; modules loaded later
 *     are added when one of their functions is first seen). The process's first event
 *     opens the session (its start time and anchors are taken then), so a process the
 *     preload reaches that runs no instrumented function (a shell, sed) makes no
 *     directory. A destructor names the functions and closes the session, which
 *     finalizes the files and the manifest; so do _exit() and _Exit(), which this file
 *     interposes: a process ending so (a forked child, mostly) runs no destructor. Not
 *     from a signal handler (what the handler interrupted may hold a lock that closing
 *     takes), nor in a vfork() child (it runs on its parent's memory); and no signal
 *     handler of its own: a process killed by a signal leaves its trace as a crash does
 *     (`atf record` completes it; the manifest already locates every function called).
 *   - A thread attaches on its first event and detaches when it exits; its pthread name
 *     (pthread_getname_np) goes to the manifest then and again at its exit (the main
 *     thread's at the destructor), the command line (/proc/self/cmdline) at the start,
 *     and a second "wall_clock_ns" anchor at exit.
 *   - The first call of a function anywhere (the slow path) registers its module with
 *     the session when it is new to it (path, range, build id from its PT_NOTE) and
 *     where the function lives (address minus load bias: the ELF symbol value). The
 *     drain rewrites the manifest within 100 ms, so a process killed with SIGKILL leaves
 *     a manifest (`atf recover` completes it) that locates every function it had called.
 *   - function_id = (module_id << 32) | symbol_index, where symbol indices are handed out
 *     per module in first-call order. The hot path finds the id in a per-thread
 *     direct-mapped cache, then in a global hash table read without locks; only the very
 *     first call of a function takes a lock.
 *   - A full ring (the drain thread fell behind, e.g. with no core of its own) follows
 *     ATF_TRACE_OVERFLOW, the session's overflow policy. block (the default): the thread
 *     writes its own ring to its files and goes on, so nothing is lost (unless a file
 *     cannot be written), at the price of a pause in that thread. drop: the hooks never
 *     wait; the events that do not fit are dropped and counted, and each gap is recorded
 *     in thread_<slot>/gaps.atf. The exit summary says how many were recorded and lost.
 *   - Time stamps are atf_ticks() (rdtsc, cntvct_el0): the session is opened with
 *     stamp_clock ATF_STAMP_TICKS, and its drain converts them to the trace clock
 *     (CLOCK_BOOTTIME ns) before writing, so the files are as with atf_now_ns() stamps.
 *   - Names are resolved once, at exit, never on the hot path: the module's ELF symbol
 *     table (.symtab, which has static functions too; else .dynsym), then dladdr(), else
 *     "module+0xoffset". A symbol version is dropped ("f@@V_2" is f, for the filters
 *     too); of several symbols at one address, the tie rule of tools/elf_symbols.h
 *     chooses (the atf command names functions offline through the same file).
 *   - longjmp (and siglongjmp) leave calls without their exit hooks. Each thread keeps a
 *     shadow stack of its open calls (inst_frame): where each one's frame is (the CFA of
 *     the function body that called the entry hook: the hook's own plus a frame size the
 *     unwinder tells once per call site, which also tells inlined copies apart), its id
 *     and call site. A call where an open one was or above, on the thread's stack, or a
 *     return of a call that is not on top, shows that the calls above were left: they
 *     are closed then with exception events (readers pair them like returns), so the
 *     call tree stays the program's. A thread that switches stacks with calls open on
 *     both (coroutines) is not repaired.
 *   - A frame a C++ exception leaves ends with an exception event: this file interposes
 *     the unwinder's raise and the C++ runtime's catch, and between the two, the exit
 *     hooks of the frames the exception passes (g++ runs them as cleanups) record
 *     exception events; frames left without exit hooks are closed at the catch, as
 *     after a longjmp (see "C++ exceptions" below).
 *   - Guards: a per-thread busy flag stops recursion (hooks reached from inside a hook,
 *     or from a signal handler that interrupted one); events before the constructor
 *     and after the destructor are ignored; at exit the closer clears
 *     every thread's writer pointer and closes the session only once no other thread is
 *     inside a hook (membarrier), so threads that are still running while the process
 *     exits cannot touch freed memory, and the hot path reads no global state.
 *   - fork(): the child gives up the session it inherited (atf_session_abandon_after_fork:
 *     the parent's files and drain are left alone) and its first event opens a session
 *     of its own in the same session directory, pid_<child>/; so do its own children
 *     (unless ATF_TRACE_FOLLOW=0). A program a child execs is a process of its own,
 *     traced when the preload reaches it (LD_PRELOAD is in its environment).
 *   - Filters are decided once per function, at its first call (the slow path, where its
 *     name is read from the module's symbol table); a function left out gets the id flag
 *     INST_ID_SKIP in the tables, so each of its calls costs a cache hit and one test.
 *     The depth limit counts, per thread, the open calls of functions that pass them.
 *
 * Environment
 *   ATF_TRACE_DIR          session root (default ./traces)
 *   ATF_TRACE_SESSION      session directory name under the root (default
 *                          session_<date>_<time>); an existing one is joined
 *   ATF_TRACE=0            record nothing
 *   ATF_TRACE_QUIET=1      no summary line on stderr at exit (threads, functions, events
 *                          recorded and lost, gaps when any)
 *   ATF_TRACE_RING_EVENTS  index ring slots per thread (default 131072: 4 MiB of
 *                          address space per thread, touched only as it fills; a thread
 *                          that starts while as many threads as there are processors
 *                          record gets 65536, 2 MiB, unless this is set)
 *   ATF_TRACE_OVERFLOW     what a thread does when its ring is full: block (default: it
 *                          writes its ring out itself, nothing is lost) or drop (it never
 *                          waits; events are dropped, counted and recorded as gaps);
 *                          another value: a message on stderr, and block
 *   ATF_TRACE_FILTER       record only functions whose name matches one of these
 *                          comma-separated glob patterns (fnmatch: * ? [...]); a C++
 *                          function's name is its symbol, its demangled name or its
 *                          short name (tools/demangle.h: "work::*", "work::eval"), and a
 *                          comma inside brackets ("f<int, long>") does not separate
 *   ATF_TRACE_NOTRACE      never record functions matching these (after the filter)
 *   ATF_TRACE_TRIGGER_ON, ATF_TRACE_TRIGGER_OFF  patterns alike: recording starts off and
 *                          comes on at the entry of a match, goes off after its return
 *   ATF_TRACE_DEPTH        record only calls at most this deep (per thread, counting
 *                          the functions the filters keep); default: no limit
 *   ATF_TRACE_FOLLOW=0     record nothing in the children fork() makes (default 1: each
 *                          child records into a pid_<child>/ of its own)
 *   ATF_TRACE_MAX_BYTES    stop recording before the process's files take more event
 *                          bytes than this; default: no bound
 *   ATF_TRACE_MAX_DURATION_NS  record only the events of this many ns after the first
 *   ATF_TRACE_MIN_DURATION_NS  record only calls at least this long, and their callers
 *   ATF_TRACE_DISK_RESERVE stop recording before the file system's free space falls
 *                          under this many bytes; 0: never; default max(1 GiB, 5 %)
 *                          (a stop leaves the program running and each thread's files
 *                          ending with a gap that says why; plain numbers: `atf record`
 *                          takes --max-size 512M, --duration 10s, --disk-reserve 2G)
 *   ATF_TRACE_KEEP_LAST_BYTES  flight recorder: hold the events in memory, at most this
 *                          many bytes of them, and write the most recent ones at exit
 *                          and on the snapshot signal
 *   ATF_TRACE_KEEP_LAST_NS     flight recorder: keep each thread's last this many ns
 *   ATF_TRACE_SNAPSHOT_SIGNAL  the signal that writes what the flight recorder holds
 *                          (default USR2 when it runs; 0: none)
 *
 * Linux (ELF, glibc or musl), x86-64 and arm64, gcc and clang. Every function here is
 * no_instrument_function, and so is everything of atf.h a hook reaches.
 */
#define ATF_STATIC              /* a private copy: no clash with a program that has atf.h */
#define ATF_IMPLEMENTATION
/* gcc 12 -O2 inlines atf_error_format() into the manifest writer under ATF_STATIC and
 * warns that its 96-byte buffer may truncate an error text (it may: the text is cut). */
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
#include "atf.h"
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif

/* the tree's one demangler (tools/demangle.c), private here: the filters match names */
#define DEMANGLE_STATIC
#include "../demangle.c"
#include "../signal_names.h" /* the signal names atf record checks too */
#include "../elf_symbols.h"  /* the tree's one reader of ELF symbols, its tie rule too */

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#define NOI __attribute__((no_instrument_function))
#define COLD __attribute__((noinline, cold))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The per-thread pointers are read on every event: initial-exec TLS is one load at a
 * fixed offset from the thread pointer, also when this file is linked into a shared
 * library (where the default model calls __tls_get_addr). */
#define INST_TLS __thread __attribute__((tls_model("initial-exec")))

/* The hooks are the only symbols this file exports: visible even under
 * -fvisibility=hidden, so that a shared library built from it (LD_PRELOAD) interposes
 * them for the whole program. */
#define INST_EXPORT __attribute__((visibility("default")))
INST_EXPORT void __cyg_profile_func_enter(void *fn, void *site) NOI;
INST_EXPORT void __cyg_profile_func_exit(void *fn, void *site) NOI;

/* ---- state ------------------------------------------------------------------------- */
/* INST_PENDING: set up, no session yet; the first event opens one (pid_<pid>/ under
 * inst_root, or, in a forked child, next to the parent's pid_<parent>/) */
enum { INST_IDLE = 0, INST_RUNNING = 1, INST_STOPPING = 2, INST_OFF = 3, INST_PENDING = 4 };

#define INST_CACHE 512                    /* per-thread direct-mapped cache entries */
#define INST_ID_SKIP (1ull << 63)         /* filtered out: never recorded (module ids stay
                                             far below 2^31) */
#define INST_ID_UNRESOLVED 0xFFFFFFFF00000000ull /* only when memory ran out: has the skip
                                                    flag, so such calls are not recorded */
#define INST_ID_TRIGGER_ON (1ull << 62)   /* recorded: its entry switches recording on */
#define INST_ID_TRIGGER_OFF (1ull << 61)  /*   its return switches recording off */
#define INST_ID_TRIGGERS (INST_ID_TRIGGER_ON | INST_ID_TRIGGER_OFF)
#define INST_EVENT_ID(id) ((id) & ~INST_ID_TRIGGERS) /* the id its events carry */

/* An entry of the id tables. By function (the exit hook's): key = the function's
 * address. By call site (the entry hook's): key = the return address of that call of the
 * entry hook, one per instrumented function body and one per copy the compiler inlined
 * elsewhere; with the offsets of the call's place on the stack (see inst_frame). */
typedef struct inst_entry {
    uintptr_t key;
    uint64_t id;
    uint32_t store, probe;       /* by call site: INST_POS + store is the call's place,
                                    INST_POS + probe the highest place it may close at
                                    once: the place for a call of the function's body,
                                    place - 1 for an inlined copy (inst_site_offsets) */
} inst_entry;

/* The shadow stack: for each open call (of a function the filters keep) up to
 * INST_SHADOW deep, its place on the stack, its id and its call site (the entry hook's
 * return address). The place is the canonical frame address (CFA: the caller's stack
 * pointer at the call) of the function body the entry hook is called from, plus 1: the
 * hook's own CFA (INST_POS) plus that body's frame size there, which the unwinder tells
 * once per call site (inst_site_offsets). The stack grows down, so a call made while a
 * frame is open sits below it, except that copies of functions the compiler inlined into
 * a body (itself too: recursive inlining) share its frame and so its place. Hence, at a
 * new call: open calls below its place were left without their exit hooks (longjmp);
 * at its place, one from the same call site was left (a call site is open at most once
 * per frame), and so were all there when the new call enters a function body and none
 * there is of the same function (else it is an inlined copy inside that one). The entry
 * hook closes such calls, and everything above them, with exception events (readers pair
 * them like returns); so does the exit hook of a call that is not on top (what is above
 * it was left). Entry 0 is a sentinel above every place. */
#define INST_SHADOW 256
typedef struct inst_frame { uintptr_t pos; uint64_t id; uintptr_t site; } inst_frame;
/* A C++ exception propagating in a thread (see "C++ exceptions" below): the exception
 * object the unwinder raised (what the catch hands to __cxa_begin_catch) and its floor:
 * an exit hook at a depth at most the floor is that of a frame the exception leaves
 * (an exception event), and lowers the floor below it; a deeper one is of a call made
 * while it passes (a destructor), which returns. Nested ones (thrown and caught inside
 * such a destructor) stack up, innermost on top, at most INST_RAISES. */
#define INST_RAISES 16
typedef struct inst_raise { const void *exc; long floor; } inst_raise;
/* The entry hook's CFA: the stack pointer of the function that called it, at the call.
 * clang on arm64 gives its frame pointer, 16 bytes lower (the frame record on top). */
#if defined(__clang__) && defined(__aarch64__)
#  define INST_POS() ((uintptr_t)__builtin_dwarf_cfa() + 16)
#else
#  define INST_POS() ((uintptr_t)__builtin_dwarf_cfa())
#endif
/* The offsets of a call site the unwinder cannot place (no unwind tables): a place above
 * every call the body makes (their CFAs are at most INST_POS) and below its caller, and
 * a probe that closes nothing at that place (it may be an inlined copy). */
#define INST_SITE_UNKNOWN_STORE 2u
#define INST_SITE_UNKNOWN_PROBE 1u

/* One per thread that produced an event. Records are never freed (the closer reads busy
 * flags without a lock); a record whose thread exited is reused by a later thread. */
typedef struct inst_thread {
    int busy;                    /* 1 while this thread runs a hook; read by the closer */
    atf_producer *w;               /* NULL: not traced (out of slots, detached, or the
                                    session is closing: the closer clears it) */
    long depth;                  /* open calls of functions that pass the filters (below
                                    0 in a forked child returning from the parent's) */
    long max_depth;              /* record only calls with depth <= max_depth */
    struct inst_thread *next_all, *next_free;
    uintptr_t stack_lo;          /* the thread's own stack: [stack_lo, stack_lo + */
    size_t stack_size;           /*   stack_size), 0 when unknown (no longjmp repair) */
    int switched;                /* it switches stacks: no longjmp repair
                                    (inst_unwind_enter) */
    unsigned seen_switch;        /* the inst_switch value it acted on last */
    int off;                     /* it records nothing now (recording switched off) */
    uint64_t skipped;            /*   the events it left out since, and the tick stamp */
    uint64_t skip_first;         /*   of the first of them */
    uint64_t min_ticks;          /* ATF_TRACE_MIN_DURATION_NS in ticks, 0: every call */
    int exit_slow;               /* the exit hook takes its slow path: min_ticks set, or
                                    a C++ exception propagating (raises) */
    int raises;                  /* C++ exceptions propagating: raise[0 .. raises) */
    inst_raise raise[INST_RAISES];
    long emitted;                /*   the open calls whose call events are in the ring (the
                                    outermost ones: a call kept keeps its callers) */
    uint64_t call_ts[INST_SHADOW + 1]; /*   [k]: the tick stamp of the open call at depth k */
    inst_entry cache[INST_CACHE];  /* by function, for the exit hook */
    inst_entry sites[INST_CACHE];  /* by call site, for the entry hook */
    inst_frame shadow[INST_SHADOW + 1]; /* [k]: the open call at depth k (see above) */
} inst_thread;

/* The global address -> id table: open addressing, readers without locks. A full table
 * is replaced by one twice the size; the old one stays allocated (a reader may be in it). */
typedef struct inst_table {
    unsigned bits;
    size_t used;
    struct inst_table *older;
    inst_entry e[];
} inst_table;

typedef struct inst_module {
    uintptr_t lo, hi, bias;      /* mapped range, load bias (address - ELF vaddr) */
    char *path;                  /* file of the module ("" when unknown) */
    char build_id[65];           /* NT_GNU_BUILD_ID in hex, "" when it has none */
    int announced;               /* registered with the session (atf_session_add_module) */
    uintptr_t *fns;              /* function addresses by symbol_index */
    size_t count, cap;
} inst_module;

/* What the first call of a function tells the session, copied under inst_lock and told
 * after it is released: the session's calls take the session lock, which a thread inside
 * the library holds while it may run an instrumented function (an allocator built with
 * the hooks): taking it under inst_lock could deadlock against such a thread. */
typedef struct inst_news {
    int module;                  /* the module is new to the session: */
    uint32_t module_id;          /*   its id, file, range and build id */
    const char *path;            /*   (module paths live until exit) */
    uintptr_t lo, hi;
    char build_id[65];
    int function;                /* a function: its id and offset in the module */
    uint64_t id, offset;
} inst_news;

static int inst_state;
static atf_session *inst_session;
static atf_session_config inst_cfg;             /* what every process of the tree opens with */
static char inst_root[1024];                    /* the session root (ATF_TRACE_DIR) */
static char inst_name[256];                     /* the session directory name, "" = new */
static char inst_parent_dir[1024];              /* forked: <root>/<session>/pid_<parent> */
static pid_t inst_pid;                          /* the process this memory is (set at start
                                                   and in a forked child; not in a vfork
                                                   child, which shares the parent's) */
static int inst_follow = 1;                     /* ATF_TRACE_FOLLOW: trace forked children */
static pthread_mutex_t inst_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t inst_key;
static inst_thread *inst_threads, *inst_free;   /* under inst_lock */
static inst_table *inst_fns;                    /* by function; published with release
                                                   stores */
static inst_table *inst_sites;                  /* by call site; the same way */
static inst_module *inst_modules;               /* under inst_lock; index = module_id */
static size_t inst_module_count, inst_module_cap;
static size_t inst_unknown = (size_t)-1;        /* module for addresses in no module */
static int inst_barrier;                        /* membarrier command to use, 0 = none */
static long inst_max_depth = LONG_MAX;          /* ATF_TRACE_DEPTH */
static int inst_filtering;                      /* ATF_TRACE_FILTER or _NOTRACE given */
static inst_thread inst_dead;                   /* for threads that exited: never traced */
/* Recording on or off (ATF_TRACE_START_PAUSED, the toggle signal): a counter bumped at each
 * switch, odd while off. A thread compares it with the value it acted on last, one load
 * per event it would record; only a change takes the slow path (inst_switch_to). */
static unsigned inst_switch;
static uint64_t inst_min_ticks;                 /* ATF_TRACE_MIN_DURATION_NS in ticks */

static INST_TLS inst_thread *inst_tls;
static INST_TLS int inst_tls_guard;             /* in the attach path (no record yet) */

NOI static int inst_load_state(void) { return __atomic_load_n(&inst_state, __ATOMIC_RELAXED); }
NOI static void inst_set_state(int s) { __atomic_store_n(&inst_state, s, __ATOMIC_RELEASE); }

/* Entering and leaving a hook. The busy flag has two readers: this thread (a hook
 * reached from inside a hook, i.e. from a signal handler that interrupted one: the push
 * is not reentrant) and the closer, on another thread, which waits until no hook is
 * inside the session it is about to free. For this thread alone a plain store would do:
 * a signal handler runs on the same thread, after the store in program order, and the
 * compiler fence keeps the compiler from sinking the store below the pushes. The closer
 * is why it is an atomic: a relaxed store to set it (its ordering against the load of
 * t->w comes from the closer's membarrier, so the hot path needs no fence instruction)
 * and a release store to clear it (nothing the hook read or wrote may drift after the
 * clear, once the closer can free it; on x86-64 both are plain stores). */
NOI static inline void inst_busy_set(inst_thread *t) {
    __atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
NOI static inline void inst_busy_clear(inst_thread *t) {
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}
/* The thread's writer, NULL once the closer cleared it. */
NOI static inline atf_producer *inst_writer(inst_thread *t) {
    return __atomic_load_n(&t->w, __ATOMIC_RELAXED);
}

/* ---- modules ----------------------------------------------------------------------- */
typedef struct inst_scan { inst_module *m; size_t n, cap; } inst_scan;

NOI static char *inst_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = (char *)malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* The NT_GNU_BUILD_ID note of a loaded module, from its PT_NOTE segments (in memory: no
 * file is read), as lowercase hex into out[65]; "" when it has none. */
NOI static void inst_build_id(const struct dl_phdr_info *info, char *out) {
    static const char hex[] = "0123456789abcdef";
    size_t i, k;
    out[0] = '\0';
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        size_t left = ph->p_memsz, align = ph->p_align == 8 ? 8 : 4;
        if (ph->p_type != PT_NOTE) continue;
        while (left >= sizeof(ElfW(Nhdr))) {
            ElfW(Nhdr) n;
            const size_t name = sizeof n; /* name, then desc, each padded to `align` */
            size_t desc, next;
            memcpy(&n, p, sizeof n);
            if (n.n_namesz > left || n.n_descsz > left) break; /* no overflow below */
            desc = name + ((n.n_namesz + align - 1) & ~(align - 1));
            next = desc + ((n.n_descsz + align - 1) & ~(align - 1));
            if (desc + n.n_descsz > left) break; /* the last one may end unpadded */
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && memcmp(p + name, "GNU", 4) == 0 &&
                n.n_descsz >= 1 && n.n_descsz <= 32) {
                for (k = 0; k < n.n_descsz; k++) {
                    out[2 * k] = hex[p[desc + k] >> 4];
                    out[2 * k + 1] = hex[p[desc + k] & 15];
                }
                out[2 * k] = '\0';
                return;
            }
            if (next >= left) break;
            p += next;
            left -= next;
        }
    }
}

NOI static int inst_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg) {
    inst_scan *s = (inst_scan *)arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    char exe[4096];
    inst_module *m;
    size_t i;
    (void)size;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uintptr_t a;
        if (p->p_type != PT_LOAD) continue;
        a = (uintptr_t)(info->dlpi_addr + p->p_vaddr);
        if (a < lo) lo = a;
        if (a + p->p_memsz > hi) hi = (uintptr_t)(a + p->p_memsz);
    }
    if (hi <= lo) return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        inst_module *g = (inst_module *)realloc(s->m, cap * sizeof *g);
        if (!g) return 1;
        s->m = g;
        s->cap = cap;
    }
    if (s->n == 0 && name[0] == '\0') { /* the first entry is the executable */
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[k > 0 ? (size_t)k : 0] = '\0';
        name = exe;
    }
    m = &s->m[s->n];
    memset(m, 0, sizeof *m);
    m->lo = lo;
    m->hi = hi;
    m->bias = (uintptr_t)info->dlpi_addr;
    inst_build_id(info, m->build_id);
    m->path = inst_strdup(name);
    if (!m->path) return 1;
    s->n++;
    return 0;
}

/* Lists the loaded modules and adds those not known yet, numbered in order. Takes the
 * loader's lock first and inst_lock after, never the other way round (a thread inside
 * dlopen runs constructors that may call hooks). */
NOI static void inst_rescan(void) {
    inst_scan s;
    size_t i, j;
    memset(&s, 0, sizeof s);
    dl_iterate_phdr(inst_phdr_cb, &s);
    pthread_mutex_lock(&inst_lock);
    for (i = 0; i < s.n; i++) {
        for (j = 0; j < inst_module_count; j++)
            if (inst_modules[j].lo == s.m[i].lo && inst_modules[j].hi == s.m[i].hi &&
                strcmp(inst_modules[j].path, s.m[i].path) == 0)
                break;
        if (j < inst_module_count) continue;
        if (inst_module_count == inst_module_cap) {
            size_t cap = inst_module_cap ? inst_module_cap * 2 : 16;
            inst_module *g = (inst_module *)realloc(inst_modules, cap * sizeof *g);
            if (!g) break;
            inst_modules = g;
            inst_module_cap = cap;
        }
        inst_modules[inst_module_count++] = s.m[i];
        s.m[i].path = NULL;
    }
    pthread_mutex_unlock(&inst_lock);
    for (i = 0; i < s.n; i++) free(s.m[i].path);
    free(s.m);
}

/* Under inst_lock: the module holding address a, or (size_t)-1. */
NOI static size_t inst_module_of(uintptr_t a) {
    size_t i;
    for (i = 0; i < inst_module_count; i++)
        if (a >= inst_modules[i].lo && a < inst_modules[i].hi) return i;
    return (size_t)-1;
}

/* Under inst_lock: the pseudo module for addresses outside every module. */
NOI static size_t inst_unknown_module(void) {
    if (inst_unknown != (size_t)-1) return inst_unknown;
    if (inst_module_count == inst_module_cap) {
        size_t cap = inst_module_cap ? inst_module_cap * 2 : 16;
        inst_module *g = (inst_module *)realloc(inst_modules, cap * sizeof *g);
        if (!g) return (size_t)-1;
        inst_modules = g;
        inst_module_cap = cap;
    }
    memset(&inst_modules[inst_module_count], 0, sizeof *inst_modules);
    inst_modules[inst_module_count].path = inst_strdup("[unknown]");
    if (!inst_modules[inst_module_count].path) return (size_t)-1;
    inst_unknown = inst_module_count++;
    return inst_unknown;
}

/* ---- address -> function id -------------------------------------------------------- */
NOI static size_t inst_hash(uintptr_t a, unsigned bits) {
    return (size_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> (64u - bits));
}

/* The entry whose key is a into *out. */
NOI static int inst_table_find(inst_table *t, uintptr_t a, inst_entry *out) {
    size_t mask, i;
    if (!t) return 0;
    mask = ((size_t)1 << t->bits) - 1;
    for (i = inst_hash(a, t->bits);; i = (i + 1) & mask) {
        uintptr_t k = __atomic_load_n(&t->e[i].key, __ATOMIC_ACQUIRE);
        if (k == a) {
            *out = t->e[i];
            return 1;
        }
        if (!k) return 0;
    }
}

/* Under inst_lock. The entry is in place before the release store of its key makes it
 * visible to readers. */
NOI static void inst_table_put(inst_table *t, const inst_entry *e) {
    size_t mask = ((size_t)1 << t->bits) - 1, i = inst_hash(e->key, t->bits);
    while (t->e[i].key) i = (i + 1) & mask;
    t->e[i].id = e->id;
    t->e[i].store = e->store;
    t->e[i].probe = e->probe;
    __atomic_store_n(&t->e[i].key, e->key, __ATOMIC_RELEASE);
    t->used++;
}

/* Under inst_lock: adds e to the table *root, replaced by one twice the size when full. */
NOI static int inst_table_add(inst_table **root, const inst_entry *e) {
    inst_table *t = *root;
    if (!t || (t->used + 1) * 2 > ((size_t)1 << t->bits)) {
        unsigned bits = t ? t->bits + 1 : 12;
        inst_table *n = (inst_table *)calloc(1, sizeof *n + (sizeof(inst_entry) << bits));
        size_t i;
        if (!n) return 0;
        n->bits = bits;
        n->older = t;
        if (t)
            for (i = 0; i < ((size_t)1 << t->bits); i++)
                if (t->e[i].key) inst_table_put(n, &t->e[i]);
        __atomic_store_n(root, n, __ATOMIC_RELEASE);
        t = n;
    }
    inst_table_put(t, e);
    return 1;
}

NOI static int inst_fns_add(uintptr_t a, uint64_t id) {
    inst_entry e;
    memset(&e, 0, sizeof e);
    e.key = a;
    e.id = id;
    return inst_table_add(&inst_fns, &e);
}

NOI static uint64_t inst_filter_flags(size_t mi, uintptr_t a);

/* Under inst_lock: module mi, when the session has not heard of it yet. */
NOI static void inst_news_module(size_t mi, inst_news *n) {
    inst_module *m = &inst_modules[mi];
    if (m->announced) return;
    m->announced = 1;
    n->module = 1;
    n->module_id = (uint32_t)mi;
    n->path = m->path;
    n->lo = m->lo;
    n->hi = m->hi;
    memcpy(n->build_id, m->build_id, sizeof n->build_id);
}

/* Under inst_lock: function `id` at address a of module mi (and the module, when new). */
NOI static void inst_news_take(size_t mi, uintptr_t a, uint64_t id, inst_news *n) {
    inst_module *m = &inst_modules[mi];
    inst_news_module(mi, n);
    n->function = 1;
    n->id = id;
    n->offset = (uint64_t)(a - m->bias); /* the ELF symbol value space */
}

/* Tells the session what inst_news_take copied: the manifest then lists the module and
 * where the function lives while recording (names come at exit). Not under inst_lock. */
NOI static void inst_announce(const inst_news *n) {
    if (n->module &&
        atf_session_add_module(inst_session, n->module_id, n->path, n->lo, n->hi - n->lo) == ATF_OK &&
        n->build_id[0])
        atf_session_set_module_build_id(inst_session, n->module_id, n->build_id);
    if (n->function)
        atf_session_add_function(inst_session, n->id, (uint32_t)(n->id >> 32), n->offset);
}

/* Module mi, when the session has not heard of it yet. Only where no hook can run
 * meanwhile (a forked child's only thread, exit). */
NOI static void inst_announce_module(size_t mi) {
    inst_news n;
    memset(&n, 0, sizeof n);
    inst_news_module(mi, &n);
    inst_announce(&n);
}

/* The first call of a function anywhere: give it the next index of its module, or, when
 * the filters leave it out, INST_ID_SKIP (decided once, here: its name is resolved on
 * this slow path only). *news receives what the session is to learn of it. */
COLD NOI static uint64_t inst_assign(uintptr_t a, inst_news *news) {
    inst_entry found;
    uint64_t id = INST_ID_UNRESOLVED, flags;
    int scanned = 0;
    pthread_mutex_lock(&inst_lock);
    for (;;) {
        size_t mi;
        inst_module *m;
        if (inst_table_find(inst_fns, a, &found)) {
            id = found.id;
            break;
        }
        mi = inst_module_of(a);
        if (mi == (size_t)-1 && !scanned) { /* loaded after the last scan? */
            pthread_mutex_unlock(&inst_lock);
            inst_rescan();
            scanned = 1;
            pthread_mutex_lock(&inst_lock);
            continue;
        }
        if (mi == (size_t)-1) mi = inst_unknown_module();
        if (mi == (size_t)-1) break;
        flags = inst_filtering ? inst_filter_flags(mi, a) : 0;
        if (flags & INST_ID_SKIP) {
            id = INST_ID_SKIP;
            inst_fns_add(a, id);
            break;
        }
        m = &inst_modules[mi];
        if (m->count == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 256;
            uintptr_t *g = (uintptr_t *)realloc(m->fns, cap * sizeof *g);
            if (!g) break;
            m->fns = g;
            m->cap = cap;
        }
        id = ((uint64_t)mi << 32) | (uint64_t)m->count;
        m->fns[m->count++] = a;
        inst_fns_add(a, id | flags); /* on failure the next lookup assigns again: harmless */
        inst_news_take(mi, a, id, news);
        id |= flags;
        break;
    }
    pthread_mutex_unlock(&inst_lock);
    return id;
}

/* The id of function a from the global table, else assigned (its first call anywhere). */
COLD NOI static uint64_t inst_id_of(uintptr_t a) {
    inst_entry found;
    inst_news news;
    uint64_t id;
    if (inst_table_find(__atomic_load_n(&inst_fns, __ATOMIC_ACQUIRE), a, &found)) return found.id;
    memset(&news, 0, sizeof news);
    id = inst_assign(a, &news);
    inst_announce(&news);
    return id;
}

/* A miss of the per-thread cache by function (the exit hook's). */
COLD NOI static inst_entry *inst_id_miss(inst_entry *c, uintptr_t a) {
    uint64_t id = inst_id_of(a);
    c->key = a;
    c->id = id;
    return c;
}

NOI static inline uint64_t inst_id(inst_thread *t, uintptr_t a) {
    inst_entry *c = &t->cache[((a >> 4) ^ (a >> 13)) & (INST_CACHE - 1)];
    if (LIKELY(c->key == a)) return c->id;
    return inst_id_miss(c, a)->id;
}

/* Where a call site of the entry hook places its calls (inst_frame): the unwinder walks
 * from here to the frame that called the hook (its instruction pointer is `ret`), whose
 * function (its unwind region) is either the function called, fn (its body, or a copy
 * of fn inlined into itself: inst_unwind_enter finds those out), or one that inlined a
 * copy of fn; the next frame's CFA is that frame's own. store: that CFA + 1 - pos;
 * probe: the same, less 1 for an inlined copy. INST_SITE_UNKNOWN_* when the unwinder
 * cannot tell. Not under inst_lock: the unwinder takes the loader's lock. */
typedef struct inst_site_walk { uintptr_t ret, start, cfa; int found, frames; } inst_site_walk;

NOI static _Unwind_Reason_Code inst_site_step(struct _Unwind_Context *ctx, void *arg) {
    inst_site_walk *wk = (inst_site_walk *)arg;
    if (wk->found) { /* the caller of the hook's caller: its stack pointer at the call */
        wk->cfa = (uintptr_t)_Unwind_GetCFA(ctx);
        return _URC_END_OF_STACK;
    }
    if ((uintptr_t)_Unwind_GetIP(ctx) == wk->ret) {
        wk->found = 1;
        wk->start = (uintptr_t)_Unwind_GetRegionStart(ctx);
    }
    return ++wk->frames < 16 ? _URC_NO_REASON : _URC_END_OF_STACK;
}

COLD NOI static void inst_site_offsets(uintptr_t pos, uintptr_t ret, uintptr_t fn,
                                       inst_entry *e) {
    inst_site_walk wk;
    memset(&wk, 0, sizeof wk);
    wk.ret = ret;
    _Unwind_Backtrace(inst_site_step, &wk);
    e->store = INST_SITE_UNKNOWN_STORE;
    e->probe = INST_SITE_UNKNOWN_PROBE;
    if (wk.cfa <= pos || wk.cfa - pos >= ((uintptr_t)1 << 30)) return;
    e->store = (uint32_t)(wk.cfa - pos) + 1;
    e->probe = e->store - (wk.start == fn ? 0 : 1);
}

/* A miss of the per-thread cache by call site (the entry hook's, at pos, called with
 * the return address ret for function fn): the global table, else the first call from
 * there anywhere. */
COLD NOI static inst_entry *inst_site_miss(inst_entry *c, uintptr_t ret, uintptr_t fn,
                                           uintptr_t pos) {
    inst_entry e;
    if (!inst_table_find(__atomic_load_n(&inst_sites, __ATOMIC_ACQUIRE), ret, &e)) {
        e.key = ret;
        e.id = inst_id_of(fn);
        inst_site_offsets(pos, ret, fn, &e);
        pthread_mutex_lock(&inst_lock);
        {
            inst_entry found;
            if (inst_table_find(inst_sites, ret, &found)) e = found; /* another thread's */
            else inst_table_add(&inst_sites, &e); /* on failure: looked up again later */
        }
        pthread_mutex_unlock(&inst_lock);
    }
    *c = e;
    return c;
}

/* Under inst_lock: the global table's entry of call site ret, or NULL. */
NOI static inst_entry *inst_site_global(uintptr_t ret) {
    inst_table *t = inst_sites;
    size_t mask, i;
    if (!t) return NULL;
    mask = ((size_t)1 << t->bits) - 1;
    for (i = inst_hash(ret, t->bits); t->e[i].key; i = (i + 1) & mask)
        if (t->e[i].key == ret) return &t->e[i];
    return NULL;
}

/* Under inst_lock: call site ret is an inlined copy (when it is in the table). Other
 * threads may read the old probe meanwhile: they find out the same. */
NOI static void inst_site_mark_inlined(uintptr_t ret) {
    inst_entry *g = inst_site_global(ret);
    if (g) __atomic_store_n(&g->probe, g->store - 1, __ATOMIC_RELAXED);
}

/* Call site ret places its calls differently from call to call: the frame of the body
 * that calls the hook is not the same size every time (a variable-length array or an
 * alloca before an inlined copy, a prologue that realigns the stack). Its offsets
 * become the unknown ones in *e and in the global table, which place its calls safely
 * low (INST_SITE_UNKNOWN_*). */
COLD NOI static void inst_site_mark_unknown(inst_entry *e, uintptr_t ret) {
    inst_entry *g;
    e->store = INST_SITE_UNKNOWN_STORE;
    e->probe = INST_SITE_UNKNOWN_PROBE;
    pthread_mutex_lock(&inst_lock);
    if ((g = inst_site_global(ret)) != NULL) {
        __atomic_store_n(&g->store, INST_SITE_UNKNOWN_STORE, __ATOMIC_RELAXED);
        __atomic_store_n(&g->probe, INST_SITE_UNKNOWN_PROBE, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&inst_lock);
}

/* Whether the offsets of call site ret (in *e, measured at its first call) hold for this
 * call, whose hook is at `hook`: the unwinder places it again. Only when the entry
 * hook's check would close calls, so never for a site that places its calls right (the
 * check does not fire there without a longjmp). A site found to vary is marked unknown.
 * The unknown offsets hold by construction. */
COLD NOI static int inst_site_holds(inst_entry *e, uintptr_t hook, uintptr_t ret, uintptr_t fn) {
    inst_entry now;
    if (e->store == INST_SITE_UNKNOWN_STORE) return 1;
    inst_site_offsets(hook, ret, fn, &now);
    if (now.store == e->store) return 1;
    inst_site_mark_unknown(e, ret);
    return 0;
}

NOI static inline inst_entry *inst_site(inst_thread *t, uintptr_t ret, uintptr_t fn,
                                        uintptr_t pos) {
    inst_entry *c = &t->sites[((ret >> 4) ^ (ret >> 13)) & (INST_CACHE - 1)];
    if (LIKELY(c->key == ret)) return c;
    return inst_site_miss(c, ret, fn, pos);
}

/* ---- threads ----------------------------------------------------------------------- */
NOI static void inst_session_open(void);

/* The calling thread's pthread name (what pthread_setname_np set, else the program's
 * name) for its slot in the manifest. The session must be open and the thread attached. */
NOI static void inst_name_thread(void) {
    char name[64];
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0)
        atf_session_name_thread(inst_session, name);
}

/* Where the calling thread's stack lies, for the longjmp repair (inst_unwind_enter). */
NOI static void inst_stack_bounds(inst_thread *t) {
    pthread_attr_t a;
    void *lo;
    size_t size;
    t->stack_lo = 0;
    t->stack_size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    if (pthread_attr_getstack(&a, &lo, &size) == 0) {
        t->stack_lo = (uintptr_t)lo;
        t->stack_size = size;
    }
    pthread_attr_destroy(&a);
}

/* A thread's first event: a record (busy already set) and a writer of the session, which
 * the process's first event opens. NULL when not running, when called from inside this
 * path, or in the child of a vfork() (which runs on the parent's memory until it execs or
 * exits: it must neither open a session nor attach to the parent's). */
COLD NOI static inst_thread *inst_attach(void) {
    inst_thread *t = NULL;
    int cs;
    if (inst_tls_guard) return NULL;
    if (inst_load_state() != INST_RUNNING && inst_load_state() != INST_PENDING) return NULL;
    if (getpid() != inst_pid) return NULL;
    inst_tls_guard = 1; /* also while the session is being opened */
    if (inst_load_state() == INST_PENDING) inst_session_open();
    if (inst_load_state() != INST_RUNNING) {
        inst_tls_guard = 0;
        return NULL;
    }
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs); /* attaching creates files */
    pthread_mutex_lock(&inst_lock);
    if (inst_load_state() == INST_RUNNING) {
        t = inst_free;
        if (t) {
            inst_free = t->next_free;
        } else if ((t = (inst_thread *)calloc(1, sizeof *t)) != NULL) {
            t->next_all = inst_threads;
            inst_threads = t;
        }
        if (t) {
            inst_busy_set(t);
            t->w = NULL;
            t->depth = 0;
            t->max_depth = inst_max_depth;
            t->shadow[0].pos = UINTPTR_MAX;
            t->switched = 0;
            t->seen_switch = 0;
            t->off = 0;
            t->skipped = 0;
            t->min_ticks = inst_min_ticks;
            t->raises = 0;
            t->exit_slow = inst_min_ticks != 0;
            t->emitted = 0;
        }
    }
    pthread_mutex_unlock(&inst_lock);
    if (t) {
        atf_producer *w;
        inst_stack_bounds(t);
        inst_tls = t;
        w = atf_session_producer(inst_session);
        if (w) inst_name_thread(); /* again at its exit: it may set its name later */
        pthread_setspecific(inst_key, t);
        /* the closer clears every t->w under the lock once the state left RUNNING: a
         * writer made meanwhile must not outlive that (busy keeps the session open until
         * this hook is done) */
        pthread_mutex_lock(&inst_lock);
        if (inst_load_state() == INST_RUNNING) __atomic_store_n(&t->w, w, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&inst_lock);
    } else if (inst_load_state() == INST_RUNNING) {
        inst_tls = &inst_dead; /* out of memory: stay untraced instead of retrying */
    }
    pthread_setcancelstate(cs, NULL);
    inst_tls_guard = 0;
    return t;
}

/* pthread key destructor: the thread is exiting. Its writer is closed (the drain
 * finalizes its files) and its record goes back to the free list. */
/* At the end of a thread that left events out and was not switched on again since: they
 * are marked as a gap at its end (the queue full: left unmarked). */
NOI static void inst_mark_skipped(inst_thread *t, atf_producer *w) {
    if (t->off && t->skipped && atf_producer_skipped(w, t->skipped, t->skip_first) == ATF_OK)
        t->skipped = 0;
}

NOI static void inst_thread_exit(void *p) {
    inst_thread *t = (inst_thread *)p;
    atf_producer *w;
    inst_busy_set(t);
    if ((w = inst_writer(t)) != NULL) {
        inst_mark_skipped(t, w);
        inst_name_thread();
        atf_session_detach(inst_session);
    }
    __atomic_store_n(&t->w, NULL, __ATOMIC_RELAXED);
    inst_tls = &inst_dead;
    inst_busy_clear(t);
    pthread_mutex_lock(&inst_lock);
    t->next_free = inst_free;
    inst_free = t;
    pthread_mutex_unlock(&inst_lock);
}

/* ---- the hooks --------------------------------------------------------------------- */
/* The shadow stack entry on top at depth d: the sentinel (0) when no call is open (d <= 0
 * in a forked child returning from the parent's calls), the deepest tracked one past
 * INST_SHADOW (deeper calls sit below it). */
NOI static inline long inst_top(long d) {
    return (unsigned long)d <= INST_SHADOW ? d : d < 0 ? 0 : INST_SHADOW;
}

/* Closes the open calls m..top of the shadow stack (the program left them: see
 * inst_frame), innermost first: an exception event at `ts` for each that was recorded.
 * Calls deeper than INST_SHADOW (untracked) are left to the readers, which close them
 * with the tracked call below them. The depth becomes m - 1, and so does the floor of a
 * C++ exception propagating above it (the calls it left are closed). */
NOI static long inst_close_frames(inst_thread *t, atf_producer *w, long top, long m, uint64_t ts) {
    long k;
    for (k = 0; k < t->raises; k++)
        if (t->raise[k].floor > m - 1) t->raise[k].floor = m - 1;
    if (t->depth > INST_SHADOW) { /* the recorded ones past the shadow */
        uint32_t below = (uint32_t)(t->max_depth < INST_SHADOW ? t->max_depth : INST_SHADOW);
        if (w->depth > below) w->depth = below;
    }
    for (k = top; k >= m; k--)
        if (k <= t->max_depth && !t->off && (!t->min_ticks || k <= t->emitted))
            atf_producer_exception(w, INST_EVENT_ID(t->shadow[k].id), ts);
    if (t->emitted > m - 1) t->emitted = m - 1;
    t->depth = m - 1;
    return m - 1;
}

NOI static inline int inst_on_stack(const inst_thread *t, uintptr_t pos) {
    return pos - t->stack_lo < t->stack_size;
}

/* A call from site `site` at place `pos` whose probe (see inst_entry) is at or above the
 * top of the shadow stack: the entry hook's check (inst_frame says which calls it
 * closes). Places are compared on the thread's own stack only: a call there below the
 * place is over for sure, and so is every call made after it (they ran inside it: a
 * signal handler on sigaltstack that longjmp'ed out, say). A place off the thread's
 * stack (a signal handler on sigaltstack, a coroutine) changes nothing. A call on
 * another stack still open under one on the thread's own that is not over means the
 * thread switches stacks with calls open on both (coroutines): their calls return in an
 * order the shadow stack cannot follow, so it is repaired no more. A call site taken
 * for a function's body that turns out to be an inlined copy (one of the same function
 * is open at its place) is marked as such in *e (and the global table). Returns the
 * depth after. */
COLD NOI static long inst_unwind_enter(inst_thread *t, atf_producer *w, inst_entry *e,
                                       uintptr_t hook, uintptr_t site, uintptr_t fn,
                                       uint64_t ts) {
    long top = inst_top(t->depth), k, j, m = top + 1;
    int other = 0, same_site = 0, same_fn = 0;
    uintptr_t pos = hook + e->store;
    if (t->switched || !inst_on_stack(t, pos)) return t->depth;
    if (!inst_site_holds(e, hook, site, fn)) { /* placed anew, safely low: check again */
        pos = hook + e->store;
        if (hook + e->probe < t->shadow[top].pos) return t->depth;
    }
    for (k = top; k > 0; k--) { /* below the place: over */
        uintptr_t p = t->shadow[k].pos;
        if (!inst_on_stack(t, p)) {
            other = 1;
            continue;
        }
        if (p >= pos) break;
        m = k;
    }
    for (j = k; j > 0 && t->shadow[j].pos == pos; j--) { /* at the place: j + 1 .. k */
        if (t->shadow[j].site == site) {
            m = j;
            same_site = 1;
        }
        same_fn |= t->shadow[j].id == e->id;
    }
    if (j < k && !same_site && e->probe == e->store) { /* a call of the function's body */
        if (!same_fn) {
            m = j + 1;
        } else { /* an inlined copy of a function in itself */
            e->probe = e->store - 1;
            pthread_mutex_lock(&inst_lock);
            inst_site_mark_inlined(site);
            pthread_mutex_unlock(&inst_lock);
        }
    }
    if (m <= top) return inst_close_frames(t, w, top, m, ts);
    if (other && k > 0) t->switched = 1;
    return t->depth;
}

/* A return of `id` that is not the shadow stack's top (the exit hook's check; depth 1 to
 * INST_SHADOW): the calls above its own were left, unless one right above it is on
 * another stack (a coroutine it started or resumed: the thread switches stacks, as
 * above). When it is not on the shadow stack at all, nothing is closed. */
COLD NOI static long inst_unwind_exit(inst_thread *t, atf_producer *w, uint64_t id, uint64_t ts) {
    long d = t->depth, j;
    if (t->switched) return d;
    for (j = d - 1; j > 0 && t->shadow[j].id != id; j--) {}
    if (j == 0) return d;
    if (inst_on_stack(t, t->shadow[j].pos) != inst_on_stack(t, t->shadow[j + 1].pos)) {
        t->switched = 1;
        return d;
    }
    inst_close_frames(t, w, d, j + 1, ts);
    return j;
}

/* Recording was switched on or off since this thread last looked (sw: inst_switch now),
 * or it is off: 1 when the event about to be pushed is to be recorded, else 0 (it is
 * counted as left out). Switched on again after leaving events out, the thread marks
 * them as a gap (atf_producer_skipped: readers close the frames open there) and pushes
 * the calls of its `open` frames again, stamped now, so that their returns pair. */
COLD NOI static int inst_switch_to(inst_thread *t, atf_producer *w, unsigned sw, long open) {
    if (!(sw & 1u)) {
        if (t->off && t->skipped) {
            long j, n = open < INST_SHADOW ? open : INST_SHADOW;
            uint64_t ts;
            if (atf_producer_skipped(w, t->skipped, t->skip_first) != ATF_OK) {
                t->skipped++; /* the gap queue is full: still off for this thread */
                return 0;
            }
            t->skipped = 0;
            if (n > t->max_depth) n = t->max_depth;
            ts = atf_ticks();
            for (j = 1; j <= n; j++) {
                if (!t->min_ticks) atf_producer_call(w, INST_EVENT_ID(t->shadow[j].id), ts);
                else t->call_ts[j] = ts; /* pushed when one of them is kept */
            }
            t->emitted = 0;
        }
        t->off = 0;
        t->seen_switch = sw;
        return 1;
    }
    t->off = 1;
    t->seen_switch = sw;
    if (!t->skipped) t->skip_first = atf_ticks();
    t->skipped++;
    return 0;
}

/* ATF_TRACE_MIN_DURATION_NS: a call at depth d (<= INST_SHADOW) is pushed only when it
 * or a call inside it lasts that long, at the return that shows it: its call event, and
 * those of its callers not pushed yet, then carry the stamps they were made with (later
 * than every event of the thread pushed before, so the ring stays in time order). */
NOI static inline void inst_defer_call(inst_thread *t, long d) {
    if ((unsigned long)(d - 1) < INST_SHADOW) t->call_ts[d] = atf_ticks();
}

NOI static inline __attribute__((always_inline)) void
inst_settle_return(inst_thread *t, atf_producer *w, long d, uint64_t id, uint64_t ts,
                   int exception) {
    long j;
    if ((unsigned long)(d - 1) >= INST_SHADOW) return; /* past the shadow: not kept */
    if (d > t->emitted) {
        if (ts - t->call_ts[d] < t->min_ticks) return; /* short, nothing kept inside */
        for (j = t->emitted + 1; j <= d; j++)
            atf_producer_call(w, INST_EVENT_ID(t->shadow[j].id), t->call_ts[j]);
    }
    if (exception) atf_producer_exception(w, INST_EVENT_ID(id), ts);
    else atf_producer_return(w, INST_EVENT_ID(id), ts);
    t->emitted = d - 1;
}

/* Switches recording of the whole process on (1) or off (0) unless it is so already
 * (--trigger-on, --trigger-off). */
COLD NOI static void inst_switch_set(int on) {
    unsigned sw = __atomic_load_n(&inst_switch, __ATOMIC_RELAXED);
    while ((sw & 1u) == (unsigned)on) /* odd: off */
        if (__atomic_compare_exchange_n(&inst_switch, &sw, sw + 1u, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            break;
}

/* Whether the event about to be pushed is recorded (see inst_switch_to). */
NOI static inline int inst_recording(inst_thread *t, atf_producer *w, long open) {
    unsigned sw = __atomic_load_n(&inst_switch, __ATOMIC_RELAXED);
    if (LIKELY(sw == t->seen_switch && !t->off)) return 1;
    return inst_switch_to(t, w, sw, open);
}

/* The exit hook while a C++ exception propagates (raises): the call at depth d (the
 * depth is d - 1 already) is left by the exception on top of raise[] when it is not
 * deeper than its floor (inst_raise): then it ends with an exception event, and the
 * floor goes below it; a deeper one, a call made while the exception passes, returns. */
COLD NOI static void inst_exit_raised(inst_thread *t, atf_producer *w, long d, uint64_t id,
                                      uint64_t ts) {
    int exception = 0;
    if (d <= t->raise[t->raises - 1].floor) {
        t->raise[t->raises - 1].floor = d - 1;
        exception = 1;
    }
    if (d > t->max_depth || !inst_recording(t, w, d)) return;
    if (t->min_ticks) inst_settle_return(t, w, d, id, ts, exception);
    else if (exception) atf_producer_exception(w, INST_EVENT_ID(id), ts);
    else atf_producer_return(w, INST_EVENT_ID(id), ts);
}

/* Per event: the thread's record (one TLS load), the busy flag, the writer pointer (NULL
 * also once the session is closing, so no global state is read), the id from a
 * per-thread cache (with its INST_ID_SKIP flag: filtered out; the entry hook's by call
 * site, with the call's place on the stack), the shadow stack's top (one compare: calls
 * left by a longjmp), the depth, a tick stamp (the drain converts it to the trace clock)
 * and the ring push. The entry is stamped after the lookup, the exit right after it (a
 * call left out reads no clock), so that the time between the two is the function's as
 * closely as the hooks allow. */
void __cyg_profile_func_enter(void *fn, void *site) {
    inst_thread *t = inst_tls;
    atf_producer *w;
    (void)site; /* of an inlined copy, the site of the function it is inlined in */
    if (UNLIKELY(!t)) {
        if (!(t = inst_attach())) return;
    } else {
        if (__atomic_load_n(&t->busy, __ATOMIC_RELAXED)) return;
        inst_busy_set(t);
    }
    w = inst_writer(t);
    if (LIKELY(w != NULL)) {
        uintptr_t hook = INST_POS(), ret = (uintptr_t)__builtin_return_address(0);
        inst_entry *e = inst_site(t, ret, (uintptr_t)fn, hook);
        uint64_t id = e->id;
        long d = t->depth;
        /* also for a call left out: a longjmp may have landed in it */
        if (UNLIKELY(hook + e->probe >= t->shadow[inst_top(d)].pos))
            d = inst_unwind_enter(t, w, e, hook, ret, (uintptr_t)fn, atf_ticks());
        if (LIKELY(!(id & INST_ID_SKIP))) {
            t->depth = ++d;
            if (LIKELY((unsigned long)(d - 1) < INST_SHADOW)) {
                t->shadow[d].pos = hook + e->store; /* e may have changed just above */
                t->shadow[d].id = id;
                t->shadow[d].site = ret;
            }
            if (UNLIKELY(id & INST_ID_TRIGGER_ON)) inst_switch_set(1);
            if (LIKELY(d <= t->max_depth) && inst_recording(t, w, d - 1)) {
                if (LIKELY(!t->min_ticks)) atf_producer_call(w, INST_EVENT_ID(id), atf_ticks());
                else inst_defer_call(t, d);
            }
        }
    }
    inst_busy_clear(t);
}

void __cyg_profile_func_exit(void *fn, void *site) {
    inst_thread *t = inst_tls;
    atf_producer *w;
    (void)site;
    if (UNLIKELY(!t)) {
        if (!(t = inst_attach())) return;
    } else {
        if (__atomic_load_n(&t->busy, __ATOMIC_RELAXED)) return;
        inst_busy_set(t);
    }
    w = inst_writer(t);
    if (LIKELY(w != NULL)) {
        uint64_t id = inst_id(t, (uintptr_t)fn);
        if (LIKELY(!(id & INST_ID_SKIP))) {
            uint64_t ts = atf_ticks();
            long d = t->depth;
            if (LIKELY((unsigned long)(d - 1) < INST_SHADOW) && UNLIKELY(t->shadow[d].id != id))
                d = inst_unwind_exit(t, w, id, ts);
            t->depth = d - 1;
            if (LIKELY(!t->exit_slow)) {
                if (LIKELY(d <= t->max_depth) && inst_recording(t, w, d))
                    atf_producer_return(w, INST_EVENT_ID(id), ts);
            } else if (LIKELY(!t->raises)) { /* a minimum duration */
                if (d <= t->max_depth && inst_recording(t, w, d))
                    inst_settle_return(t, w, d, id, ts, 0);
            } else {
                inst_exit_raised(t, w, d, id, ts);
            }
            if (UNLIKELY(id & INST_ID_TRIGGER_OFF)) inst_switch_set(0);
        }
    }
    inst_busy_clear(t);
}

/* ---- C++ exceptions ------------------------------------------------------------------ */
/* A frame that a C++ exception leaves ends with an exception event, not a return. gcc
 * runs the exit hook of each frame an exception passes as a cleanup while the unwinder
 * unwinds it, so the hook alone cannot tell it from a return. The unwinder's entries
 * that send an exception on its way (_Unwind_RaiseException: throw and
 * std::rethrow_exception; _Unwind_Resume_or_Rethrow: throw without an operand) and the
 * catch (__cxa_begin_catch: the first call of every handler, catch (...) too, and of
 * std::terminate's for an exception that reaches a noexcept function) are interposed
 * here. A raise stacks the exception with the thread's depth as its floor and sets
 * exit_slow, so that inst_exit_raised ends the frames it leaves with exception events
 * (a destructor called while it passes returns: inst_raise); its catch takes it off
 * again, so the catching frame goes on and its own exit is a return. Frames whose exit
 * hooks did not run while it passed (clang runs none in cleanups; C code built without
 * -fexceptions has no cleanups) are closed at the catch, as after a longjmp: the calls
 * open below the handler's place on the stack. Only C++ exceptions are followed (their
 * exception class ends in "C++" and a 0 or 1 byte: gcc's runtime and clang's alike):
 * another language's are caught without __cxa_begin_catch. A forced unwind
 * (pthread_exit, pthread_cancel) raises nothing here: the exit hooks it runs return.
 * The definitions are weak: a program linked statically with its C++ runtime keeps the
 * runtime's (then exits are returns, as without this); otherwise these come first (the
 * executable's, or the preloaded library's) and call the next definition: dlsym's
 * RTLD_NEXT, else the runtime's library when it was loaded out of the global scope
 * (dlopen with RTLD_LOCAL). */
#define INST_WEAK __attribute__((weak))
INST_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *exc) NOI INST_WEAK;
INST_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *exc)
    NOI INST_WEAK;
INST_EXPORT void *__cxa_begin_catch(void *exc) NOI INST_WEAK;

typedef _Unwind_Reason_Code (*inst_raise_fn)(struct _Unwind_Exception *);
typedef void *(*inst_catch_fn)(void *);
static void *inst_next_raise, *inst_next_rethrow, *inst_next_catch;

/* The next definition of interposed function `name`, looked up at its first call (the
 * runtime may come later, with dlopen) and kept in *slot; NULL when there is none. dlopen
 * (of a library already loaded) is itself looked up: a static link of this file, which
 * never gets here, then does not pull it in and warn about it. */
NOI static void *inst_next(void **slot, const char *name) {
    static const char *const libs[] = { "libgcc_s.so.1", "libstdc++.so.6", "libc++abi.so.1",
                                        "libunwind.so.1", "libc++.so.1" };
    union { void *p; void *(*f)(const char *, int); } open_lib;
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    size_t i;
    if (p) return p;
    p = dlsym(RTLD_NEXT, name);
    open_lib.p = p ? NULL : dlsym(RTLD_DEFAULT, "dlopen");
    for (i = 0; !p && open_lib.p && i < sizeof libs / sizeof *libs; i++) {
        void *h = open_lib.f(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h && !(p = dlsym(h, name))) dlclose(h); /* found: the library stays open */
    }
    if (p) __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

/* Whether exc is a C++ exception: class "GNUCC++\0" or "GNUCC++\1" (a dependent one:
 * std::rethrow_exception), "CLNGC++\0" or "CLNGC++\1", its first byte the class's high. */
NOI static int inst_is_cxx(const struct _Unwind_Exception *exc) {
    uint64_t c = (uint64_t)exc->exception_class;
    return ((c >> 8) & 0xFFFFFFu) == 0x432B2Bu && (c & 0xFFu) <= 1u;
}

/* The calling thread's record, busy set, when the code below may use it: the thread is
 * attached and not inside a hook (a signal handler that interrupted one); else NULL. */
NOI static inst_thread *inst_exc_thread(void) {
    inst_thread *t = inst_tls;
    if (!t || t == &inst_dead || __atomic_load_n(&t->busy, __ATOMIC_RELAXED)) return NULL;
    inst_busy_set(t);
    return t;
}

/* Takes exception exc off the thread's stack, with any left above it. */
NOI static void inst_raise_drop(inst_thread *t, const void *exc) {
    int k;
    for (k = t->raises - 1; k >= 0 && t->raise[k].exc != exc; k--) {}
    if (k < 0) return;
    t->raises = k;
    t->exit_slow = t->min_ticks != 0 || k != 0;
}

/* Exception exc is raised at the thread's depth now: stacked (again on top, one raise
 * calling the other, moves its floor). Too many nested ones: the innermost are not. */
NOI static void inst_raise_push(const struct _Unwind_Exception *exc) {
    inst_thread *t;
    if (!inst_is_cxx(exc) || !(t = inst_exc_thread())) return;
    if (t->raises && t->raise[t->raises - 1].exc == exc) {
        t->raise[t->raises - 1].floor = t->depth;
    } else if (t->raises < INST_RAISES) {
        t->raise[t->raises].exc = exc;
        t->raise[t->raises].floor = t->depth;
        t->raises++;
    }
    t->exit_slow = 1;
    inst_busy_clear(t);
}

/* The raise of exc returned: no handler was found, nothing was unwound. */
NOI static void inst_raise_failed(const struct _Unwind_Exception *exc) {
    inst_thread *t = inst_exc_thread();
    if (!t) return;
    inst_raise_drop(t, exc);
    inst_busy_clear(t);
}

/* A handler catches exc at place pos (the stack pointer of the frame it runs in, as
 * INST_POS gives it): the calls still open below that place were left without their
 * exit hooks and are closed now with exception events (inst_close_frames; as after a
 * longjmp, only on the thread's own stack, and not in a thread that switches stacks: see
 * inst_unwind_enter), and exc is taken off the thread's stack. */
COLD NOI static void inst_caught(inst_thread *t, const void *exc, uintptr_t pos) {
    atf_producer *w = inst_writer(t);
    long top = inst_top(t->depth), k, m = top + 1;
    if (w && !t->switched && inst_on_stack(t, pos)) {
        for (k = top; k > 0; k--) {
            uintptr_t p = t->shadow[k].pos;
            if (!inst_on_stack(t, p) || p > pos + 1) break; /* the left ones' CFA is pos */
            m = k;
        }
        if (m <= top) inst_close_frames(t, w, top, m, atf_ticks());
    }
    inst_raise_drop(t, exc);
}

/* Raises exc through the next definition of `name` (found once into *slot), marked as
 * raised while it unwinds; back here only when no handler took it. */
NOI static _Unwind_Reason_Code inst_raise_through(void **slot, const char *name,
                                                  struct _Unwind_Exception *exc) {
    union { void *p; inst_raise_fn f; } next; /* ISO C: no cast from void * to a function */
    _Unwind_Reason_Code rc;
    next.p = inst_next(slot, name);
    if (!next.p) return _URC_FATAL_PHASE1_ERROR;
    inst_raise_push(exc);
    rc = next.f(exc);
    inst_raise_failed(exc);
    return rc;
}

_Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *exc) {
    return inst_raise_through(&inst_next_raise, "_Unwind_RaiseException", exc);
}

_Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *exc) {
    return inst_raise_through(&inst_next_rethrow, "_Unwind_Resume_or_Rethrow", exc);
}

void *__cxa_begin_catch(void *exc) {
    union { void *p; inst_catch_fn f; } next;
    inst_thread *t = inst_exc_thread();
    if (t) {
        inst_caught(t, exc, INST_POS());
        inst_busy_clear(t);
    }
    next.p = inst_next(&inst_next_catch, "__cxa_begin_catch");
    if (!next.p) {
        fputs("atf_instrument: a C++ exception is caught, but no C++ runtime is found\n", stderr);
        abort();
    }
    return next.f(exc);
}

/* ---- names: ELF symbol tables ------------------------------------------------------ */
/* A module file, mapped, and the functions of its symbol table (.symtab when present,
 * else .dynsym), read by tools/elf_symbols.h: which symbols count, the name an address
 * gets where several start, versions left out. A file that is missing or no ELF64
 * little-endian file gives no symbols (names fall back). */
typedef struct inst_elf {
    void *map;
    size_t size;
    elf_symbol *syms;            /* sorted by value, then by the tie rule */
    size_t n;
} inst_elf;

/* The number of section headers, 0 when there are none or they lie outside the file. */
NOI static uint64_t inst_elf_section_count(const inst_elf *e, const elf_header *h) {
    elf_section first;
    uint64_t count, room;
    if (h->shoff == 0 || h->shoff > e->size || h->shentsize < ELF_SHDR_SIZE) return 0;
    room = (e->size - h->shoff) / h->shentsize;
    if (room == 0) return 0;
    elf_section_decode((const uint8_t *)e->map + h->shoff, &first);
    count = elf_section_count(h, &first);
    return count <= room ? count : 0;
}

/* Section header i (of count) into *out; 0 when the bytes it describes lie outside the file. */
NOI static int inst_elf_section(const inst_elf *e, const elf_header *h, uint64_t count,
                                uint64_t i, elf_section *out) {
    if (i >= count) return 0;
    elf_section_decode((const uint8_t *)e->map + h->shoff + i * h->shentsize, out);
    return out->offset <= e->size && out->size <= e->size - out->offset;
}

/* Collects the functions of symbol table `tab` (its strings in section tab->link). */
NOI static void inst_elf_collect(inst_elf *e, const elf_header *h, uint64_t count,
                                 const elf_section *tab) {
    const uint8_t *base = (const uint8_t *)e->map;
    uint64_t entsize = elf_symbol_entry_size(tab), n;
    elf_section str;
    if (entsize == 0 || !inst_elf_section(e, h, count, tab->link, &str) ||
        str.type != ELF_SHT_STRTAB)
        return;
    n = tab->size / entsize;
    if (n == 0 || n > SIZE_MAX / sizeof *e->syms) return;
    e->syms = (elf_symbol *)malloc((size_t)n * sizeof *e->syms);
    if (!e->syms) return;
    e->n = elf_symbols_read(base + tab->offset, n, entsize, (const char *)base + str.offset,
                            str.size, e->syms);
}

/* The index of the symbol table to read: the first of the best kind (.symtab, else
 * .dynsym: elf_symbol_table_worth), as symbolize.c picks it; count when there is none. */
NOI static uint64_t inst_elf_symbol_table(const inst_elf *e, const elf_header *h,
                                          uint64_t count) {
    elf_section sh;
    uint64_t i, best = count;
    int worth = 0;
    for (i = 0; i < count; i++) {
        elf_section_decode((const uint8_t *)e->map + h->shoff + i * h->shentsize, &sh);
        if (elf_symbol_table_worth(sh.type) > worth) {
            worth = elf_symbol_table_worth(sh.type);
            best = i;
        }
    }
    return best;
}

/* Maps the file at path and reads its functions; everything is checked against the file. */
NOI static void inst_elf_open(inst_elf *e, const char *path) {
    elf_header h;
    elf_section tab;
    struct stat st;
    uint64_t count;
    int fd;
    memset(e, 0, sizeof *e);
    if (!path[0] || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= ELF_EHDR_SIZE &&
        (uint64_t)st.st_size <= SIZE_MAX) {
        e->size = (size_t)st.st_size;
        e->map = mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (e->map == MAP_FAILED) e->map = NULL;
    }
    close(fd);
    if (!e->map || !elf_header_decode((const uint8_t *)e->map, &h)) return;
    count = inst_elf_section_count(e, &h);
    if (inst_elf_section(e, &h, count, inst_elf_symbol_table(e, &h, count), &tab))
        inst_elf_collect(e, &h, count, &tab);
}

NOI static void inst_elf_close(inst_elf *e) {
    free(e->syms);
    if (e->map) munmap(e->map, e->size);
}

/* The name of the function at file address v (elf_symbols_find), without its version: the
 * symbol's name when one starts at v, else "name+0x10" in buf. NULL when none holds v. */
NOI static const char *inst_elf_name(const inst_elf *e, uint64_t v, char *buf, size_t cap) {
    const elf_symbol *sym = elf_symbols_find(e->syms, e->n, v);
    if (!sym) return NULL;
    if (sym->value == v && sym->name[sym->name_len] == '\0') return sym->name;
    if (sym->value == v) snprintf(buf, cap, "%.*s", (int)sym->name_len, sym->name);
    else
        snprintf(buf, cap, "%.*s+0x%llx", (int)sym->name_len, sym->name,
                 (unsigned long long)(v - sym->value));
    return buf;
}

NOI static const char *inst_basename(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The name of the function at address a of module m, whose symbols are in elf: the
 * symbol table, then (with_dladdr) dladdr(), else "module+0xoffset" (in buf). dladdr
 * takes the dynamic linker's lock: not under inst_lock, which a hook in a constructor
 * that dlopen runs may be waiting for while holding that lock. */
NOI static const char *inst_name_of(const inst_elf *elf, const inst_module *m, uintptr_t a,
                                    int with_dladdr, char *buf, size_t cap) {
    const char *name = inst_elf_name(elf, (uint64_t)(a - m->bias), buf, cap);
    Dl_info info;
    if (name) return name;
    if (with_dladdr && dladdr((void *)a, &info) && info.dli_sname) {
        if ((uintptr_t)info.dli_saddr == a) return info.dli_sname;
        snprintf(buf, cap, "%s+0x%llx", info.dli_sname,
                 (unsigned long long)(a - (uintptr_t)info.dli_saddr));
        return buf;
    }
    snprintf(buf, cap, "%s+0x%llx", inst_basename(m->path), (unsigned long long)(a - m->bias));
    return buf;
}

NOI static const char *inst_module_file(size_t mi) {
    return mi == inst_unknown ? "" : inst_modules[mi].path;
}

/* Registers the modules the session has not heard of (the executable even without
 * functions) and every function's name. Runs at exit, when no hook is running. */
NOI static size_t inst_resolve(void) {
    size_t mi, i, functions = 0;
    char buf[512];
    for (mi = 0; mi < inst_module_count; mi++) {
        inst_module *m = &inst_modules[mi];
        inst_elf elf;
        if (!m->count && mi != 0) continue;
        inst_announce_module(mi); /* the executable without functions: not known yet */
        if (!m->count) continue;
        inst_elf_open(&elf, inst_module_file(mi));
        for (i = 0; i < m->count; i++)
            atf_session_add_symbol(inst_session, ((uint64_t)mi << 32) | (uint64_t)i,
                                   inst_name_of(&elf, m, m->fns[i], 1, buf, sizeof buf));
        functions += m->count;
        inst_elf_close(&elf);
    }
    return functions;
}

/* ---- filters ----------------------------------------------------------------------- */
/* ATF_TRACE_FILTER and ATF_TRACE_NOTRACE: comma-separated glob patterns (fnmatch) on
 * function names: a pattern matches a function when it matches its symbol, or the full
 * or short form of its demangled name (demangle.h; the C++ runtime's demangler is looked
 * up when the settings are read, never from a hook). Decided once per function, at its
 * first call anywhere (inst_assign, under inst_lock): each module's symbol table is read
 * on its first such call and kept until exit. */
typedef struct inst_globs { char *text; char **pat; size_t n; } inst_globs;

static inst_globs inst_only, inst_never, inst_trigger_on, inst_trigger_off;
static inst_elf *inst_filter_elf;               /* by module id; map NULL = not read yet */
static size_t inst_filter_elf_cap;

/* Splits the comma-separated list v into patterns (demangle_list_next: empty ones
 * dropped, commas inside brackets kept). */
NOI static void inst_globs_parse(inst_globs *g, const char *v) {
    char *p, *cursor;
    size_t cap = 1;
    memset(g, 0, sizeof *g);
    if (!v || !v[0] || !(g->text = inst_strdup(v))) return;
    for (p = g->text; *p; p++) cap += *p == ',';
    if (!(g->pat = (char **)malloc(cap * sizeof *g->pat))) return;
    for (cursor = g->text; (p = demangle_list_next(&cursor)) != NULL;) g->pat[g->n++] = p;
}

NOI static int inst_glob(const char *pattern, const char *name) {
    return fnmatch(pattern, name, 0) == 0;
}

NOI static int inst_globs_match(const inst_globs *g, const demangle_forms *name) {
    size_t i;
    for (i = 0; i < g->n; i++)
        if (demangle_forms_match(name, g->pat[i], inst_glob)) return 1;
    return 0;
}

/* The symbols of module mi, read on first use; NULL when out of memory. */
NOI static const inst_elf *inst_filter_symbols(size_t mi) {
    if (mi >= inst_filter_elf_cap) {
        size_t cap = mi + 16;
        inst_elf *g = (inst_elf *)realloc(inst_filter_elf, cap * sizeof *g);
        if (!g) return NULL;
        memset(g + inst_filter_elf_cap, 0, (cap - inst_filter_elf_cap) * sizeof *g);
        inst_filter_elf = g;
        inst_filter_elf_cap = cap;
    }
    if (!inst_filter_elf[mi].map) inst_elf_open(&inst_filter_elf[mi], inst_module_file(mi));
    return &inst_filter_elf[mi];
}

/* What the filters and triggers make of the function at a (module mi): INST_ID_SKIP when
 * it is not recorded, else its INST_ID_TRIGGER_* flags. Under inst_lock. */
NOI static uint64_t inst_filter_flags(size_t mi, uintptr_t a) {
    static const inst_elf none;
    const inst_elf *elf = inst_filter_symbols(mi);
    char buf[512];
    demangle_forms name;
    uint64_t flags = 0;
    demangle_forms_make(&name, inst_name_of(elf ? elf : &none, &inst_modules[mi], a, 0, buf,
                                            sizeof buf));
    if ((inst_only.n && !inst_globs_match(&inst_only, &name)) ||
        inst_globs_match(&inst_never, &name)) {
        flags = INST_ID_SKIP;
    } else {
        if (inst_globs_match(&inst_trigger_on, &name)) flags |= INST_ID_TRIGGER_ON;
        if (inst_globs_match(&inst_trigger_off, &name)) flags |= INST_ID_TRIGGER_OFF;
    }
    demangle_forms_free(&name);
    return flags;
}

/* Reads ATF_TRACE_FILTER, ATF_TRACE_NOTRACE and ATF_TRACE_DEPTH (a positive number;
 * another value is reported and ignored). */
NOI static void inst_filters_setup(void) {
    const char *d = getenv("ATF_TRACE_DEPTH");
    inst_globs_parse(&inst_only, getenv("ATF_TRACE_FILTER"));
    inst_globs_parse(&inst_never, getenv("ATF_TRACE_NOTRACE"));
    inst_globs_parse(&inst_trigger_on, getenv("ATF_TRACE_TRIGGER_ON"));
    inst_globs_parse(&inst_trigger_off, getenv("ATF_TRACE_TRIGGER_OFF"));
    inst_filtering = inst_only.n > 0 || inst_never.n > 0 || inst_trigger_on.n > 0 ||
                     inst_trigger_off.n > 0;
    /* the C++ runtime's demangler, now (the process's; else loaded: a program built with
       -static-libstdc++ exports none), so that no hook ever looks it up */
    if (inst_filtering) demangle_runtime(1);
    if (d && d[0]) {
        char *end;
        long v = strtol(d, &end, 10);
        if (*end == '\0' && v > 0) inst_max_depth = v;
        else fprintf(stderr, "atf_instrument: ATF_TRACE_DEPTH=%s is not a positive number; "
                             "ignored\n", d);
    }
}

/* The symbol tables the filters read, once no hook can need them. */
NOI static void inst_filters_free(void) {
    size_t i;
    for (i = 0; i < inst_filter_elf_cap; i++)
        if (inst_filter_elf[i].map) inst_elf_close(&inst_filter_elf[i]);
    free(inst_filter_elf);
    inst_filter_elf = NULL;
    inst_filter_elf_cap = 0;
}

/* ---- start and stop ---------------------------------------------------------------- */
#if defined(SYS_membarrier)
#  define INST_MB_GLOBAL 1                        /* MEMBARRIER_CMD_GLOBAL */
#  define INST_MB_PRIVATE_EXPEDITED 8             /* MEMBARRIER_CMD_PRIVATE_EXPEDITED */
#  define INST_MB_REGISTER_PRIVATE_EXPEDITED 16
NOI static long inst_membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0); }
#endif

/* Chooses how the closer will order itself against the hooks of other threads. */
NOI static void inst_barrier_setup(void) {
#if defined(SYS_membarrier)
    long mask = inst_membarrier(0); /* MEMBARRIER_CMD_QUERY */
    if (mask > 0 && (mask & INST_MB_PRIVATE_EXPEDITED) &&
        inst_membarrier(INST_MB_REGISTER_PRIVATE_EXPEDITED) == 0)
        inst_barrier = INST_MB_PRIVATE_EXPEDITED;
    else if (mask > 0 && (mask & INST_MB_GLOBAL))
        inst_barrier = INST_MB_GLOBAL;
#endif
}

NOI static void inst_sleep_us(long us) {
    struct timespec ts;
    ts.tv_sec = 0;
    ts.tv_nsec = us * 1000;
    nanosleep(&ts, NULL);
}

/* After the state left RUNNING and every writer pointer was cleared: makes sure no other
 * thread is still inside a hook that read its pointer before. A full barrier in every
 * thread (membarrier) makes each thread's busy store visible, or its later load of the
 * pointer see NULL; then each busy flag is waited for. 0 when a thread stays inside a
 * hook for seconds (then the session is not closed: its files stay as a crash leaves
 * them, which readers recover). */
NOI static int inst_quiesce(inst_thread *head) {
    inst_thread *t;
#if defined(SYS_membarrier)
    if (!inst_barrier || inst_membarrier(inst_barrier) != 0) inst_sleep_us(10000);
#else
    inst_sleep_us(10000); /* every store buffer has drained long before */
#endif
    for (t = head; t; t = t->next_all) {
        int waited = 0;
        if (t == inst_tls) continue; /* exit() from a signal handler inside our own hook */
        while (__atomic_load_n(&t->busy, __ATOMIC_ACQUIRE)) {
            if (++waited > 40000) return 0; /* ~2 s */
            if (waited < 100) sched_yield();
            else inst_sleep_us(50);
        }
    }
    return 1;
}

/* ATF_TRACE_OVERFLOW: block (also when unset or empty) or drop; anything else is
 * reported and read as block. */
NOI static uint32_t inst_overflow_policy(const char *v) {
    if (!v || !v[0] || strcmp(v, "block") == 0) return ATF_OVERFLOW_BLOCK;
    if (strcmp(v, "drop") == 0) return ATF_OVERFLOW_DROP;
    fprintf(stderr, "atf_instrument: ATF_TRACE_OVERFLOW=%s is neither block nor drop; "
                    "using block\n", v);
    return ATF_OVERFLOW_BLOCK;
}

/* ATF_TRACE_LAYOUT: 1 (also when unset or empty), 2 or packed; anything else is reported
 * and read as 1. */
NOI static uint32_t inst_layout(const char *v) {
    if (!v || !v[0] || strcmp(v, "1") == 0) return ATF_LAYOUT_1;
    if (strcmp(v, "2") == 0) return ATF_LAYOUT_2;
    if (strcmp(v, "packed") == 0) return ATF_LAYOUT_PACKED;
    fprintf(stderr, "atf_instrument: ATF_TRACE_LAYOUT=%s is not 1, 2 or packed; using 1\n", v);
    return ATF_LAYOUT_1;
}

/* A bound from the environment: a plain number, `unset` when the variable is unset or
 * empty; anything else is reported and read as unset. */
NOI static uint64_t inst_env_u64(const char *name, uint64_t unset) {
    const char *v = getenv(name);
    char *end;
    unsigned long long n;
    if (!v || !v[0]) return unset;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno) {
        fprintf(stderr, "atf_instrument: %s=%s is not a plain number; ignored\n", name, v);
        return unset;
    }
    return n;
}

/* ATF_TRACE_MIN_DURATION_NS in ticks: the tick rate measured against the trace clock
 * over 2 ms, once (only when the option is given). */
NOI static void inst_min_duration(atf_session_config *cfg) {
    uint64_t ns = inst_env_u64("ATF_TRACE_MIN_DURATION_NS", 0), k0, n0, k1, n1;
    if (!ns) return;
    k0 = atf_ticks();
    n0 = atf_now_ns();
    do {
        k1 = atf_ticks();
        n1 = atf_now_ns();
    } while (n1 - n0 < 2000000u);
    inst_min_ticks =
        (uint64_t)((long double)ns * (long double)(k1 - k0) / (long double)(n1 - n0));
    if (!inst_min_ticks) inst_min_ticks = 1;
    cfg->min_duration_ns = ns; /* said in the manifest */
}

/* ATF_TRACE_MAX_BYTES, ATF_TRACE_MAX_DURATION_NS and ATF_TRACE_DISK_RESERVE into the
 * session's bounds (a reserve of 0: no guard; unset: the library's default). */
NOI static void inst_bounds(atf_session_config *cfg) {
    uint64_t reserve = inst_env_u64("ATF_TRACE_DISK_RESERVE", UINT64_MAX);
    cfg->max_bytes = inst_env_u64("ATF_TRACE_MAX_BYTES", 0);
    cfg->max_duration_ns = inst_env_u64("ATF_TRACE_MAX_DURATION_NS", 0);
    cfg->disk_reserve = reserve == 0 ? ATF_DISK_RESERVE_OFF : reserve == UINT64_MAX ? 0 : reserve;
    cfg->keep_last_bytes = inst_env_u64("ATF_TRACE_KEEP_LAST_BYTES", 0);
    cfg->keep_last_ns = inst_env_u64("ATF_TRACE_KEEP_LAST_NS", 0);
}

/* ---- switching recording on and off --------------------------------------------- */
typedef void (*inst_handler)(int);
typedef int (*inst_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef inst_handler (*inst_signal_fn)(int, inst_handler);

/* The C library's sigaction and signal, which the program's calls reach through ours. */
NOI static int inst_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    static inst_sigaction_fn real;
    if (!real) {
        union { void *p; inst_sigaction_fn f; } u;
        u.p = dlsym(RTLD_NEXT, "sigaction");
        real = u.f;
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(sig, act, old);
}

NOI static inst_handler inst_real_signal(int sig, inst_handler handler) {
    static inst_signal_fn real;
    if (!real) {
        union { void *p; inst_signal_fn f; } u;
        u.p = dlsym(RTLD_NEXT, "signal");
        real = u.f;
    }
    if (!real) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    return real(sig, handler);
}

NOI static void inst_on_toggle(int sig) {
    (void)sig;
    __atomic_add_fetch(&inst_switch, 1u, __ATOMIC_RELAXED);
}

/* The flight recorder's snapshot: atf_session_trigger is one atomic add then. */
NOI static void inst_on_snapshot(int sig) {
    atf_session *s = __atomic_load_n(&inst_session, __ATOMIC_ACQUIRE);
    (void)sig;
    if (s) atf_session_trigger(s, 0);
}

/* The signals the tracer listens to, each named by an environment variable. */
typedef struct inst_listener {
    const char *env, *does, *option;
    inst_handler on;
    int sig;                                    /* 0 = none */
    int taken;                                  /* the program set its own handler for it */
} inst_listener;
static inst_listener inst_listeners[] = {
    { "ATF_TRACE_TOGGLE_SIGNAL", "switches recording", "--toggle-signal", inst_on_toggle, 0, 0 },
    { "ATF_TRACE_SNAPSHOT_SIGNAL", "writes what the flight recorder holds", "--snapshot-signal",
      inst_on_snapshot, 0, 0 },
};
#define INST_LISTENERS (sizeof inst_listeners / sizeof inst_listeners[0])

/* Installs the handler of listener l for the signal its variable names (`fallback` when
 * unset; "0": none). A program that sets its own later is told, and wins. */
NOI static void inst_listen(inst_listener *l, const char *fallback) {
    const char *v = getenv(l->env);
    struct sigaction sa;
    if (!v || !v[0]) v = fallback;
    if (!v || strcmp(v, "0") == 0) return;
    if (!(l->sig = signal_number(v))) {
        fprintf(stderr, "atf_instrument: %s=%s is no signal; none %s\n", l->env, v, l->does);
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = l->on;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (inst_real_sigaction(l->sig, &sa, NULL) != 0) l->sig = 0;
}

/* Ignores listener l's signal from now on (the program's own handler, if it set one, stays). */
NOI static void inst_unlisten(inst_listener *l) {
    struct sigaction sa;
    if (!l->sig || l->taken) return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN; /* a signal that arrives during the close changes nothing */
    sigemptyset(&sa.sa_mask);
    inst_real_sigaction(l->sig, &sa, NULL);
}

/* ATF_TRACE_START_PAUSED=1: recording starts switched off; ATF_TRACE_TOGGLE_SIGNAL
 * switches it. ATF_TRACE_SNAPSHOT_SIGNAL (USR2 by default) writes what the flight
 * recorder holds, when it runs. */
NOI static void inst_switch_setup(const atf_session_config *cfg) {
    const char *off = getenv("ATF_TRACE_START_PAUSED");
    /* a trigger that switches recording on: off until it does */
    if ((off && strcmp(off, "1") == 0) || inst_trigger_on.n) inst_switch = 1;
    inst_listen(&inst_listeners[0], NULL);
    if (cfg->keep_last_bytes || cfg->keep_last_ns) inst_listen(&inst_listeners[1], "USR2");
}

/* The program sets a handler for signal `sig`: when the tracer listens to it, says once
 * that it no longer does what it did. */
NOI static void inst_signal_taken(int sig) {
    size_t i;
    for (i = 0; i < INST_LISTENERS; i++) {
        inst_listener *l = &inst_listeners[i];
        if (!l->sig || sig != l->sig || l->taken) continue;
        l->taken = 1;
        fprintf(stderr, "atf_instrument: the program sets its own handler for signal %d, "
                        "which %s: it no longer does (atf record %s chooses another)\n",
                sig, l->does, l->option);
    }
}

INST_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) NOI;
INST_EXPORT inst_handler signal(int sig, inst_handler handler) NOI;

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (act) inst_signal_taken(sig);
    return inst_real_sigaction(sig, act, old);
}

inst_handler signal(int sig, inst_handler handler) {
    inst_signal_taken(sig);
    return inst_real_signal(sig, handler);
}

/* Event totals over every thread of the session: drains what the rings still hold (no
 * hook runs any more) so that the files' counters are final, then sums them. */
typedef struct inst_totals { uint64_t written, lost, stopped, gaps; } inst_totals;

NOI static void inst_sum_stats(inst_totals *tot) {
    uint32_t slot, n;
    memset(tot, 0, sizeof *tot);
    atf_session_pump(inst_session);
    n = atf_session_thread_count(inst_session);
    for (slot = 0; slot < n; slot++) {
        atf_thread_stats st;
        if (atf_session_thread_stats(inst_session, slot, &st) != ATF_OK) continue;
        tot->written += st.events_written;
        tot->lost += st.events_dropped + st.events_lost_io;
        tot->stopped += st.events_stopped;
        tot->gaps += st.gaps;
    }
}

/* The command line from /proc/self/cmdline, its arguments joined by spaces, for the
 * manifest ("cmdline"). */
NOI static void inst_set_cmdline(void) {
    char *buf = (char *)malloc(65536);
    ssize_t n = 0, k;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (buf && fd >= 0)
        while (n < 65535 && (k = read(fd, buf + n, (size_t)(65535 - n))) > 0) n += k;
    if (fd >= 0) close(fd);
    if (buf && n > 0) {
        ssize_t i;
        while (n > 0 && buf[n - 1] == '\0') n--; /* the last argument's terminator */
        for (i = 0; i < n; i++)
            if (buf[i] == '\0') buf[i] = ' ';
        buf[n] = '\0';
        atf_session_set_cmdline(inst_session, buf);
    }
    free(buf);
}

/* A second "wall_clock_ns" anchor, at exit: the wall clock read between two reads of the
 * trace clock and paired with their midpoint, so that tools can tell how the two clocks
 * drifted apart over the run. */
NOI static void inst_wall_anchor(void) {
    uint64_t before = atf_now_ns(), wall = atf_wall_ns(), after = atf_now_ns();
    atf_session_add_anchor_exact(inst_session, "wall_clock_ns", before + (after - before) / 2,
                                 (int64_t)wall, 1000000000);
}

/* Every module and function assigned so far, for a session that has not heard of them
 * (a forked child's: the ids are the parent's, the session is new). Other threads may
 * be assigning meanwhile (the session is running: they grow the tables), so each entry
 * is copied under inst_lock and told outside it, as inst_id_of does. */
NOI static void inst_announce_known(void) {
    size_t mi = 0, i = 0;
    for (;;) {
        inst_news n;
        int have = 0;
        memset(&n, 0, sizeof n);
        pthread_mutex_lock(&inst_lock);
        while (mi < inst_module_count && i >= inst_modules[mi].count) { /* the next one */
            mi++;
            i = 0;
        }
        if (mi < inst_module_count) {
            inst_news_take(mi, inst_modules[mi].fns[i], ((uint64_t)mi << 32) | (uint64_t)i, &n);
            i++;
            have = 1;
        }
        pthread_mutex_unlock(&inst_lock);
        if (!have) return;
        inst_announce(&n);
    }
}

/* The child of a fork has the forking thread only, and none of the parent's drain. It
 * gives up the inherited session (the parent's files and thread records are not its
 * own; the threads of those records are not in the child) and keeps the address -> id
 * tables (same address space, same ids). Its first event opens a session of its own
 * in the parent's session directory: a child that only execs makes no directory. With
 * ATF_TRACE_FOLLOW=0 it records nothing. */
NOI static void inst_atfork_child(void) {
    inst_thread *t;
    size_t i;
    int state = inst_load_state();
    pthread_mutex_init(&inst_lock, NULL);
    inst_pid = getpid();
    inst_free = NULL;
    for (t = inst_threads; t; t = t->next_all) {
        __atomic_store_n(&t->w, NULL, __ATOMIC_RELAXED);
        __atomic_store_n(&t->busy, 0, __ATOMIC_RELAXED);
        t->next_free = inst_free;
        inst_free = t;
    }
    inst_tls = NULL;
    pthread_setspecific(inst_key, NULL); /* its record is on the free list now */
    for (i = 0; i < inst_module_count; i++) inst_modules[i].announced = 0; /* a new session */
    if (state == INST_RUNNING) {
        snprintf(inst_parent_dir, sizeof inst_parent_dir, "%s", atf_session_path(inst_session));
        atf_session_abandon_after_fork(__atomic_exchange_n(&inst_session, NULL, __ATOMIC_ACQ_REL));
        inst_set_state(inst_follow ? INST_PENDING : INST_OFF);
    } else if (state != INST_PENDING || !inst_follow) {
        inst_set_state(INST_OFF); /* the parent was not recording, or stopping */
    } /* a parent that had not recorded yet: the child opens a session as it would */
}

/* The process's first event: its session, pid_<pid>/ in the session directory inst_name
 * under inst_root (a new session_<date>_<time> when inst_name is ""), or in a forked
 * child next to its parent's (inst_parent_dir). On failure the process records nothing. */
COLD NOI static void inst_session_open(void) {
    char root[sizeof inst_root], *name = NULL, *pid;
    atf_error e;
    atf_result rc;
    pthread_mutex_lock(&inst_lock);
    if (inst_load_state() != INST_PENDING) {
        pthread_mutex_unlock(&inst_lock);
        return;
    }
    if (inst_parent_dir[0]) { /* <root>/<session>/pid_<parent> */
        snprintf(root, sizeof root, "%s", inst_parent_dir);
        pid = strrchr(root, '/');
        if (pid) *pid = '\0';
        name = strrchr(root, '/');
        if (!pid || !name) {
            inst_set_state(INST_OFF);
            pthread_mutex_unlock(&inst_lock);
            return;
        }
        *name++ = '\0';
    } else {
        memcpy(root, inst_root, sizeof root);
        if (inst_name[0]) name = inst_name;
    }
    inst_cfg.session_name = name; /* NULL: a new session_<date>_<time> */
    inst_barrier_setup(); /* per process: a forked child registers again */
    rc = atf_session_open_ex(&inst_session, root, &inst_cfg, &e);
    inst_cfg.session_name = NULL;
    if (rc == ATF_OK) {
        inst_set_cmdline();
        inst_set_state(INST_RUNNING);
    } else {
        char line[800];
        fprintf(stderr, "atf_instrument: no trace of pid %d: cannot open a session under %s: "
                        "%s\n", (int)getpid(), root, atf_error_format(&e, line, sizeof line));
        inst_set_state(INST_OFF);
    }
    pthread_mutex_unlock(&inst_lock);
    /* what the session is to know already (a forked child's: the parent's functions;
     * other threads may attach and assign meanwhile: see inst_announce_known) */
    if (inst_load_state() == INST_RUNNING) inst_announce_known();
}

/* Whether the hooks the program calls are this copy's. They are not when this copy is
 * preloaded into a program linked with a tracer of its own (atf_instrument.o), whose
 * hooks the executable exports and so wins: this copy then stays off instead of opening
 * a second, empty session. */
NOI static int inst_hooks_are_ours(void) {
    Dl_info found, self;
    void *hook = dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
    if (!hook || !dladdr(hook, &found) || !dladdr((void *)&inst_state, &self)) return 1;
    return found.dli_fbase == self.dli_fbase;
}

/* _exit and _Exit of the C library, which the ones below end the process with. */
typedef void (*inst_exit_fn)(int);
static inst_exit_fn inst_real_exit, inst_real_Exit;

/* Sets everything up, opens nothing: the first event opens the session, so that a
 * process the preload reaches that never runs an instrumented function (a shell, sed)
 * leaves no directory. */
__attribute__((constructor(101))) NOI static void inst_start(void) {
    const char *root = getenv("ATF_TRACE_DIR"), *e = getenv("ATF_TRACE");
    const char *name = getenv("ATF_TRACE_SESSION");
    atf_session_config *cfg = &inst_cfg;
    /* through a union: ISO C has no conversion from void * to a function pointer */
    union { void *p; inst_exit_fn f; } real;
    real.p = dlsym(RTLD_NEXT, "_exit");
    inst_real_exit = real.f;
    real.p = dlsym(RTLD_NEXT, "_Exit");
    inst_real_Exit = real.f;
    inst_pid = getpid();
    if ((e && strcmp(e, "0") == 0) || !inst_hooks_are_ours()) {
        inst_set_state(INST_OFF);
        return;
    }
    if (!root || !root[0]) root = "traces";
    if (!name) name = ""; /* "": a new session_<date>_<time> */
    if (strlen(root) >= sizeof inst_root || strlen(name) >= sizeof inst_name) {
        fprintf(stderr, "atf_instrument: no trace: ATF_TRACE_DIR or ATF_TRACE_SESSION is "
                        "too long\n");
        inst_set_state(INST_OFF);
        return;
    }
    memcpy(inst_root, root, strlen(root) + 1);
    memcpy(inst_name, name, strlen(name) + 1);
    memset(cfg, 0, sizeof *cfg);
    /* 4 MiB: the drain takes the lines it read out of its caches (atf__mem_evict), so a
     * ring small enough to stay in the caches costs the hooks nothing more, and its
     * memory is faulted in once (a traced fib(32) on a 2-core VM: 287 ms of CPU, against
     * 293 with 32 MiB, and 289 against 377 when the memory is new to the VM) */
    cfg->index_ring_events = 1u << 17;
    /* more busy threads than cores: the drain gets no core of its own, so a larger ring
     * buys no time (fib(28) in 4 threads on 2 cores: 225 ms of CPU with 2-MiB rings,
     * 236 with 4-MiB ones) */
    cfg->index_ring_events_crowded = 1u << 16;
    cfg->stamp_clock = ATF_STAMP_TICKS; /* the hooks stamp atf_ticks(); the drain converts */
    if ((e = getenv("ATF_TRACE_RING_EVENTS")) != NULL && atoll(e) > 0)
        cfg->index_ring_events = (uint64_t)atoll(e), cfg->index_ring_events_crowded = 0;
    cfg->overflow = inst_overflow_policy(getenv("ATF_TRACE_OVERFLOW"));
    cfg->layout = inst_layout(getenv("ATF_TRACE_LAYOUT"));
    inst_bounds(cfg);
    inst_min_duration(cfg);
    inst_follow = !((e = getenv("ATF_TRACE_FOLLOW")) != NULL && strcmp(e, "0") == 0);
    inst_fns = (inst_table *)calloc(1, sizeof *inst_fns + (sizeof(inst_entry) << 12));
    if (!inst_fns) {
        inst_set_state(INST_OFF);
        return;
    }
    inst_fns->bits = 12;
    inst_filters_setup();
    inst_switch_setup(cfg);
    inst_rescan(); /* module 0: the executable */
    if (pthread_key_create(&inst_key, inst_thread_exit) != 0 ||
        pthread_atfork(NULL, NULL, inst_atfork_child) != 0) {
        inst_set_state(INST_OFF);
        return;
    }
    inst_set_state(INST_PENDING);
}

/* Finalizes the session: at exit (a destructor) and at _exit/_Exit (below). Only in the
 * process that opened it: a vfork() child shares the parent's memory, state included. */
__attribute__((destructor(101))) NOI static void inst_stop(void) {
    inst_thread *head, *t, *self = inst_tls;
    atf_producer *own = NULL;
    const char *quiet = getenv("ATF_TRACE_QUIET");
    char dir[1024];
    size_t functions;
    uint32_t threads;
    inst_totals tot;
    char gaps[64] = "", stop[96] = "";
    uint32_t stopped;
    atf_result rc;
    atf_error close_error;
    if (inst_load_state() != INST_RUNNING || getpid() != inst_pid) return;
    pthread_mutex_lock(&inst_lock);
    if (inst_load_state() != INST_RUNNING) {
        pthread_mutex_unlock(&inst_lock);
        return;
    }
    inst_set_state(INST_STOPPING);
    head = inst_threads;
    if (self && self != &inst_dead) own = self->w;
    for (t = head; t; t = t->next_all) __atomic_store_n(&t->w, NULL, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&inst_lock);
    snprintf(dir, sizeof dir, "%s", atf_session_path(inst_session));
    if (!inst_quiesce(head)) {
        fprintf(stderr, "atf_instrument: a thread stayed inside a hook; %s left unfinalized\n", dir);
        inst_set_state(INST_OFF);
        return;
    }
    inst_name_thread(); /* the exiting thread (main, mostly): its name as it is now */
    if (own) inst_mark_skipped(self, own);
    inst_wall_anchor();
    inst_sum_stats(&tot);
    functions = inst_resolve();
    inst_filters_free();
    threads = atf_session_thread_count(inst_session);
    stopped = atf_session_stopped(inst_session, NULL);
    inst_unlisten(&inst_listeners[1]); /* no snapshot of a session being closed */
    rc = atf_session_close_ex(__atomic_exchange_n(&inst_session, NULL, __ATOMIC_ACQ_REL),
                              &close_error);
    inst_set_state(INST_OFF);
    if (tot.gaps)
        snprintf(gaps, sizeof gaps, " in %llu gap(s)", (unsigned long long)tot.gaps);
    if (stopped)
        snprintf(stop, sizeof stop, "; recording stopped at the %s (%llu events after it "
                 "not recorded)", atf_stop_reason_str(stopped), (unsigned long long)tot.stopped);
    if (rc != ATF_OK) {
        char line[800];
        fprintf(stderr, "atf_instrument: the trace in %s may be incomplete: %s\n", dir,
                atf_error_format(&close_error, line, sizeof line));
    } else if (!quiet || strcmp(quiet, "0") == 0) {
        fprintf(stderr, "atf_instrument: %u thread(s), %zu function(s) traced into %s: "
                        "%llu events recorded, %llu lost%s%s\n",
                (unsigned)threads, functions, dir, (unsigned long long)tot.written,
                (unsigned long long)tot.lost, gaps, stop);
    }
}

/* Whether the calling thread may be inside a signal handler: it blocks a signal that has
 * a handler (the kernel blocks a signal while its handler runs, unless SA_NODEFER). */
NOI static int inst_maybe_in_handler(void) {
    sigset_t blocked;
    int sig;
    if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0) return 1;
    for (sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigismember(&blocked, sig) != 1 || sigaction(sig, NULL, &sa) != 0) continue;
        if ((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
            return 1;
    }
    return 0;
}

/* _exit() and _Exit() end a process without running destructors: a forked child that
 * ends so (the usual way after fork) would leave its trace unfinalized. These finalize it
 * as the destructor does, then end the process through the C library's function. Not in a
 * vfork() child (inst_stop checks the pid), and not where finalizing could hang the
 * process: from a signal handler (what it interrupted may hold a lock finalizing takes,
 * the allocator's; seen as a blocked signal that has a handler) or from inside a hook. A
 * trace left so is what a killed process leaves: `atf record` or `atf recover` completes
 * it, and its manifest already locates every function called. */
INST_EXPORT void _exit(int status) NOI;
INST_EXPORT void _Exit(int status) NOI;

NOI __attribute__((noreturn)) static void inst_exit_through(inst_exit_fn real, int status) {
    inst_thread *t = inst_tls;
    if (inst_load_state() == INST_RUNNING && getpid() == inst_pid &&
        !(t && __atomic_load_n(&t->busy, __ATOMIC_RELAXED)) && !inst_maybe_in_handler())
        inst_stop();
    if (real) real(status);
    for (;;) syscall(SYS_exit_group, status); /* no C library function found */
}

void _exit(int status) { inst_exit_through(inst_real_exit, status); }
void _Exit(int status) { inst_exit_through(inst_real_Exit, status); }
