/* atf.h - v0.1.0 - ADA Trace Format (ATF v2): write, read and verify function-level traces.
 * SPDX-License-Identifier: MIT
 *
 * CONTENTS. The declarations come first, then the implementation in the same order. Each
 * section's banner ends with its tag (">>producer"): search for the tag to reach both halves
 * of a section, or a subsection; the numbers only give the order. tests/doc_blocks.sh
 * checks that these tags and the banners agree.
 *   1. config           >>config      every compile-time switch (ATF_STATIC, ATF_MALLOC, ...)
 *   2. result           >>result      atf_result codes, atf_result_str(), atf_error
 *   3. platform         >>platform    OS / CPU / compiler detection (ATF__OS_*, ATF__ARCH_*,
 *                                     ATF__CC_*); implementation: memory and string helpers,
 *                                     files mapped or read whole, UTF-8 paths, directories
 *      3.1 OS services          >>services     descriptors (reads, positioned writes),
 *                                              mkdir, rename, locks, threads, the
 *                                              thread-exit hook
 *   4. bytes            >>bytes       little-endian load/store helpers, the only way bytes
 *                                     reach the disk (inline: no implementation half)
 *   5. format           >>format      on-disk records of layouts 1 and 2, side files, UTF-8
 *      5.1 packed index lane    >>packed       layout-1 events in blocks of a few bytes each
 *   6. crc32c           >>crc32c      CRC32-C: SSE4.2 + VPCLMULQDQ (AVX2, AVX-512), ARMv8,
 *                                     software; the register carried over zero bytes
 *   7. clock            >>clock       atf_now_ns(), its clock_type; ticks and their map
 *   8. ring             >>ring        SPSC rings in caller memory, position-independent
 *   9. producer         >>producer    atf_producer, one per thread: a few stores per event,
 *                                     overflow policy
 *  10. session writer   >>session     session directory, drain, file writers, manifest
 *      10.1 file writer         >>filewriter   one output file: header, appends, finalize
 *      10.2 sessions            >>slots        thread slots, the drain, attaching rings
 *      10.3 thread-local producers  >>tls      each thread's producer of each session
 *      10.4 bounds              >>bounds       max size, duration, the disk reserve
 *      10.5 windowed detail     >>windows      what a trigger keeps, the release horizon
 *      10.6 links               >>links        detail record <-> index event
 *      10.7 draining detail records  >>drain   a slot's files opened, detail records
 *                                              staged and written
 *      10.8 gaps and pauses     >>sidefiles    where events were lost (gaps.atf), where the
 *                                              recorder held a thread (pauses.atf)
 *      10.9 index events        >>indexevents  runs appended to index.atf, within the bounds
 *      10.10 flight recorder    >>flightrecorder   keep_last_*: the newest events held,
 *                                              written at a trigger and at the close
 *      10.11 a slot's pass      >>slotpass     stamps converted, rings drained, the slot
 *                                              finalized or retired
 *      10.12 drain passes       >>drainpass    the locks, a pass over every slot, the
 *                                              self-drain under overflow, a slot's figures
 *      10.13 manifest.json      >>manifest     written atomically
 *      10.14 session API: open and close  >>sessionapi   open, close, abandon after fork
 *      10.15 session API: threads  >>attach    attach, detach, pump, trigger
 *      10.16 session API: metadata and figures  >>metadata   modules, symbols, anchors;
 *                                              thread stats, the stop reason
 *  11. readers          >>readers     index, detail and thread readers: O(1), both-way links
 *      11.1 recovery            >>recovery     finalizing in place what a crash left: a
 *                                              file's plan, carried out and reported
 *      11.2 recovery: threads and files  >>recoverfiles   a thread directory, a file
 *                                              alone, an unborn thread directory
 *      11.3 recovered manifest  >>recoveredmanifest   manifest.json of a recovered session
 *      11.4 packing             >>packing      an index file packed or unpacked, in place
 *  12. session reader + merge   >>sessionreader   a pid_* directory, its threads merged
 *      12.1 JSON reader         >>json         the strict reader of manifest.json
 *      12.2 reading manifest.json  >>manifestread   facts, threads, symbols, modules,
 *                                              anchors
 *      12.3 opening a pid_* directory  >>pidopen   manifest joined with a directory scan
 *      12.4 a thread's order    >>order        one pass over its stamps, on first need
 *      12.5 lookups             >>lookups      symbols, anchors, threads, a time in a file
 *      12.6 merge               >>merge        the loser tree over every thread's events
 *  13. ktrace           >>ktrace      Darwin ktrace v3 files (ktrace(5))
 *      generated tables >>tables      (implementation only) the CRC32-C slicing table
 *
 * QUICK START
 *   In exactly one .c file (never in a header):
 *       #define ATF_IMPLEMENTATION
 *       #include "atf.h"
 *   Everywhere else just #include "atf.h".
 *
 *   Record: a session directory under "traces", one thread, a call with a detail payload
 *   (this and the reading below use <stdio.h> and <string.h>).
 *       atf_session *s = NULL;
 *       atf_session_config cfg;
 *       char dir[1024] = "";
 *       memset(&cfg, 0, sizeof cfg);                // zero is the default for every field
 *       cfg.detail_mode = ATF_DETAIL_ALWAYS;        // detail payloads need a detail mode
 *       if (atf_session_open(&s, "traces", &cfg) == ATF_OK) {
 *           atf_producer *w = atf_session_producer(s);  // this thread's; NULL when out of slots
 *           atf_detail_payload p;
 *           uint8_t bytes[ATF_DETAIL_PAYLOAD_SIZE];
 *           memset(&p, 0, sizeof p);
 *           p.function_id = 0x100000002ull;         // (module << 32) | symbol index
 *           p.x[0] = 42;                            // the first argument
 *           size_t len = atf_detail_payload_encode(&p, bytes, sizeof bytes);
 *           if (w) {
 *               atf_producer_call(w, 0x100000001ull, atf_now_ns());
 *               atf_producer_event_detail(w, ATF_EVENT_CALL, p.function_id, atf_now_ns(),
 *                                       ATF_DETAIL_FUNCTION_CALL, bytes, len);
 *               atf_producer_return(w, p.function_id, atf_now_ns());
 *               atf_producer_return(w, 0x100000001ull, atf_now_ns());
 *           }
 *           snprintf(dir, sizeof dir, "%s", atf_session_path(s)); // traces/session_.../pid_N
 *           atf_session_close(s);                   // drains, finalizes, writes manifest.json
 *       }
 *
 *   Read back: every thread's events merged in time order, with their detail.
 *       atf_session_reader r;
 *       if (atf_session_reader_open(&r, dir, NULL) == ATF_OK) {
 *           atf_merge m;
 *           atf_merge_item it;
 *           atf_detail_event d;
 *           atf_merge_init(&m, &r, NULL);
 *           while (atf_merge_next(&m, &it) == ATF_OK) {
 *               printf("thread %u kind %u function 0x%llx\n", it.slot, it.event.kind,
 *                      (unsigned long long)it.event.function_id);
 *               if (atf_thread_reader_detail_of(&it.thread->reader, it.seq, &d) == ATF_OK)
 *                   printf("  detail: %u bytes\n", d.payload_len);
 *           }
 *           atf_merge_deinit(&m);
 *           atf_session_reader_close(&r);
 *       }
 *
 * LICENSE: MIT, see the end of this file.
 */
#ifndef ATF_H_INCLUDED
#define ATF_H_INCLUDED

/* The implementation uses POSIX and GNU services (pread, ftruncate, fdatasync, gettid)
 * that strict -std=c99 hides unless a feature macro asks for them. The macro only counts
 * before the first system header: include atf.h first in the file that defines
 * ATF_IMPLEMENTATION, or define _GNU_SOURCE yourself. */
#if defined(ATF_IMPLEMENTATION) && !defined(_WIN32) && !defined(_GNU_SOURCE) && \
    !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE)
#  define _GNU_SOURCE 1
#endif

#define ATF_VERSION_MAJOR 0
#define ATF_VERSION_MINOR 1
#define ATF_VERSION_PATCH 0

/* ==== 1. config ================================================================== >>config */
/* Every switch atf.h reads. Define one before including atf.h (the same way in every
 * file that includes it); those with a value get their default here.
 *
 * ATF_IMPLEMENTATION  in exactly one .c file: compiles the implementation there
 *                     (default: declarations only).
 * ATF_STATIC          every function static, for a private copy in one translation unit
 *                     (default: off).
 * ATFDEF              storage class of every public function (default: extern; static
 *                     under ATF_STATIC).
 * ATF_MALLOC(size), ATF_REALLOC(ptr, size), ATF_FREE(ptr)
 *                     the allocator: all three or none (default: malloc, realloc, free).
 * ATF_ASSERT(cond)    contract checks on the caller's arguments (default: assert(cond)).
 * ATF_NO_THREADS      no threads: no drain thread (drain_mode ATF_DRAIN_MANUAL only),
 *                     locks become no-ops (default: off).
 * ATF_NO_HW_CRC       compiles out the hardware CRC32-C paths (default: off).
 * ATF_CRC32C_FORCE_SW starts CRC32-C on the software path, as atf_crc32c_select(
 *                     ATF_CRC32C_SW) would (default: off; the fastest path this CPU has).
 * ATF_NO_INSTRUMENT   the attribute put on every function an instrumentation hook can
 *                     reach (default: no_instrument_function on gcc and clang, else empty).
 * ATF__MERGE_AHEAD, ATF__MERGE_KEY_AHEAD
 *                     private: how far ahead the merge prefetches, in bytes, within a
 *                     thread's run and for its next key (default: 4096 and 256).
 * Defined by atf.h for the program to test (never define them yourself):
 * ATF_VERSION_MAJOR/MINOR/PATCH, ATF_TICKS_ARE_NS (1 where atf_ticks() is atf_now_ns()). */
#ifndef ATFDEF
#  if defined(ATF_STATIC) && (defined(__GNUC__) || defined(__clang__))
#    define ATFDEF static __attribute__((unused))
#  elif defined(ATF_STATIC)
#    define ATFDEF static
#  else
#    define ATFDEF extern
#  endif
#endif

#if defined(ATF_MALLOC) || defined(ATF_REALLOC) || defined(ATF_FREE)
#  if !defined(ATF_MALLOC) || !defined(ATF_REALLOC) || !defined(ATF_FREE)
#    error "atf.h: define all of ATF_MALLOC, ATF_REALLOC and ATF_FREE, or none"
#  endif
#else /* the implementation includes <stdlib.h> */
#  define ATF_MALLOC(size) malloc(size)
#  define ATF_REALLOC(ptr, size) realloc(ptr, size)
#  define ATF_FREE(ptr) free(ptr)
#endif

#ifndef ATF_ASSERT /* the implementation includes <assert.h> */
#  define ATF_ASSERT(cond) assert(cond)
#endif

#ifndef ATF_NO_INSTRUMENT
#  if defined(__GNUC__) || defined(__clang__)
#    define ATF_NO_INSTRUMENT __attribute__((no_instrument_function))
#  else
#    define ATF_NO_INSTRUMENT
#  endif
#endif

#ifndef ATF__MERGE_AHEAD
#  define ATF__MERGE_AHEAD 4096
#endif
#ifndef ATF__MERGE_KEY_AHEAD
#  define ATF__MERGE_KEY_AHEAD 256
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 2. result ================================================================== >>result */
/* One list generates the enum and atf_result_str(). Codes are stable: never renumber. */
#define ATF_RESULT_LIST(X) \
    X(ATF_OK,            0, "ok") \
    X(ATF_E_ARG,        -1, "invalid argument") \
    X(ATF_E_NOMEM,      -2, "out of memory") \
    X(ATF_E_IO,         -3, "I/O error") \
    X(ATF_E_NOT_FOUND,  -4, "file or directory not found") \
    X(ATF_E_MAGIC,      -5, "bad magic: not an ATF file of this kind") \
    X(ATF_E_ENDIAN,     -6, "big-endian file (only little-endian is defined)") \
    X(ATF_E_VERSION,    -7, "unsupported format version") \
    X(ATF_E_TRUNCATED,  -8, "file too short for what its header says") \
    X(ATF_E_CORRUPT,    -9, "corrupt data") \
    X(ATF_E_CRC,       -10, "CRC32-C mismatch") \
    X(ATF_E_FULL,      -11, "ring full, event dropped") \
    X(ATF_E_RANGE,     -12, "sequence number out of range") \
    X(ATF_E_NO_DETAIL, -13, "no detail record for this event") \
    X(ATF_E_UNSUPPORTED,-14, "not supported on this platform or build") \
    X(ATF_E_STATE,     -15, "call not valid in the object's current state") \
    X(ATF_E_DETAIL_OFF,-16, "detail recording is off for this writer (see detail_mode)")

typedef enum atf_result {
#define ATF__RESULT_ENUM(name, value, text) name = value,
    ATF_RESULT_LIST(ATF__RESULT_ENUM)
#undef ATF__RESULT_ENUM
    ATF__RESULT_END = 1
} atf_result;

/* Human-readable text for a result code; never NULL. Thread-safe. */
ATFDEF const char *atf_result_str(atf_result r);
/* The code's name ("ATF_E_CRC"); never NULL. Thread-safe. */
ATFDEF const char *atf_result_name(atf_result r);

/* The first error an object met, with what a person needs to find it. Later errors never
 * overwrite it. `expected`/`found` are meaningful when has_values is set. */
typedef struct atf_error {
    atf_result code;        /* ATF_OK while nothing went wrong */
    char path[512];         /* file concerned, "" when none */
    uint64_t offset;        /* byte offset in that file */
    uint64_t expected;
    uint64_t found;
    int has_values;         /* expected/found are set */
    int sys_errno;          /* errno (or GetLastError) for I/O failures, else 0 */
    const char *what;       /* static text: which check failed */
} atf_error;

/* Formats `e` as one line "path: offset N: what (expected X, found Y): result text".
 * buf is always NUL-terminated when cap > 0. Returns buf. Thread-safe. */
ATFDEF char *atf_error_format(const atf_error *e, char *buf, size_t cap);

/* ==== 3. platform ============================================================== >>platform */
#if defined(_WIN32)
#  define ATF__OS_WINDOWS 1
#elif defined(__APPLE__)
#  define ATF__OS_APPLE 1
#elif defined(__linux__)
#  define ATF__OS_LINUX 1
#  if defined(__ANDROID__)
#    define ATF__OS_ANDROID 1
#  endif
#else
#  define ATF__OS_POSIX_OTHER 1
#endif

#if defined(__x86_64__) || defined(_M_X64)
#  define ATF__ARCH_X64 1
#elif defined(__aarch64__) || defined(_M_ARM64)
#  define ATF__ARCH_ARM64 1
#else
#  define ATF__ARCH_OTHER 1
#endif

#if defined(__clang__)
#  define ATF__CC_CLANG 1
#elif defined(__GNUC__)
#  define ATF__CC_GCC 1
#elif defined(_MSC_VER)
#  define ATF__CC_MSVC 1
#endif

/* ==== 4. bytes ==================================================================== >>bytes */
/* Every on-disk integer goes through these, whatever the host's byte order. Byte-wise
 * shifts compile to single loads/stores on little-endian hosts and to correct swaps on
 * big-endian ones, with no alignment or aliasing assumptions. Inline because the
 * producer's hot path encodes records with them. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#  define ATF__INLINE static inline ATF_NO_INSTRUMENT
#else
#  define ATF__INLINE static __inline ATF_NO_INSTRUMENT
#endif
/* For the few hot paths a caller runs per event (the producer's push, atf_merge_next):
 * inlined even in a large translation unit where the compiler's own estimate would keep
 * one out-of-line copy and pay a call per event (measured: twice the merge's cost). */
#if defined(__GNUC__) || defined(__clang__)
#  define ATF__HOT_INLINE ATF__INLINE __attribute__((always_inline))
#elif defined(_MSC_VER)
#  define ATF__HOT_INLINE static __forceinline ATF_NO_INSTRUMENT
#else
#  define ATF__HOT_INLINE ATF__INLINE
#endif

ATF__INLINE uint16_t atf__load_le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
ATF__INLINE uint32_t atf__load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
ATF__INLINE uint64_t atf__load_le64(const uint8_t *p) {
    return (uint64_t)atf__load_le32(p) | ((uint64_t)atf__load_le32(p + 4) << 32);
}
ATF__INLINE void atf__store_le16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
ATF__INLINE void atf__store_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
ATF__INLINE void atf__store_le64(uint8_t *p, uint64_t v) {
    atf__store_le32(p, (uint32_t)v);
    atf__store_le32(p + 4, (uint32_t)(v >> 32));
}

/* ==== 5. format ================================================================== >>format */
/* Both layouts share the 64-byte headers and footers and differ in a few fields; see
 * docs/FORMAT.md. In memory every record is one struct for both layouts, widened to the
 * larger type; decode fills what the layout has and zeroes the rest. */
#define ATF_LAYOUT_1 1                 /* version byte 1: the deployed layout (default) */
#define ATF_LAYOUT_2 2                 /* version byte 2: atf-format-spec.txt */

#define ATF_HEADER_SIZE 64u
#define ATF_FOOTER_SIZE 64u
#define ATF_INDEX_EVENT_SIZE 32u
#define ATF_DETAIL_EVENT_HEADER_SIZE 24u
#define ATF_DETAIL_PAYLOAD_SIZE 100u   /* function payload before the stack bytes */
#define ATF_DETAIL_STACK_MAX 256u

#define ATF_INDEX_MAGIC "ATI2"
#define ATF_INDEX_FOOTER_MAGIC "2ITA"
#define ATF_DETAIL_MAGIC "ATD2"
#define ATF_DETAIL_FOOTER_MAGIC "2DTA"
#define ATF_ENDIAN_LITTLE 1u

#define ATF_NO_DETAIL UINT64_MAX        /* detail_seq of an event without detail */
#define ATF_NO_DETAIL_U32 0xFFFFFFFFu   /* the same on disk in layout 1 */
#define ATF_INDEX_FLAG_HAS_DETAIL_FILE 1u

enum { ATF_EVENT_CALL = 1, ATF_EVENT_RETURN = 2, ATF_EVENT_EXCEPTION = 3 };
enum { ATF_DETAIL_FUNCTION_CALL = 3, ATF_DETAIL_FUNCTION_RETURN = 4 };
enum { ATF_ARCH_UNKNOWN = 0, ATF_ARCH_X86_64 = 1, ATF_ARCH_ARM64 = 2 };
enum { ATF_OS_UNKNOWN = 0, ATF_OS_IOS = 1, ATF_OS_ANDROID = 2, ATF_OS_MACOS = 3,
       ATF_OS_LINUX = 4, ATF_OS_WINDOWS = 5 };
enum { ATF_CLOCK_UNKNOWN = 0, ATF_CLOCK_MACH_CONTINUOUS = 1, ATF_CLOCK_QPC = 2,
       ATF_CLOCK_BOOTTIME = 3 };

typedef struct atf_index_header {
    uint8_t endian;          /* ATF_ENDIAN_LITTLE */
    uint8_t version;         /* ATF_LAYOUT_1 or ATF_LAYOUT_2 */
    uint8_t arch, os;        /* ATF_ARCH_*, ATF_OS_* */
    uint32_t flags;          /* ATF_INDEX_FLAG_* */
    uint32_t thread_id;      /* OS thread id */
    uint8_t clock_type;      /* ATF_CLOCK_* */
    uint32_t event_size;     /* 32 */
    uint64_t event_count;    /* u32 on disk in layout 1 (saturated), u64 in layout 2 */
    uint64_t events_offset;  /* normally 64 */
    uint64_t footer_offset;  /* 0 while the header is the placeholder */
    uint64_t time_start_ns, time_end_ns;
} atf_index_header;

typedef struct atf_index_event {
    uint64_t timestamp_ns;
    uint64_t function_id;    /* (module_id << 32) | symbol_index */
    uint64_t detail_seq;     /* ATF_NO_DETAIL when none (layout 1: u32, widened) */
    uint32_t thread_id;      /* layout 1 only; 0 in layout 2 */
    uint32_t call_depth;     /* layout 1 only; 0 in layout 2 */
    uint32_t kind;           /* ATF_EVENT_*; u32 in layout 1, u8 in layout 2 */
} atf_index_event;

typedef struct atf_index_footer {
    uint32_t checksum;       /* CRC32-C of the events section; 0 = not computed */
    uint64_t event_count;    /* authoritative */
    uint64_t time_start_ns, time_end_ns;
    uint64_t bytes_written;  /* event_count * 32 */
} atf_index_footer;

typedef struct atf_detail_header {
    uint8_t endian, version, arch, os;
    uint32_t flags;
    uint32_t thread_id;
    uint64_t events_offset;  /* normally 64 */
    uint64_t event_count;    /* 0 while the header is the placeholder */
    uint64_t bytes_length;   /* bytes in the events section */
    uint64_t index_seq_start, index_seq_end;
} atf_detail_header;

typedef struct atf_detail_event_header {
    uint32_t total_length;   /* header + payload, >= 24 */
    uint16_t type;           /* ATF_DETAIL_FUNCTION_* or a user type */
    uint16_t flags;
    uint64_t index_seq;      /* backward link; u32 on disk in layout 1 */
    uint32_t thread_id;      /* layout 1 only; 0 in layout 2 */
    uint64_t timestamp_ns;
} atf_detail_event_header;

typedef struct atf_detail_footer {
    uint32_t checksum;       /* CRC32-C of the events section; 0 = not computed */
    uint64_t event_count;
    uint64_t bytes_length;
    uint64_t time_start_ns, time_end_ns;
} atf_detail_footer;

/* The function payload of a detail record (registers and a stack window). */
typedef struct atf_detail_payload {
    uint64_t function_id;
    uint64_t x[8];           /* x0-x7: arguments on call, return values on return */
    uint64_t lr, fp, sp;
    uint16_t stack_size;     /* bytes of stack that follow, 0..ATF_DETAIL_STACK_MAX */
    const uint8_t *stack;    /* decode: points into the input; encode: source bytes */
} atf_detail_payload;

/* Encoders write exactly the record's size into `out`, all multi-byte fields
 * little-endian, reserved bytes zero. `layout` is ATF_LAYOUT_1 or ATF_LAYOUT_2 (headers
 * carry it in their version field). Encoders of fields narrower on disk than in memory
 * store the low bits (event_count saturates at UINT32_MAX in the layout-1 index header;
 * ATF_NO_DETAIL maps to ATF_NO_DETAIL_U32). Thread-safe. */
ATFDEF void atf_index_header_encode(const atf_index_header *h, uint8_t out[64]);
ATFDEF void atf_index_event_encode(int layout, const atf_index_event *e, uint8_t out[32]);
ATFDEF void atf_index_footer_encode(const atf_index_footer *f, uint8_t out[64]);
ATFDEF void atf_detail_header_encode(const atf_detail_header *h, uint8_t out[64]);
ATFDEF void atf_detail_event_header_encode(int layout, const atf_detail_event_header *e,
                                           uint8_t out[24]);
ATFDEF void atf_detail_footer_encode(const atf_detail_footer *f, uint8_t out[64]);
/* Writes ATF_DETAIL_PAYLOAD_SIZE + p->stack_size bytes; returns that size. */
ATFDEF size_t atf_detail_payload_encode(const atf_detail_payload *p, uint8_t *out, size_t cap);

/* Decoders read a record from `in` (which holds at least the record's size).
 * Header decoders check magic (ATF_E_MAGIC), endian (ATF_E_ENDIAN) and version
 * (ATF_E_VERSION: index 1, 2 or 3 = packed, detail 1 or 2), in that order, and fill *h even when they fail on version.
 * Footer decoders check the magic only. Event decoders never fail. Thread-safe. */
ATFDEF atf_result atf_index_header_decode(const uint8_t in[64], atf_index_header *h);
ATFDEF void atf_index_event_decode(int layout, const uint8_t in[32], atf_index_event *e);
ATFDEF atf_result atf_index_footer_decode(const uint8_t in[64], atf_index_footer *f);
ATFDEF atf_result atf_detail_header_decode(const uint8_t in[64], atf_detail_header *h);
ATFDEF void atf_detail_event_header_decode(int layout, const uint8_t in[24],
                                           atf_detail_event_header *e);
ATFDEF atf_result atf_detail_footer_decode(const uint8_t in[64], atf_detail_footer *f);
/* Decodes a payload of `len` bytes: ATF_E_TRUNCATED when len < 100 or the stack bytes it
 * announces are not all there; p->stack points into `in`. */
ATFDEF atf_result atf_detail_payload_decode(const uint8_t *in, size_t len,
                                            atf_detail_payload *p);

/* gaps.atf, beside index.atf: where the recorder lost index events, so that readers
 * never pair a call and a return across a hole. A 16-byte header ("ATG2", endian 1,
 * version 1, u16 record size 32, u32 thread id, 4 reserved bytes), then 32-byte records
 * in index_seq order, appended by the drain before the events that follow each gap: u64
 * index_seq, u64 index_lost, u32 detail_lost (saturated), u32 reason, u64 first_lost_ns.
 * A torn last record is ignored. Present only when the thread lost events. */
#define ATF_GAPS_MAGIC "ATG2"
#define ATF_GAPS_VERSION 1u
#define ATF_GAPS_HEADER_SIZE 16u
#define ATF_GAP_RECORD_SIZE 32u
enum { ATF_GAP_DROPPED = 1,      /* ring full, ATF_OVERFLOW_DROP */
       ATF_GAP_TIMEOUT = 2,      /* ring full, BLOCK gave up on a silent consumer */
       ATF_GAP_IO = 3,           /* drained, but index.atf could not take them */
       ATF_GAP_STOPPED = 4,      /* discarded by choice: a bound of the session stopped
                                    recording (atf_session_config's max_bytes,
                                    max_duration_ns, disk_reserve) */
       ATF_GAP_SKIPPED = 5,      /* not recorded by choice: recording was off
                                    (atf_producer_skipped) */
       ATF_GAP_DISCARDED = 6 };  /* recorded, then discarded by choice: the flight recorder
                                    (atf_session_config's keep_last_*) kept later ones */

typedef struct atf_gap {
    uint64_t index_seq;      /* position in index.atf of the first event after the gap
                                (the event count for a gap at the end) */
    uint64_t index_lost;     /* index events lost there */
    uint64_t detail_lost;    /* detail records lost with them */
    uint64_t first_lost_ns;  /* stamp of the first lost event; 0 when unknown */
    uint32_t reason;         /* ATF_GAP_* */
} atf_gap;

ATFDEF void atf_gaps_header_encode(uint32_t thread_id, uint8_t out[16]);
/* ATF_E_MAGIC, ATF_E_ENDIAN, ATF_E_VERSION or ATF_E_CORRUPT (record size not 32). */
ATFDEF atf_result atf_gaps_header_decode(const uint8_t in[16], uint32_t *thread_id);
ATFDEF void atf_gap_encode(const atf_gap *g, uint8_t out[32]);
ATFDEF void atf_gap_decode(const uint8_t in[32], atf_gap *g);
/* "dropped", "timeout", "io", "stopped", "skipped", "discarded"; "unknown" otherwise. */
ATFDEF const char *atf_gap_reason_str(uint32_t reason);

/* pauses.atf, beside index.atf: the intervals in which the recorder itself held the
 * thread (it wrote its own full ring to its files), so that readers never charge that time
 * to the program's functions. The same shape as gaps.atf: a 16-byte header ("ATP2",
 * endian 1, version 1, u16 record size 32, u32 thread id, 4 reserved bytes), then 32-byte
 * records in index_seq order: u64 index_seq, u64 start_ns, u64 end_ns, u32 reason, 4
 * reserved bytes. A torn last record is ignored. Present only when the thread paused. The
 * original readers never open it. */
#define ATF_PAUSES_MAGIC "ATP2"
#define ATF_PAUSES_VERSION 1u
#define ATF_PAUSES_HEADER_SIZE 16u
#define ATF_PAUSE_RECORD_SIZE 32u
enum { ATF_PAUSE_SELF_DRAIN = 1 }; /* ring full, ATF_OVERFLOW_BLOCK: the thread wrote it out */

typedef struct atf_pause {
    uint64_t index_seq;      /* index events the thread had recorded when the pause ended
                                (the one whose push paused included): the pause lies
                                between events index_seq - 1 and index_seq */
    uint64_t start_ns, end_ns; /* trace clock; start_ns <= end_ns */
    uint32_t reason;         /* ATF_PAUSE_* */
} atf_pause;

ATFDEF void atf_pauses_header_encode(uint32_t thread_id, uint8_t out[16]);
/* ATF_E_MAGIC, ATF_E_ENDIAN, ATF_E_VERSION or ATF_E_CORRUPT (record size not 32). */
ATFDEF atf_result atf_pauses_header_decode(const uint8_t in[16], uint32_t *thread_id);
ATFDEF void atf_pause_encode(const atf_pause *p, uint8_t out[32]);
ATFDEF void atf_pause_decode(const uint8_t in[32], atf_pause *p);
/* "self-drain"; "unknown" otherwise. */
ATFDEF const char *atf_pause_reason_str(uint32_t reason);

/* Text in names and the manifest is UTF-8: the length (1 to 4) of the well-formed
 * sequence (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF) that starts
 * at s, which has n > 0 bytes, else 0. Reads a byte only while those before it are valid,
 * so a NUL-terminated string may be given any n up to 4. */
ATFDEF size_t atf_utf8_sequence(const void *s, size_t n);

/* Names for printing ("call", "x86_64", "linux", "boottime"); "unknown" otherwise. */
ATFDEF const char *atf_event_kind_str(uint32_t kind);
ATFDEF const char *atf_arch_str(uint32_t arch);
ATFDEF const char *atf_os_str(uint32_t os);
ATFDEF const char *atf_clock_str(uint32_t clock_type);

/* ---- 5.1 packed index lane ----------------------------------------------------- >>packed */
/* Layout "packed" (version byte 3, index files only) holds the events of a layout-1 index
 * file in about a tenth of the bytes, losslessly: a packed file unpacks to its layout-1
 * file byte for byte. The 64-byte header and footer are those of layout 1 except the
 * version byte (3) and footer_offset; the footer's checksum, counts and bytes_written are
 * the layout-1 file's, so they check the unpacked events end to end. Between them:
 *   events_offset   16-byte lane header: "ATK1", u32 block_events (1 to 65536),
 *                   8 reserved bytes
 *   then blocks     each a 16-byte block header (u32 events, 1 to block_events and
 *                   block_events in every block but the last; u32 payload bytes; u32
 *                   CRC32-C of the payload; 4 reserved bytes) and its payload
 *   then the table  u64 file offset of each block, ceil(event_count / block_events) of
 *                   them, ending at footer_offset: event i is in block i / block_events
 * Each block is self-contained: its first event is coded against a fresh state, so any
 * block decodes alone. An event is a tag byte and LEB128 varints, each field coded against
 * what the previous events predict (docs/FORMAT.md has the table): a return costs about
 * two bytes, a call two to four. Readers find the blocks at open (headers and CRCs) and
 * decode each into layout-1 records when an event of it is read, keeping a few: every
 * reader function works as on layout 1, in memory of a few blocks whatever the size.
 * A crash leaves whole blocks and at most one torn block, which readers and recovery cut. */
#define ATF_LAYOUT_PACKED 3              /* version byte 3: a packed layout-1 index file */
#define ATF_PACKED_LANE_MAGIC "ATK1"
#define ATF_PACKED_LANE_SIZE 16u
#define ATF_PACKED_BLOCK_HEADER_SIZE 16u
#define ATF_PACKED_BLOCK_EVENTS 1024u    /* events per block written by this library */
#define ATF_PACKED_BLOCK_EVENTS_MAX 65536u
#define ATF_PACKED_EVENT_MAX 41u         /* payload bytes of one event at worst */

/* Codes `count` layout-1 records (32 bytes each, at `events`) as one block's payload into
 * `out`, which holds count * ATF_PACKED_EVENT_MAX bytes (all of it may be written to,
 * past the payload's end too); `thread_id` is the file header's. Returns the payload's
 * length. Thread-safe. */
ATFDEF size_t atf_packed_encode(const uint8_t *events, size_t count, uint32_t thread_id,
                                uint8_t *out);
/* Decodes a payload of `len` bytes holding exactly `count` events into count layout-1
 * records at `events`: ATF_E_CORRUPT when it does not (a bad tag, a varint that runs past
 * the payload or its field, bytes left over). Thread-safe. */
ATFDEF atf_result atf_packed_decode(const uint8_t *in, size_t len, size_t count,
                                    uint32_t thread_id, uint8_t *events);

/* ==== 6. crc32c ================================================================== >>crc32c */
/* CRC32-C (Castagnoli, reflected polynomial 0x82F63B78), the check value of ATF footers.
 * Incremental: crc = 0; crc = atf_crc32c_update(crc, a, na); crc = atf_crc32c_update(crc,
 * b, nb); gives the CRC of a||b (the pre/post inversion is inside). */
typedef enum atf_crc32c_impl {
    ATF_CRC32C_AUTO = 0,     /* best available: chosen once, on first use */
    ATF_CRC32C_SW = 1,       /* portable slicing-by-16 tables */
    ATF_CRC32C_SSE42 = 2,    /* x86-64 crc32 instruction, 3 streams + PCLMULQDQ merge; */
                             /* long buffers: the widest VPCLMULQDQ folding the CPU has */
    ATF_CRC32C_ARMV8 = 3,    /* arm64 crc32c instructions */
    /* SSE42 held to one folding width from 256 bytes, to test or time it (AUTO never
     * picks these; SSE42 uses them by itself): */
    ATF_CRC32C_AVX2 = 4,     /* 256-bit registers: AVX2 + VPCLMULQDQ */
    ATF_CRC32C_AVX512 = 5    /* 512-bit registers: AVX-512F + VPCLMULQDQ */
} atf_crc32c_impl;

/* Continues `crc` over len bytes of buf (buf may be NULL when len is 0). Thread-safe. */
ATFDEF uint32_t atf_crc32c_update(uint32_t crc, const void *buf, size_t len);
/* CRC32-C of one buffer: atf_crc32c_update(0, buf, len). Thread-safe. */
ATFDEF uint32_t atf_crc32c(const void *buf, size_t len);
/* The same through one named implementation; returns 0 with *ok = 0 when this CPU or
 * build lacks it (ok may be NULL). For tests and benchmarks. Thread-safe. */
ATFDEF uint32_t atf_crc32c_update_with(atf_crc32c_impl impl, uint32_t crc, const void *buf,
                                       size_t len, int *ok);
/* Whether `impl` can run here (AUTO and SW always can). Thread-safe. */
ATFDEF int atf_crc32c_available(atf_crc32c_impl impl);
/* Chooses what atf_crc32c_update uses: AUTO (the default) or a specific path; returns
 * ATF_E_UNSUPPORTED when unavailable. Defining ATF_CRC32C_FORCE_SW at build time has the
 * effect of atf_crc32c_select(ATF_CRC32C_SW). Call before threads use CRC. */
ATFDEF atf_result atf_crc32c_select(atf_crc32c_impl impl);
/* The implementation atf_crc32c_update uses now (never AUTO). Thread-safe. */
ATFDEF atf_crc32c_impl atf_crc32c_active(void);
/* "auto", "sw", "sse42", "armv8", "avx2", "avx512"; "unknown" otherwise. */
ATFDEF const char *atf_crc32c_impl_str(atf_crc32c_impl impl);

/* ==== 7. clock ==================================================================== >>clock */
/* The trace clock: the platform's continuous clock (it keeps counting through sleep),
 * in nanoseconds. Linux/Android: CLOCK_BOOTTIME (clock_type 3); Apple:
 * mach_continuous_time (1); Windows: QueryPerformanceCounter (2). */

/* Nanoseconds on the trace clock. Thread-safe, wait-free, never fails. */
ATFDEF uint64_t atf_now_ns(void);
/* The ATF_CLOCK_* value of atf_now_ns() on this platform. Thread-safe. */
ATFDEF uint32_t atf_clock_type(void);
/* Wall-clock time (UTC) in nanoseconds since 1970, for timing anchors. Thread-safe. */
ATFDEF uint64_t atf_wall_ns(void);

/* Ticks: the cheapest time stamp there is, for the producer's hot path in a session with
 * stamp_clock ATF_STAMP_TICKS (>>session), whose drain converts them to the trace clock.
 * x86-64: the time-stamp counter (rdtsc); arm64: the virtual counter (cntvct_el0);
 * elsewhere atf_now_ns() itself, and ATF_TICKS_ARE_NS is 1. The rate is the hardware's
 * and is never needed: the drain calibrates against atf_now_ns(). Not ordered against
 * the instructions around it. Thread-safe, wait-free, never fails. */
#if defined(ATF__ARCH_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
#  define ATF_TICKS_ARE_NS 0
ATF__INLINE uint64_t atf_ticks(void) { return (uint64_t)__builtin_ia32_rdtsc(); }
#elif defined(ATF__ARCH_ARM64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
#  define ATF_TICKS_ARE_NS 0
ATF__INLINE uint64_t atf_ticks(void) {
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
#elif defined(ATF__CC_MSVC) && (defined(ATF__ARCH_X64) || defined(ATF__ARCH_ARM64))
#  include <intrin.h>
#  define ATF_TICKS_ARE_NS 0
#  if defined(ATF__ARCH_X64)
ATF__INLINE uint64_t atf_ticks(void) { return (uint64_t)__rdtsc(); }
#  else
ATF__INLINE uint64_t atf_ticks(void) { return (uint64_t)_ReadStatusReg(0x5F02); /* CNTVCT_EL0 */ }
#  endif
#else
#  define ATF_TICKS_ARE_NS 1
ATF__INLINE uint64_t atf_ticks(void) { return atf_now_ns(); }
#endif

/* ==== 8. ring ====================================================================== >>ring */
/* Single-producer single-consumer rings. The producer is the traced thread, the consumer
 * the drain. Ring memory holds only offsets and counters (no pointers), so it can live in
 * caller-supplied memory such as a MAP_SHARED mapping and be drained from another process.
 *
 *   index ring:  2^k fixed 32-byte slots holding index events already in on-disk form;
 *   detail ring: 2^k bytes of variable-length entries: an 8-byte entry header
 *                (u32 entry length, u32 flags: 1 = filler up to the end of the ring,
 *                2 = unlinked: windowed detail whose index event the drain links), then
 *                the on-disk detail record, padded to 8 bytes. An entry never wraps.
 *
 * Positions (head, tail) count records (index) or bytes (detail) since the start and never
 * wrap; the producer publishes head with a release store, the consumer publishes tail the
 * same way, and each side caches the other's value and rereads it only when the cache says
 * full/empty, so the cache line moves only when it must. */
#define ATF_RING_MAGIC 0x52465441u   /* "ATFR" */
enum { ATF_RING_INDEX = 1, ATF_RING_DETAIL = 2 };

/* Where the producer lost index events: `index_lost` events (and `detail_lost` detail
 * records that went with them) right before the event numbered `seq`. The producer
 * publishes a gap record just before that event, so the consumer sees every gap before
 * the first event after it; a gap still open when the producer closes is what the
 * header's totals hold beyond the published records. A consumer of its own (not a
 * session's drain) takes gap records too (advancing gap_tail), or a producer that drops
 * finds the queue full and drops every later event. */
typedef struct atf_ring_gap {
    uint64_t seq;                /* index_seq of the first event after the gap */
    uint64_t index_lost;
    uint32_t detail_lost;        /* saturated */
    uint32_t reason;             /* ATF_GAP_DROPPED, ATF_GAP_TIMEOUT or ATF_GAP_SKIPPED */
    uint64_t first_lost_ns;      /* stamp of the first lost event (producer clock) */
} atf_ring_gap;
#define ATF_RING_GAPS 8

/* The shared part of a ring, at the start of its memory (576 bytes); data follows at
 * data_offset. Producer-written and consumer-written words sit on separate cache lines. */
typedef struct atf_ring_header {
    uint32_t magic;              /* ATF_RING_MAGIC once initialized (release-stored last) */
    uint32_t kind;               /* ATF_RING_INDEX or ATF_RING_DETAIL */
    uint64_t capacity;           /* slots (index) or bytes (detail), a power of two */
    uint64_t data_offset;        /* from the start of this header */
    uint32_t layout;             /* on-disk layout of the records inside */
    uint32_t thread_id;          /* OS thread id of the producer */
    uint8_t pad0[64 - 32];
    uint64_t head;               /* producer position (release-stored) */
    uint8_t pad1[56];
    uint64_t tail;               /* consumer position (release-stored) */
    uint8_t pad2[56];
    uint64_t dropped;            /* events the producer dropped (index ring: whole events) */
    uint64_t closed;             /* producer done: no more events will come */
    uint64_t gap_head;           /* index ring: gap records published (release-stored) */
    uint64_t gap_detail_lost;    /* index ring: detail records lost with dropped events */
    uint64_t gap_first_ns;       /* index ring: stamp of the first event of the open gap */
    uint64_t waits;              /* times the producer found the ring full and waited or
                                    drained it itself (ATF_OVERFLOW_BLOCK) */
    uint64_t timeouts;           /* times it gave up waiting for a silent drainer */
    uint32_t gap_reason;         /* index ring: ATF_GAP_* of the open gap */
    uint32_t pad3;
    uint64_t gap_tail;           /* gap records consumed (consumer, release-stored) */
    uint8_t pad4[56];
    atf_ring_gap gaps[ATF_RING_GAPS]; /* index ring: a small SPSC queue of gap records */
} atf_ring_header;

/* A process-local view of a ring: pointers into the ring memory plus cached positions. */
typedef struct atf_ring {
    atf_ring_header *shared;
    uint8_t *data;
    uint64_t mask;               /* capacity - 1 */
    uint64_t pos;                /* own position: head (producer) or tail (consumer) */
    uint64_t other;              /* cached position of the other side */
} atf_ring;

/* Bytes of memory a ring of `capacity` slots (index) or bytes (detail) needs; capacity is
 * rounded up to a power of two (index >= 64 slots, detail >= 4 KiB, both <= 2^40).
 * 0 for a bad kind or a capacity above the limit. Thread-safe. */
ATFDEF size_t atf_ring_memory_size(uint32_t kind, uint64_t capacity);
/* Formats `mem` (size bytes, 64-byte aligned) as an empty ring whose records use `layout`
 * (0 = ATF_LAYOUT_1) and carry `thread_id`. ATF_E_ARG when mem is misaligned or too small
 * or an argument is out of range. Not thread-safe: call before either side attaches. */
ATFDEF atf_result atf_ring_init(void *mem, size_t size, uint32_t kind, uint64_t capacity,
                                uint32_t layout, uint32_t thread_id);
/* Builds a local view of an initialized ring (as producer or consumer) after validating
 * its header against `size`: ATF_E_ARG (NULL or smaller than a header), ATF_E_MAGIC (not
 * initialized), ATF_E_CORRUPT (kind, capacity, offsets, layout or positions impossible).
 * Thread-safe with respect to the other side. */
ATFDEF atf_result atf_ring_attach(atf_ring *r, void *mem, size_t size, int as_producer);

/* Private atomics for the hot path (release/acquire on ring positions and the magic). */
#if defined(ATF__CC_MSVC)
#  include <intrin.h>
ATF__INLINE uint64_t atf__load_acquire_u64(const uint64_t *p) {
#  if defined(ATF__ARCH_ARM64)
    return __ldar64((unsigned __int64 volatile *)p);
#  else
    uint64_t v = *(const volatile uint64_t *)p;
    _ReadWriteBarrier();
    return v;
#  endif
}
ATF__INLINE void atf__store_release_u64(uint64_t *p, uint64_t v) {
#  if defined(ATF__ARCH_ARM64)
    __stlr64((unsigned __int64 volatile *)p, v);
#  else
    _ReadWriteBarrier();
    *(volatile uint64_t *)p = v;
#  endif
}
ATF__INLINE uint32_t atf__load_acquire_u32(const uint32_t *p) {
#  if defined(ATF__ARCH_ARM64)
    return __ldar32((unsigned __int32 volatile *)p);
#  else
    uint32_t v = *(const volatile uint32_t *)p;
    _ReadWriteBarrier();
    return v;
#  endif
}
ATF__INLINE void atf__store_release_u32(uint32_t *p, uint32_t v) {
#  if defined(ATF__ARCH_ARM64)
    __stlr32((unsigned __int32 volatile *)p, v);
#  else
    _ReadWriteBarrier();
    *(volatile uint32_t *)p = v;
#  endif
}
#else
ATF__INLINE uint64_t atf__load_acquire_u64(const uint64_t *p) {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
ATF__INLINE void atf__store_release_u64(uint64_t *p, uint64_t v) {
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
ATF__INLINE uint32_t atf__load_acquire_u32(const uint32_t *p) {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
ATF__INLINE void atf__store_release_u32(uint32_t *p, uint32_t v) {
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
#endif

/* Stores into ring slots on the hot path: the same bytes as atf__store_le64, but some
 * compilers (clang 14) emit the byte-wise form as eight single-byte stores; on a
 * little-endian host a memcpy of the value is one store with every compiler. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
ATF__INLINE void atf__ring_store_le64(uint8_t *p, uint64_t v) { __builtin_memcpy(p, &v, 8); }
#elif defined(ATF__CC_MSVC) && (defined(ATF__ARCH_X64) || defined(ATF__ARCH_ARM64))
#  include <string.h>
ATF__INLINE void atf__ring_store_le64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
#else
ATF__INLINE void atf__ring_store_le64(uint8_t *p, uint64_t v) { atf__store_le64(p, v); }
#endif

/* ==== 9. producer ============================================================== >>producer */
/* The per-thread producer: one index ring, one optional detail ring, the call depth and
 * the sequence counters. While its ring has room a push is a few stores: no lock, no
 * system call, no allocation. What happens when the ring is full is the overflow policy,
 * looked at only then:
 *
 *   ATF_OVERFLOW_BLOCK (default): no event is lost. A session writer drains its own rings
 *     into its own files (under its own slot's lock, as the drain thread would, so no
 *     other thread waits for it), records the pause (pauses.atf), and so never depends on
 *     the drain thread getting a core; a writer on caller memory
 *     (another process drains) waits, spinning briefly, then yielding and sleeping, for
 *     at most its timeout (default 1 s) without the consumer moving. A silent consumer,
 *     a failed file or a push re-entered from a signal handler falls back to the drop
 *     below, so the host never hangs: a file that cannot be written counts its events as
 *     lost_io; a timeout drops, counts, and drops at once until the consumer moves again.
 *   ATF_OVERFLOW_DROP: wait-free always (an audio or real-time thread): the event is
 *     dropped and counted.
 *
 * Either way every loss is recorded where it happened: the first event after a gap is
 * preceded in the ring by a gap record (its index_seq, index and detail events lost),
 * which the drain persists in the thread's gaps.atf, so readers never pair a call and a
 * return across a hole. In DROP mode, when the small gap queue is full too, the event
 * after the gap is dropped as well (the gap grows; the record stays exact).
 *
 * Sequence numbers: an event's index_seq is the number of index events this writer
 * pushed before it (dropped events take no number), which is its position in index.atf.
 * In detail mode ALWAYS the detail record's number is known at once and both links are
 * written by the producer; in WINDOWED mode the index record is pushed with no link and
 * the drain writes the link when it decides to persist the detail (see the session).
 * Layout 1 stores links in 32 bits: a layout-1 writer stops attaching detail once either
 * number would reach 0xFFFFFFFF (the events are still recorded, detail_dropped counts).
 *
 * Detail needs a detail ring, which exists only when detail is on: a session opened with
 * detail_mode ATF_DETAIL_ALWAYS or ATF_DETAIL_WINDOWED, or atf_producer_init given detail
 * memory and one of those modes. With detail off, atf_producer_event_detail refuses the
 * whole event with ATF_E_DETAIL_OFF: nothing is recorded or counted, so a payload is
 * never dropped without a word (record the event with atf_producer_call/return instead). */
enum { ATF_DETAIL_OFF = 0, ATF_DETAIL_ALWAYS = 1, ATF_DETAIL_WINDOWED = 2 };
enum { ATF_OVERFLOW_BLOCK = 0, ATF_OVERFLOW_DROP = 1 };

typedef struct atf_session atf_session;

/* One per producing thread. The fields are readable by that thread (e.g. `dropped` after
 * a push); nothing else may change them. */
typedef struct atf_producer {
    atf_ring index;              /* producer view of the index ring */
    atf_ring detail;             /* producer view of the detail ring (data NULL if none) */
    uint64_t detail_count;       /* detail records pushed (ALWAYS mode: next detail_seq) */
    uint64_t dropped;            /* index events dropped (mirrored into the ring header) */
    uint64_t detail_dropped;     /* detail payloads dropped (event kept without detail) */
    uint32_t depth;              /* current call depth */
    uint32_t thread_id;          /* OS thread id written into layout-1 records */
    uint32_t layout;
    uint32_t detail_mode;        /* ATF_DETAIL_* */
    atf_session *session;        /* owning session, NULL for a bare shared-memory writer */
    uint32_t slot;               /* thread slot in the session */
    uint32_t overflow;           /* ATF_OVERFLOW_BLOCK or ATF_OVERFLOW_DROP */
    uint64_t wait_timeout_ns;    /* BLOCK on caller memory: longest wait without progress */
    uint64_t gap_lost;           /* the open gap: index events dropped since the last kept */
    uint64_t gap_detail_lost;    /*   one, detail records dropped with them, */
    uint64_t gap_detail_total;   /*   and the latter's total over the writer's life */
    uint64_t gap_first_ns;       /*   stamp of its first event */
    uint64_t waits, timeouts;    /* mirrored into the index ring header */
    uint64_t giving_up_tail;     /* the consumers' positions when a wait timed out */
    uint64_t giving_up_detail_tail;
    uint32_t gap_reason;         /* ATF_GAP_* of the open gap */
    int giving_up;               /* timed out: drop at once until the consumer moves */
    int in_overflow;             /* inside the overflow path (re-entry drops) */
} atf_producer;

/* Binds a writer to rings initialized with atf_ring_init (e.g. in shared memory);
 * detail_mem may be NULL (then detail_mode is OFF). For producers outside a session
 * (another process drains the rings with atf_session_attach_rings). One writer per ring
 * for the ring's lifetime. ATF_E_ARG / ATF_E_MAGIC / ATF_E_CORRUPT as atf_ring_attach. */
ATFDEF atf_result atf_producer_init(atf_producer *w, void *index_mem, size_t index_size,
                                  void *detail_mem, size_t detail_size, uint32_t detail_mode);
/* Marks the writer's rings closed: the drain finalizes the thread once they are empty.
 * Call from the producing thread (or once it has stopped). Wait-free. */
ATFDEF void atf_producer_close(atf_producer *w);
/* Sets what a full ring does (ATF_OVERFLOW_BLOCK, the default, or ATF_OVERFLOW_DROP) and,
 * for a writer on caller memory, the longest wait without the consumer moving before
 * events are dropped (0 = 1 s). A writer whose consumer runs on its own thread (it pushes,
 * then pumps) must choose DROP: waiting for itself could only time out. A session writer
 * takes its session's policy at attach. ATF_E_ARG for an unknown policy. Producer thread
 * only. */
ATFDEF atf_result atf_producer_set_overflow(atf_producer *w, uint32_t policy, uint64_t timeout_ns);
/* Private: the slow path of a push, when the ring looked full or a gap is open: makes
 * room (by the policy) and publishes the open gap. 1 when the event can be pushed now;
 * 0 when it was dropped (and counted, with `ts` as the gap's first stamp when it opens
 * one). `detail` counts a detail record lost with the event. */
ATFDEF int atf__producer_overflow(atf_producer *w, uint64_t ts, int detail);

/* Pushes one index event linked to detail record `detail_seq` (ATF_NO_DETAIL for none).
 * ATF_OK, or ATF_E_FULL (dropped and counted, by the overflow policy). The record is
 * complete before the release store of head publishes it. Producer thread only. */
ATF__HOT_INLINE atf_result atf__producer_push_linked(atf_producer *w, uint32_t kind,
                                                   uint64_t function_id, uint64_t timestamp_ns,
                                                   uint32_t depth, uint64_t detail_seq) {
    atf_ring *r = &w->index;
    uint64_t pos = r->pos, third, fourth;
    uint8_t *slot;
    /* the cached tail says full (an open gap keeps it saying so): the slow path */
    if (pos - r->other > r->mask && !atf__producer_overflow(w, timestamp_ns, 0))
        return ATF_E_FULL;
    /* everything is read from *w before the first store: the stores go through a byte
     * pointer, which may alias *w as far as the compiler knows */
    if (w->layout == ATF_LAYOUT_2) {
        third = detail_seq;
        fourth = kind & 0xFFu;
    } else { /* u32 thread_id, u32 kind | u32 depth, u32 detail_seq */
        third = (uint64_t)w->thread_id | ((uint64_t)kind << 32);
        fourth = (uint64_t)depth | ((uint64_t)(detail_seq >= ATF_NO_DETAIL_U32
                                                   ? ATF_NO_DETAIL_U32 : (uint32_t)detail_seq) << 32);
    }
    slot = r->data + ((pos & r->mask) << 5);
    r->pos = pos + 1;
    atf__ring_store_le64(slot, timestamp_ns);
    atf__ring_store_le64(slot + 8, function_id);
    atf__ring_store_le64(slot + 16, third);
    atf__ring_store_le64(slot + 24, fourth);
    atf__store_release_u64(&r->shared->head, pos + 1);
    return ATF_OK;
}

/* Pushes one index event with no detail at an explicit depth. Producer thread only. */
ATF__HOT_INLINE atf_result atf_producer_push(atf_producer *w, uint32_t kind, uint64_t function_id,
                                           uint64_t timestamp_ns, uint32_t depth) {
    return atf__producer_push_linked(w, kind, function_id, timestamp_ns, depth, ATF_NO_DETAIL);
}

/* Function entry at a caller-supplied timestamp (the library clock: pass atf_now_ns(), or
 * atf_ticks() in a session with stamp_clock ATF_STAMP_TICKS). The depth advances even
 * when the event is dropped. Producer thread only; wait-free while the ring has room,
 * else as the overflow policy says. */
ATF__HOT_INLINE atf_result atf_producer_call(atf_producer *w, uint64_t function_id, uint64_t ts) {
    return atf_producer_push(w, ATF_EVENT_CALL, function_id, ts, w->depth++);
}
/* Function exit; the depth returns to that of the matching call. */
ATF__HOT_INLINE atf_result atf_producer_return(atf_producer *w, uint64_t function_id, uint64_t ts) {
    if (w->depth) w->depth--;
    return atf_producer_push(w, ATF_EVENT_RETURN, function_id, ts, w->depth);
}
/* Marks, before the next event, that `events` events of this thread were left out by
 * choice from stamp `first_ts` on (recording was off: a gap of reason ATF_GAP_SKIPPED,
 * counted apart from lost events). Readers close the frames open there, and the depth
 * restarts at 0: push the calls still open again for them to appear. ATF_OK; ATF_E_ARG
 * for no events; ATF_E_FULL when the consumer has not taken the earlier gap records yet
 * (nothing is marked: try again before a later event). Producer thread only. */
ATFDEF atf_result atf_producer_skipped(atf_producer *w, uint64_t events, uint64_t first_ts);
/* An exception leaving `function_id`: like a return for the depth. */
ATF__HOT_INLINE atf_result atf_producer_exception(atf_producer *w, uint64_t function_id, uint64_t ts) {
    if (w->depth) w->depth--;
    return atf_producer_push(w, ATF_EVENT_EXCEPTION, function_id, ts, w->depth);
}

/* An event with a detail payload (`payload`, `len` bytes, e.g. an encoded
 * atf_detail_payload) of detail type `type`. The index event is kept even when the detail
 * ring is full (then detail_dropped counts it and the event carries no link). Adjusts the
 * depth like call (kind ATF_EVENT_CALL) or return (any other kind). ATF_OK;
 * ATF_E_FULL when the index event was dropped (then no detail was recorded either);
 * ATF_E_DETAIL_OFF when the writer has no detail (detail_mode ATF_DETAIL_OFF, or no
 * detail ring): then nothing at all is recorded or counted and the depth is unchanged.
 * Under ATF_OVERFLOW_BLOCK a full detail ring in ALWAYS mode is made room in like the
 * index ring; windowed detail is never waited for. Producer thread only. */
ATFDEF atf_result atf_producer_event_detail(atf_producer *w, uint32_t kind, uint64_t function_id,
                                          uint64_t ts, uint16_t type, const void *payload,
                                          size_t len);

/* ==== 10. session writer ======================================================== >>session */
/* A session is a directory <root>/session_YYYYMMDD_HHMMSS/pid_<pid>/ with one thread_<slot>/
 * per attached thread and manifest.json. A drain (a background thread, or
 * atf_session_pump() in manual mode) empties the rings in batches into the files, so each
 * file receives its thread's events in the order they were produced. Files are created
 * whole (header written under a temporary name, then renamed), appended to, and finalized
 * at close; a crash at any moment leaves files the readers recover.
 *
 * Windowed detail (flight recorder): detail records stay in the detail ring; the drain
 * persists those whose timestamp falls in [t - pre_roll, t + post_roll] of a trigger t and
 * releases those no future trigger can reach (older than now - pre_roll - 100 ms: the
 * timestamps are on the atf_now_ns() clock, and a trigger may name a moment up to 100 ms
 * before the call) or that would otherwise fill the ring beyond half. Persisted records get consecutive numbers (detail.atf is dense); the drain writes
 * that number into the index record's detail_seq: in the ring when the index event is not
 * drained yet, else in place in index.atf (the footer CRC is corrected arithmetically).
 *
 * Write errors (ENOSPC, EIO, EFBIG) stop the file concerned: it is cut back to its last
 * whole record and later events of that thread count as events_lost_io; the session keeps
 * the first error (with errno) and reports it from pump, close and atf_session_error.
 *
 * Tick stamps (stamp_clock ATF_STAMP_TICKS): producers stamp events with atf_ticks()
 * instead of atf_now_ns(), and whoever drains (the drain thread, atf_session_pump, or the
 * process that attached shared-memory rings) rewrites each index and detail timestamp to
 * the trace clock before anything else looks at it, so the files are the same as with ns
 * stamps: same clock_type, same readers. The drain reads (ticks, ns) pairs, ticks on
 * both sides of one atf_now_ns() read, at open and at each pass (and again for a thread
 * whose newest event is younger than the newest pair), and converts by linear
 * interpolation between consecutive pairs: exact at each pair, no tick rate needed, and
 * right across pauses of the drain of any length as long as the two clocks keep a steady
 * ratio in between (NTP slewing the trace clock bends it by at most 500 ppm: pump at
 * least every few seconds in manual mode). Ticks older than every pair kept (64)
 * are extrapolated with the rate over all of them; a converted time is never later than
 * the newest pair (read after the event was published) nor earlier than the thread's
 * previous one, so each thread's times stay in order. A detail record gets the time of
 * its index event. Where ATF_TICKS_ARE_NS the option changes nothing. Windowed detail
 * works unchanged (records are converted before the windows are applied); triggers, pre-
 * and post-roll and anchors stay in trace-clock ns: convert an event's tick stamp with
 * atf_session_ticks_to_ns() to trigger on it. Ticks from different threads are compared
 * only through their conversions, which assumes the counter is the same on every core
 * (invariant, synchronized TSC; the arm64 generic timer). A counter that stops while the
 * machine is suspended (the trace clock runs on) stretches the one interval that spans
 * the suspend: its events keep their order, not their exact times. A counter that goes
 * back (reset by a resume on some machines) restarts the calibration; events stamped
 * across it keep their per-thread order but not their exact times. */
enum { ATF_DRAIN_THREAD = 0, ATF_DRAIN_MANUAL = 1 };
enum { ATF_FSYNC_NONE = 0, ATF_FSYNC_CLOSE = 1 };
enum { ATF_STAMP_NS = 0, ATF_STAMP_TICKS = 1 };

/* The bounds of a recording (max_bytes, max_duration_ns, disk_reserve). When one is
 * reached, recording stops cleanly: the program runs on, each later event is counted
 * instead of written, each thread's files end with a gap of reason ATF_GAP_STOPPED, and
 * the manifest says which bound stopped it and when ("stopped", "stopped_at_ns"), as
 * atf_session_stopped() does. Sizes count the event bytes the session's files take
 * (index events as packed on disk, detail records), checked before each write, so the
 * files stay within the bound whatever is still in the rings. */
enum { ATF_STOP_NONE = 0,          /* recording */
       ATF_STOP_MAX_SIZE = 1,      /* max_bytes */
       ATF_STOP_DURATION = 2,      /* max_duration_ns */
       ATF_STOP_DISK_RESERVE = 3 }; /* the file system's free space reached disk_reserve */
#define ATF_DISK_RESERVE_OFF UINT64_MAX /* disk_reserve: no guard */

/* Zero is the default for every field. */
typedef struct atf_session_config {
    uint32_t layout;             /* ATF_LAYOUT_1 (default), ATF_LAYOUT_2, or ATF_LAYOUT_PACKED
                                    (index.atf packed by the drain; not with windowed detail) */
    uint64_t index_ring_events;  /* index ring slots per thread; default 65536 (2 MiB; the
                                    drain also keeps 256 KiB a thread for ATF_STAMP_TICKS
                                    without a detail ring, 328 KiB for a packed index) */
    uint64_t index_ring_events_crowded; /* those of a thread that attaches while as many
                                    threads as the session counted processors at open
                                    (those the opening thread may run on) are producing
                                    (attached with rings of the session's, not closed);
                                    0: index_ring_events. With
                                    more busy threads than cores the drain has no core of
                                    its own, so a large ring buys no time, and each costs
                                    its memory to fault in */
    uint64_t detail_ring_bytes;  /* detail ring bytes per thread; default 1 MiB */
    uint32_t detail_mode;        /* ATF_DETAIL_OFF (default: no detail ring, and
                                    atf_producer_event_detail returns ATF_E_DETAIL_OFF),
                                    _ALWAYS, _WINDOWED */
    uint64_t pre_roll_ns;        /* windowed: detail kept before a trigger; default 0 */
    uint64_t post_roll_ns;       /* windowed: detail kept after a trigger; default 0 */
    uint32_t drain_mode;         /* ATF_DRAIN_THREAD (default; ATF_E_UNSUPPORTED with
                                    ATF_NO_THREADS) or ATF_DRAIN_MANUAL */
    uint32_t drain_interval_us;  /* longest drain thread sleep when idle; default 1000 */
    uint32_t fsync_mode;         /* ATF_FSYNC_NONE (default) or ATF_FSYNC_CLOSE */
    uint64_t fsync_every_bytes;  /* also fdatasync each file every N bytes (a packed index
                                    file: N bytes of its layout-1 events); default 0 (never) */
    uint32_t max_threads;        /* thread slots; default 1024, at most 1048576 */
    const char *session_name;    /* directory name; default session_YYYYMMDD_HHMMSS, and
                                    when <root>/<name>/pid_<pid> exists, _1, _2, ... is
                                    appended to the name. A name given here is joined
                                    (several processes share it): when this pid has a
                                    directory there already (a program that exec'd
                                    another), pid_<pid>_1, _2, ... is made instead */
    uint32_t stamp_clock;        /* what producers stamp events with: ATF_STAMP_NS (default,
                                    atf_now_ns()) or ATF_STAMP_TICKS (atf_ticks(), converted
                                    by the drain) */
    uint32_t overflow;           /* a full ring: ATF_OVERFLOW_BLOCK (default: the thread
                                    drains its own ring, nothing is lost) or
                                    ATF_OVERFLOW_DROP (wait-free: dropped, counted, gaps
                                    recorded) */
    uint64_t max_bytes;          /* event bytes the session's files may take; 0: no bound */
    uint64_t max_duration_ns;    /* events stamped this long after the first event written
                                    are not recorded; 0: no bound */
    uint64_t disk_reserve;       /* recording stops before the file system's free space
                                    falls under this many bytes; 0 (default): max(1 GiB,
                                    5 % of the file system); ATF_DISK_RESERVE_OFF: never */
    uint64_t min_duration_ns;    /* said in the manifest only: the producers keep just the
                                    calls at least this long and their callers (0: all) */
    uint64_t keep_last_bytes;    /* flight recorder (either keep_last field set): index
                                    events and their detail records are held in memory,
                                    the session holding this many bytes of them (ended
                                    threads' too; beyond it, a 64 KiB chunk per thread at
                                    most), and the most recent ones are written at close
                                    and at each atf_session_trigger, after a gap of
                                    reason ATF_GAP_DISCARDED counting the others
                                    (docs/FORMAT.md). 0 with keep_last_ns: 1 GiB */
    uint64_t keep_last_ns;       /* flight recorder: keep the events of each thread's last
                                    this long (within keep_last_bytes); 0: by size only */
} atf_session_config;

/* Per-thread figures, as in the manifest. The producer's counters (pushed, dropped,
 * waits) are read live; the file counters are those of the latest drain pass. */
typedef struct atf_thread_stats {
    uint32_t slot;
    uint32_t thread_id;
    uint64_t events_written;     /* index events in index.atf */
    uint64_t events_dropped;     /* index ring full (ATF_OVERFLOW_DROP, or BLOCK timed out) */
    uint64_t detail_written;     /* records in detail.atf */
    uint64_t detail_dropped;     /* detail ring full (ALWAYS) or released unpersisted */
    uint64_t events_lost_io;     /* drained but not written because the file failed */
    uint64_t events_stopped;     /* drained after a bound stopped recording: not written */
    uint64_t events_skipped;     /* left out while recording was off (atf_producer_skipped) */
    uint64_t events_discarded;   /* discarded by the flight recorder (keep_last_*) */
    uint64_t events_pushed;      /* index events the producer put in its ring so far */
    uint64_t events_queued;      /* of those, still in the ring */
    uint64_t gaps;               /* gap records in gaps.atf so far */
    uint64_t waits;              /* the ring was full: the producer drained or waited */
    uint64_t timeouts;           /* it gave up waiting for a silent consumer */
    int finalized;               /* footer written, files closed */
    uint64_t paused_ns;          /* time the thread spent draining its own full ring
                                    (ATF_OVERFLOW_BLOCK): inside whatever function it was
                                    running then, which readers cannot tell apart */
} atf_thread_stats;

/* Creates the session directory, writes the first manifest and starts the drain.
 * `root` is created when missing. On failure *out is NULL. ATF_E_ARG for a bad config
 * value, ATF_E_IO when a directory or file cannot be made. Thread-safe. */
ATFDEF atf_result atf_session_open(atf_session **out, const char *root,
                                   const atf_session_config *cfg /* optional */);
/* The same, also filling *error_out (optional) on failure: which config value was refused,
 * or the directory or file that could not be made, with errno. */
ATFDEF atf_result atf_session_open_ex(atf_session **out, const char *root,
                                      const atf_session_config *cfg, atf_error *error_out);
/* Makes a new, empty session directory for processes that will join it (each opens its
 * session with session_name = the name): `root` as with mkdir -p, then in it
 * session_YYYYMMDD_HHMMSS (local time), or that name with _1, _2, ... when it is taken.
 * Its name goes into name[cap] (32 bytes are enough), its path into *error on failure
 * (optional): ATF_E_IO with errno, ATF_E_ARG for a path too long. Thread-safe. */
ATFDEF atf_result atf_session_dir_make(const char *root, char *name, size_t cap,
                                       atf_error *error /* optional */);
/* Stops the drain, drains every ring, finalizes every file (footer with CRC32-C, header
 * rewrite, optional fsync) and the manifest, then frees the session. Returns the first
 * error the session met (the files are finalized as far as they can be either way).
 * Every writer of the session becomes invalid; threads must have stopped producing. */
ATFDEF atf_result atf_session_close(atf_session *s);
/* The same, also copying the first error with its detail (path, errno) into *error_out
 * (optional), which atf_session_error can no longer give once the session is freed. */
ATFDEF atf_result atf_session_close_ex(atf_session *s, atf_error *error_out);
/* In the child of a fork(), before it starts threads: gives up the session the parent
 * opened, which the child inherited. Writes nothing and closes nothing the parent's files
 * share beyond the child's own descriptors, and joins no thread (the parent's drain does
 * not exist in the child): the parent's session goes on untouched. Frees what the child
 * inherited, except when another thread of the parent held the session's locks at the
 * fork (its memory may be mid-change then: left allocated, never used again). The
 * child may then open a session of its own, e.g. with session_name set to the parent's
 * session directory name, which makes a pid_<child> next to the parent's. */
ATFDEF void atf_session_abandon_after_fork(atf_session *s);
/* The calling thread's writer, attaching the thread on first use (thread-local lookup;
 * when the thread exits, its writer is closed and the drain finalizes its files).
 * Attaching allocates the rings and does no file I/O: the drain creates the thread's
 * directory and files. NULL when the session is out of slots or memory (counted as
 * attach_failures in the manifest), or after the thread detached. Thread-safe. */
ATFDEF atf_producer *atf_session_producer(atf_session *s);
/* Attaches the calling thread explicitly, with an optional name for the manifest. When
 * the thread is attached already, *out receives its writer (the name is ignored).
 * ATF_E_FULL when out of slots, ATF_E_NOMEM. No file I/O. Thread-safe. */
ATFDEF atf_result atf_session_attach(atf_session *s, const char *name, atf_producer **out);
/* Detaches the calling thread: its writer is closed and finalized by the drain, and
 * atf_session_producer returns NULL in this thread afterwards. Thread-safe. */
ATFDEF void atf_session_detach(atf_session *s);
/* Adds a thread slot whose rings live in caller memory (initialized with atf_ring_init,
 * not consumed from yet: ATF_E_STATE otherwise), e.g. filled by another process through
 * shared memory. The producer's detail mode travels with each detail entry. The memory
 * must stay valid until the session closes. Thread-safe. */
ATFDEF atf_result atf_session_attach_rings(atf_session *s, void *index_mem, size_t index_size,
                                           void *detail_mem, size_t detail_size,
                                           const char *name, uint32_t *slot_out);
/* Manual drain: moves everything available into the files and rewrites the manifest when
 * it changed. Also allowed with a drain thread (it then waits for the drain lock).
 * Returns the first error so far. Thread-safe. */
ATFDEF atf_result atf_session_pump(atf_session *s);
/* Windowed detail: persist detail recorded within [t - pre_roll, t + post_roll]; t is on
 * the atf_now_ns() clock, at most 100 ms before the call (e.g. the timestamp of the
 * event that caused the trigger). Windows that overlap are merged; beyond 4096 disjoint
 * windows the two closest are merged. Thread-safe (takes the session lock; not for the
 * producer hot path). In a flight-recorder session (keep_last_*) it also asks the drain to
 * write what each thread holds now; without windowed detail that is all it does, and it
 * is async-signal-safe then (one atomic add). */
ATFDEF void atf_session_trigger(atf_session *s, uint64_t t_ns);
/* The trace-clock time of `ticks`, an atf_ticks() value of this machine, by the session's
 * calibration (the drain's pairs, and a pair read now for ticks younger than those): what
 * the drain makes of an event stamped `ticks`, within a few ns for recent ticks. Works
 * in every stamp_clock mode; `ticks` itself where ATF_TICKS_ARE_NS. Thread-safe (takes
 * the session lock). */
ATFDEF uint64_t atf_session_ticks_to_ns(atf_session *s, uint64_t ticks);
/* Metadata for the manifest. Every call below marks the manifest changed: the drain thread
 * rewrites it within about 100 ms (at most that often, however many calls come), pump
 * and close at once, so a session killed while recording still names what it met. Each
 * returns ATF_E_NOMEM on allocation failure and is thread-safe (takes the session lock;
 * not for the producer hot path). */
/* Registers a module (module_id 0 = main executable): its path, load address and size. */
ATFDEF atf_result atf_session_add_module(atf_session *s, uint32_t module_id, const char *path,
                                         uint64_t base_address, uint64_t size);
/* The build id of the module registered last under module_id, as hex digits (1-64, either
 * case, written lowercase): tools match the module file by it. ATF_E_ARG when it is not
 * hex, ATF_E_NOT_FOUND when no such module was added. */
ATFDEF atf_result atf_session_set_module_build_id(atf_session *s, uint32_t module_id,
                                                  const char *build_id_hex);
/* The name of function_id (a later call for the same id replaces it). */
ATFDEF atf_result atf_session_add_symbol(atf_session *s, uint64_t function_id, const char *name);
/* Where function_id lives: module module_id, at `offset` = its address minus the module's
 * load bias (the value of its ELF symbol), so that tools can name it offline from the
 * module file when the manifest has no name for it. Shares the entry of add_symbol's
 * name; a later call for the same id replaces the location. */
ATFDEF atf_result atf_session_add_function(atf_session *s, uint64_t function_id,
                                           uint32_t module_id, uint64_t offset);
/* The process's command line, arguments separated by spaces ("cmdline"); replaces an
 * earlier one. */
ATFDEF atf_result atf_session_set_cmdline(atf_session *s, const char *cmdline);
/* Names the calling thread's slot (its "name"). A name given to atf_session_attach wins:
 * then this changes nothing and returns ATF_OK. ATF_E_STATE when the calling thread is
 * not attached to s. */
ATFDEF atf_result atf_session_name_thread(atf_session *s, const char *name);
/* A timing anchor: host_ns on the trace clock corresponds to `value` on clock `name`,
 * which advances `rate` units per second (e.g. 48000 for an audio timeline). An
 * integer value in int64 range with an integer rate in 1..INT32_MAX is kept exact (as
 * atf_session_add_anchor_exact); anything else as a double. */
ATFDEF atf_result atf_session_add_anchor(atf_session *s, const char *name, uint64_t host_ns,
                                         double value, double rate);
/* An exact timing anchor, like a CMTime: host_ns on the trace clock corresponds to
 * value/timescale seconds on clock `name` (timescale units per second, e.g. 1000000000
 * for a wall clock in ns, 48000 for an audio timeline); integers end to end, no rounding.
 * ATF_E_ARG when timescale <= 0. */
ATFDEF atf_result atf_session_add_anchor_exact(atf_session *s, const char *name, uint64_t host_ns,
                                               int64_t value, int32_t timescale);
/* The pid_<pid> directory path. Valid until close. Thread-safe. */
ATFDEF const char *atf_session_path(const atf_session *s);
/* The first error the session met (ATF_OK if none). Read it while no drain runs (manual
 * mode, or after atf_session_pump returned an error); it stays valid until close. */
ATFDEF const atf_error *atf_session_error(const atf_session *s);
/* Figures of slot `slot` (ATF_E_RANGE past the last slot): the producer's counters as
 * they are now, the files' as of the latest drain pass (no pump needed with a drain
 * thread). Thread-safe. */
ATFDEF atf_result atf_session_thread_stats(atf_session *s, uint32_t slot, atf_thread_stats *out);
/* Number of thread slots handed out so far. Thread-safe. */
ATFDEF uint32_t atf_session_thread_count(const atf_session *s);
/* Which bound stopped recording (ATF_STOP_*; ATF_STOP_NONE while recording) and, in
 * *at_ns (optional), the stamp from which on events were not recorded. Thread-safe. */
ATFDEF uint32_t atf_session_stopped(atf_session *s, uint64_t *at_ns);
/* "max size", "duration", "disk reserve"; "" for ATF_STOP_NONE, "unknown" otherwise. */
ATFDEF const char *atf_stop_reason_str(uint32_t reason);

/* ==== 11. readers =============================================================== >>readers */
/* Readers map a file (or read it whole where mapping is unavailable), validate it, decide
 * how many events it holds by the recovery rules below, and then give O(1) access by
 * sequence number. Nothing a file contains can make them read out of bounds, loop
 * forever or allocate more than a bounded multiple of the file's size.
 *
 * Recovery, in this order of trust:
 *   1. a footer whose magic, counts and sizes agree with the file is authoritative; it
 *      is found at the header's footer_offset, or, when the header is still the
 *      placeholder written at open, in the last 64 bytes;
 *   2. otherwise the events are counted from the file size (index) or by a bounds-checked
 *      total_length walk (detail); a torn last record is ignored, never read.
 * atf_count_source says which of these counted a file's records. */
typedef enum atf_count_source {
    ATF_COUNT_FINALIZED = 0,       /* footer found through the header: a clean close */
    ATF_COUNT_FOOTER_AT_END = 1,   /* placeholder header, agreeing footer at the end */
    ATF_COUNT_FROM_SIZE = 2,       /* no usable footer: counted from the file size/walk */
    ATF_COUNT_FOOTER_MISMATCH = 3  /* a footer exists but disagrees; counted as in 2 */
} atf_count_source;

typedef enum atf_crc_state {
    ATF_CRC_NO_FOOTER = 0,       /* nothing to check against */
    ATF_CRC_NOT_COMPUTED = 1,    /* footer checksum 0: the writer did not compute one */
    ATF_CRC_UNCHECKED = 2,       /* a checksum exists and was not verified yet */
    ATF_CRC_OK = 3,
    ATF_CRC_MISMATCH = 4
} atf_crc_state;

ATFDEF const char *atf_count_source_str(atf_count_source r);
ATFDEF const char *atf_crc_state_str(atf_crc_state s);

/* Zero is the default for every field. */
typedef struct atf_reader_options {
    int verify_crc;  /* verify the checksum at open; a mismatch fails open. Default 0 */
    int no_mmap;     /* read the file into memory instead of mapping it. Default 0 */
} atf_reader_options;

/* A file image: mapped, read into memory, or borrowed from the caller. */
typedef struct atf__file_image {
    const uint8_t *data;
    uint64_t size;
    int kind;                /* private: how to release it */
    void *handle;            /* private */
} atf__file_image;

/* A packed reader's decoded blocks: a few, replaced in turn. first/count/data describe the
 * one used last (the inline lookup's fast path). */
#define ATF__PACKED_SLOTS 4
typedef struct atf__packed_cache {
    uint64_t first, count;       /* the block used last: its first seq and its events */
    const uint8_t *data;         /*   and its records */
    uint64_t block[ATF__PACKED_SLOTS];   /* block held by each slot; UINT64_MAX: none */
    unsigned next;               /* the slot to replace next */
    int damaged;                 /* a block that passed its CRC did not decode (zeros given) */
    uint8_t *slots;              /* ATF__PACKED_SLOTS * block_events records */
} atf__packed_cache;

typedef struct atf_index_reader {
    /* read-only after open */
    atf_index_header header;
    atf_index_footer footer;     /* valid when has_footer */
    int has_footer;              /* a footer with the right magic was found */
    int layout;                  /* ATF_LAYOUT_1 or ATF_LAYOUT_2 */
    uint64_t event_count;        /* events readable, per the recovery rule */
    uint64_t torn_bytes;         /* bytes after the last whole event (packed: block) ignored */
    atf_count_source counted;
    atf_crc_state crc_state;
    uint32_t crc_found;          /* computed CRC, valid when crc_state is OK/MISMATCH */
    int packed;                  /* the file is packed (header version 3): its blocks are
                                    decoded as they are read, and layout says 1 */
    atf_error error;             /* first error */
    char path[512];              /* the path (or name) given at open */
    /* private */
    atf__file_image image;
    const uint8_t *events;       /* image.data + events_offset (layouts 1 and 2) */
    uint64_t *block_at;          /* packed: file offset of each whole block (owned) */
    uint64_t block_count;
    uint64_t packed_end;         /* packed: where the last whole block ends */
    uint32_t block_events;       /* packed: the lane header's */
    atf__packed_cache *cache;    /* packed: decoded blocks (owned) */
} atf_index_reader;

/* Opens and validates an index file. On failure the reader holds nothing (no close
 * needed) and r->error says what and where. Not thread-safe per reader; different readers
 * are independent. After a successful open, get/raw/verify are safe from many threads
 * (verify_crc writes the crc fields once), except on a packed file: its blocks are
 * decoded into a small cache of the reader as events are read, so each thread opens a
 * reader of its own. Opening a packed file reads its block headers and checks each
 * block's CRC; memory stays a few blocks whatever the file's size. */
ATFDEF atf_result atf_index_reader_open(atf_index_reader *r, const char *path,
                                        const atf_reader_options *opt /* optional */);
/* The same over bytes the caller keeps alive until close (`name` is used in errors). */
ATFDEF atf_result atf_index_reader_open_memory(atf_index_reader *r, const void *data,
                                               size_t size, const char *name,
                                               const atf_reader_options *opt);
ATFDEF void atf_index_reader_close(atf_index_reader *r);
/* Decodes event `seq`: ATF_E_RANGE when seq >= event_count. */
ATFDEF atf_result atf_index_reader_get(const atf_index_reader *r, uint64_t seq,
                                       atf_index_event *out);
/* The 32 raw bytes of event `seq`, or NULL when out of range. A packed file's are its
 * layout-1 record as decoded into the reader's cache: valid until the next get, raw or
 * seek on this reader. */
ATFDEF const uint8_t *atf_index_reader_raw(const atf_index_reader *r, uint64_t seq);
/* (private) The record of seq < event_count: in place, or decoded into cache `c` (the
 * reader's own, or a merge cursor's: concurrent merges over one reader each have theirs). */
ATFDEF const uint8_t *atf__packed_record(const atf_index_reader *r, atf__packed_cache *c,
                                         uint64_t seq);
ATF__HOT_INLINE const uint8_t *atf__index_record_in(const atf_index_reader *r,
                                                    atf__packed_cache *c, uint64_t seq) {
    if (!r->packed) return r->events + seq * ATF_INDEX_EVENT_SIZE;
    if (seq - c->first < c->count) return c->data + (seq - c->first) * ATF_INDEX_EVENT_SIZE;
    return atf__packed_record(r, c, seq);
}
ATF__HOT_INLINE const uint8_t *atf__index_record(const atf_index_reader *r, uint64_t seq) {
    return atf__index_record_in(r, r->cache, seq);
}
/* Checks the footer CRC over the events section: ATF_OK when it matches or is 0 (not
 * computed) or there is no footer; ATF_E_CRC (expected/found in r->error) otherwise. A
 * packed file's blocks are all decoded either way: ATF_E_CRC too when one whose own CRC
 * matches does not decode. */
ATFDEF atf_result atf_index_reader_verify_crc(atf_index_reader *r);

/* A detail record as read: its header and payload bytes (pointing into the file). */
typedef struct atf_detail_event {
    atf_detail_event_header header;
    const uint8_t *payload;
    uint32_t payload_len;        /* total_length - 24 */
    uint64_t offset;             /* byte offset of the record in the file */
} atf_detail_event;

typedef struct atf_detail_reader {
    atf_detail_header header;
    atf_detail_footer footer;
    int has_footer;
    int layout;
    uint64_t event_count;
    uint64_t bytes_length;       /* bytes of the events section that were read */
    uint64_t torn_bytes;
    atf_count_source counted;
    atf_crc_state crc_state;
    uint32_t crc_found;
    atf_error error;
    char path[512];
    /* private */
    atf__file_image image;
    uint64_t *offsets;           /* event_count record offsets, from the walk */
} atf_detail_reader;

/* Opens a detail file and walks its records once to build the offset table
 * (event_count * 8 bytes). Same contract as atf_index_reader_open. */
ATFDEF atf_result atf_detail_reader_open(atf_detail_reader *r, const char *path,
                                         const atf_reader_options *opt);
ATFDEF atf_result atf_detail_reader_open_memory(atf_detail_reader *r, const void *data,
                                                size_t size, const char *name,
                                                const atf_reader_options *opt);
ATFDEF void atf_detail_reader_close(atf_detail_reader *r);
ATFDEF atf_result atf_detail_reader_get(const atf_detail_reader *r, uint64_t seq,
                                        atf_detail_event *out);
ATFDEF atf_result atf_detail_reader_verify_crc(atf_detail_reader *r);

/* A thread directory: index.atf, and detail.atf, gaps.atf and pauses.atf when present. */
typedef struct atf_thread_reader {
    atf_index_reader index;
    atf_detail_reader detail;
    int has_detail;              /* detail.atf exists and opened */
    atf_gap *gaps;               /* gap_count gaps from gaps.atf, in index_seq order: */
    size_t gap_count;            /*   those at or past the event count are at the end */
    uint64_t events_lost;        /* sum of their index_lost */
    atf_pause *pauses;           /* pause_count pauses from pauses.atf, in index_seq order */
    size_t pause_count;
    uint64_t paused_ns;          /* sum of their lengths */
    atf_error error;             /* first error of any file or of a link; a damaged
                                    gaps.atf or pauses.atf is kept here (the records
                                    before the damage are used) without failing the open */
} atf_thread_reader;

ATFDEF atf_result atf_thread_reader_open(atf_thread_reader *t, const char *dir,
                                         const atf_reader_options *opt);
ATFDEF void atf_thread_reader_close(atf_thread_reader *t);
/* Forward link: the detail record of index event `index_seq`. ATF_E_NO_DETAIL when the
 * event has none; ATF_E_CORRUPT when the link points outside the file or the record does
 * not point back. This and index_of are thread-safe (on a packed file too: they read
 * without the reader's cache, at the cost of decoding the event's block up to it). */
ATFDEF atf_result atf_thread_reader_detail_of(const atf_thread_reader *t, uint64_t index_seq,
                                              atf_detail_event *out);
/* Backward link: the index event of detail record `detail_seq`, checked both ways. */
ATFDEF atf_result atf_thread_reader_index_of(const atf_thread_reader *t, uint64_t detail_seq,
                                             atf_index_event *out);
/* Checks every link in both directions; the first broken one is kept in t->error. */
ATFDEF atf_result atf_thread_reader_verify_links(atf_thread_reader *t);
/* The gap right before index event `index_seq`, or NULL when none: O(log gaps). For
 * index_seq >= event_count: the first gap at the end (gaps after it, if any, follow it in
 * t->gaps). Thread-safe. */
ATFDEF const atf_gap *atf_thread_reader_gap_before(const atf_thread_reader *t,
                                                   uint64_t index_seq);

/* ---- 11.1 recovery ------------------------------------------------------------ >>recovery */
/* Finalizes, in place, the files a crash left behind, as the writer's close would have:
 * the torn tail is cut (the file ends after its last whole record), a footer with the
 * CRC32-C of what is there is written after it, and the header is rewritten, through the
 * writer's own encoders. The readers decide what is there (the recovery rules above);
 * nothing past what they counted is ever read. For a thread directory the links are
 * repaired as a crash breaks them (detail is written before index, and windowed links are
 * patched into index.atf later): detail records at the end whose index event never reached
 * index.atf are cut, an index event naming a detail record that never reached detail.atf
 * loses its link, and the link of a windowed record whose index event was written before
 * it was patched in is restored (their timestamps must agree). A detail.atf left with no
 * record is removed (the writer makes none then); a torn last record of gaps.atf or
 * pauses.atf is cut; files left under a temporary name (`index.atf.tmp` and the like hold
 * a header at most) are removed. A finalized file is left alone, except that a footer checksum 0 ("not
 * computed", as the original tracer writes) gets the CRC32-C. Anything a crash cannot
 * leave (a CRC that does not match, a link pointing elsewhere, a finalized file with broken
 * links, a damaged gaps.atf or pauses.atf) is damage: that file or thread is not changed and its item
 * says why. Recovering a recovered file changes nothing. Not for files still being
 * written. */
typedef enum atf_recover_kind {
    ATF_RECOVER_INDEX = 1,        /* index.atf (or any index file) */
    ATF_RECOVER_DETAIL = 2,       /* detail.atf */
    ATF_RECOVER_GAPS = 3,         /* gaps.atf */
    ATF_RECOVER_TMP = 4,          /* a file left under its temporary name (*.atf.tmp) */
    ATF_RECOVER_UNBORN_DIR = 5,   /* a session's thread_N without index.atf: holding nothing
                                     or only index.atf.tmp, stopped before its first file */
    ATF_RECOVER_MANIFEST = 6,     /* manifest.json (items only when rewriting it failed) */
    ATF_RECOVER_PAUSES = 7        /* pauses.atf */
} atf_recover_kind;

typedef enum atf_recover_action {
    ATF_RECOVER_NOTHING = 0,      /* finalized (gaps.atf: whole) already: left as it is */
    ATF_RECOVER_FINALIZE = 1,     /* cut after the last kept record, links repaired, footer
                                     written, header rewritten */
    ATF_RECOVER_FILL_CRC = 2,     /* finalized with checksum 0: the CRC32-C written in */
    ATF_RECOVER_CUT = 3,          /* gaps.atf, pauses.atf: a torn last record cut */
    ATF_RECOVER_REMOVE = 4,       /* removed (a detail.atf without records, a *.tmp, an
                                     unborn thread directory) */
    ATF_RECOVER_FAIL = 5          /* not recoverable: `error` says why; nothing changed */
} atf_recover_action;

/* Zero is the default for every field. */
typedef struct atf_recover_options {
    int dry_run;     /* plan and report only, change nothing. Default 0 */
    int no_sync;     /* do not fsync what was changed. Default 0 (sync) */
} atf_recover_options;

/* What recovery found in one file or directory and did to it (in a dry run: would do). */
typedef struct atf_recover_item {
    char path[512];
    atf_recover_kind kind;
    atf_recover_action action;
    atf_count_source found;          /* index, detail: how the readers found the file */
    int layout;                  /* index, detail: ATF_LAYOUT_1 or ATF_LAYOUT_2 */
    uint64_t records;            /* records kept: events, detail records or gap records */
    uint64_t bytes_cut;          /* bytes cut after the last kept record (a torn record, a
                                    footer that disagreed, bytes after a footer) */
    uint64_t records_cut;        /* detail: whole records cut, their index event not on disk */
    uint64_t links_cleared;      /* index: links to detail records not in detail.atf */
    uint64_t links_restored;     /* index: windowed links not patched in yet */
    uint64_t footer_offset;      /* index, detail: where the footer is (or is written) */
    uint32_t crc;                /* index, detail: the CRC32-C in that footer */
    atf_error error;             /* ATF_RECOVER_FAIL: what, where (path, offset) */
} atf_recover_item;

typedef struct atf_recover_report {
    atf_recover_item *items;     /* item_count items, in the order handled (a thread:
                                    detail.atf, index.atf, gaps.atf, leftovers) */
    size_t item_count;
    size_t changed;              /* items changed (in a dry run: that would be) */
    size_t failed;               /* items with ATF_RECOVER_FAIL */
    atf_error error;             /* the first failure (ATF_OK when none) */
    int manifest_rewritten;      /* atf_recover_session_dir: manifest.json was left
                                    "recording" and is rewritten as "recovered" (in a dry
                                    run: would be) */
    size_t item_cap;             /* private */
} atf_recover_report;

/* Recovers one file: an index, detail, gaps or pauses file, told apart by its magic (an index
 * file gets the has-detail flag when a detail.atf lies beside it; links are not looked at:
 * recover the thread directory for that). `opt` is optional. *out is (re)initialized and
 * must be released with atf_recover_report_deinit, whatever the result. Returns ATF_OK
 * when every item was recovered or needed nothing, else the first failure's code
 * (out->error). Not thread-safe for the same files; different files are independent. */
ATFDEF atf_result atf_recover_file(const char *path, const atf_recover_options *opt,
                                   atf_recover_report *out);
/* Recovers a thread_N directory: index.atf, detail.atf, gaps.atf and pauses.atf, links
 * repaired; detail.atf is written before index.atf (a crash during recovery leaves a
 * state recovery accepts again). Same contract as atf_recover_file. */
ATFDEF atf_result atf_recover_thread_dir(const char *dir, const atf_recover_options *opt,
                                         atf_recover_report *out);
/* Recovers every thread_N directory of a pid_* directory, in slot order; a thread that
 * fails does not stop the others. Unborn thread directories are removed. Then a
 * manifest.json left in state "recording" (the process died, or closed after an error: a
 * full disk) is rewritten, atomically, as "recovered": each thread's file counts
 * (events_written, detail_written, gaps), finalized and the time range as the files now
 * are, every thread directory listed (a thread listed with no event written and no
 * directory left out); everything else it said (command line, names, modules, symbols,
 * anchors, overflow, drop counts, pid, arch, os, clock, error) kept.
 * out->manifest_rewritten says so; a failure to rewrite it is an item of kind
 * ATF_RECOVER_MANIFEST. A manifest in any other state is left as is.
 * Same contract as atf_recover_file. */
ATFDEF atf_result atf_recover_session_dir(const char *dir, const atf_recover_options *opt,
                                          atf_recover_report *out);
/* Releases what a report holds; the report may be reused. */
ATFDEF void atf_recover_report_deinit(atf_recover_report *r);
/* "nothing to do", "finalize", "fill crc", "cut", "remove", "fail"; "unknown" otherwise. */
ATFDEF const char *atf_recover_action_str(atf_recover_action a);
/* "index", "detail", "gaps", "tmp", "unborn thread directory", "manifest", "pauses";
 * "unknown" otherwise. */
ATFDEF const char *atf_recover_kind_str(atf_recover_kind k);

/* ---- 11.4 packing -------------------------------------------------------------- >>packing */
/* Converts one finalized index file between layout 1 and packed: atf_index_pack writes the
 * packed form of a layout-1 file, atf_index_unpack the layout-1 file a packed one came
 * from, byte for byte. `out` is written as <out>.tmp, synced and renamed over `out`, so it
 * may be `in` (in place) and a crash leaves `in` whole. ATF_E_VERSION when `in` is not of
 * the layout converted from (layout 2, or converted already); ATF_E_ARG when it is not
 * finalized, or holds bytes a conversion would not keep (recover it first); a reader's or
 * the file system's error otherwise. `err` (optional) says what and where. */
ATFDEF atf_result atf_index_pack(const char *in, const char *out, atf_error *err);
ATFDEF atf_result atf_index_unpack(const char *in, const char *out, atf_error *err);

/* ==== 12. session reader + merge ========================================== >>sessionreader */
/* Opens a pid_* directory: manifest.json when present (threads, has_detail, clock, layout,
 * symbols and their locations, drop counts, modules, timing anchors, command line, state), joined with a scan of the thread_* directories, which alone
 * decides when the manifest is missing or unreadable, and adds what it lists too few of.
 * A manifest entry whose directory (or index.atf) is missing is kept with `missing` set
 * and skipped by the merge. The merge yields every selected event of every thread in
 * (timestamp, slot, seq) order, also when a thread's file is not time-ordered (files of
 * the original tracer are not; nor are those of a writer fed timestamps out of order):
 * such a thread is merged through a stably sorted permutation built on first use.
 *
 * Opening costs O(threads) whatever the size of the layout-1 and layout-2 files: of each
 * index.atf it reads the header, the first and the last event (of a packed index.atf also
 * every block's header and CRC: O(its bytes), a tenth of layout 1's, in memory of 8 bytes
 * per block of 1024 events). Whether a file is time-ordered costs a pass
 * over all its timestamps, so it is settled later, once per thread and reader: by
 * atf_merge_init for the threads it selects, or on request by
 * atf_session_reader_check_order. A merge cannot do without it, not even one that seeks
 * into a narrow window: one event anywhere in a file that is not ordered may fall inside
 * any window, and a binary search would miss it. Nor can a merge check the order as it
 * reads: before it hands out a thread's first event it must know that no later event of
 * that thread is earlier. Nothing on disk can stand in for the pass (no header or footer
 * field says a file is ordered, their time range is not a bound of the events, and this
 * library's own writer stores the timestamps its caller gives, in the caller's order). */
typedef enum atf_manifest_state {
    ATF_MANIFEST_OK = 0,          /* manifest read and complete */
    ATF_MANIFEST_MISSING = 1,     /* no manifest.json: threads found by scanning */
    ATF_MANIFEST_UNREADABLE = 2,  /* manifest.json cannot be read, is not valid JSON (strict,
                                     nesting <= 32, <= 64 MiB), or has no "threads" array;
                                     manifest_error says where and why */
    ATF_MANIFEST_INCOMPLETE = 3   /* it lists fewer threads than the directory holds */
} atf_manifest_state;

ATFDEF const char *atf_manifest_state_str(atf_manifest_state s);

typedef struct atf_session_thread {
    uint32_t slot;               /* N of thread_N */
    uint32_t os_thread_id;       /* from the manifest, else the index header */
    char name[64];               /* from the manifest (UTF-8, cut on a character), else "" */
    int in_manifest;             /* listed by manifest.json */
    int missing;                 /* thread_N/ or its index.atf does not exist */
    atf_result open_result;      /* ATF_OK; ATF_E_NOT_FOUND when missing; else why its
                                    files failed to open (details in reader.error) */
    int manifest_has_detail;     /* the manifest's has_detail (original files: always 1) */
    int manifest_finalized;      /* the manifest's finalized */
    /* the manifest's per-thread counters (0 when unknown; see atf_thread_stats) */
    uint64_t events_written, events_dropped, detail_written, detail_dropped;
    uint64_t events_lost_io, events_stopped, events_skipped, events_discarded;
    uint64_t gaps, waits, timeouts, paused_ns;
    /* Whether timestamps decrease somewhere in index.atf: ATF_ORDER_UNKNOWN from the open
     * (which reads only the first and last events) until the thread is checked
     * (atf_session_reader_check_order; atf_merge_init checks the threads it selects),
     * then 0 or 1. 0 from the open for a file of at most one event and for a thread whose
     * files did not open. Anything but 0 means: not known to be in time order. */
    int out_of_order;
    /* Unchecked: the timestamps of the first and of the last event of index.atf (for an
     * ordered file its smallest and largest). Checked: its smallest and largest
     * timestamps. 0, 0 when it has no events. */
    uint64_t time_min_ns;
    uint64_t time_max_ns;
    atf_thread_reader reader;    /* open when open_result is ATF_OK */
    uint64_t *order;             /* private: sorted permutation for out-of-order files */
} atf_session_thread;

enum { ATF_ORDER_UNKNOWN = -1 }; /* atf_session_thread.out_of_order before the check */

/* A function of the manifest (atf_session_add_symbol, atf_session_add_function): its
 * name, its location, or both. An entry with neither, or without function_id, is skipped. */
typedef struct atf_session_symbol {
    uint64_t function_id;
    char *name;                  /* NULL when the manifest gives only the location */
    uint32_t module_id;          /* the manifest's module_id, else function_id >> 32 */
    uint64_t offset;             /* address minus the module's load bias (ELF symbol value) */
    int has_offset;              /*   set when the manifest gives it */
} atf_session_symbol;

/* A timing anchor of the manifest: the other clock's reading at host_ns. An entry without
 * a name, a host_ns or a numeric value is skipped. Written exact ("timescale" present), or
 * by an older writer as {"value": number, "rate": number}: exact then when value is an
 * integer in int64 range and rate an integer in 1..INT32_MAX. */
typedef struct atf_session_anchor {
    char name[64];               /* e.g. "wall_clock_ns" (UTF-8, cut on a character) */
    uint64_t host_ns;            /* on the trace clock */
    int64_t value;               /* exact: the reading at host_ns, in units of 1/timescale s */
    int32_t timescale;           /* > 0: exact; 0: the manifest gave a non-integer value,
                                    only value_f and rate are meaningful */
    double value_f;              /* the reading as a double (always set) */
    double rate;                 /* units per second (timescale when exact); 1e9 when absent
                                    or not > 0 */
} atf_session_anchor;

/* A module of the manifest (atf_session_add_module); an entry without module_id is
 * skipped. base_address is written "0x..." and read either way. */
typedef struct atf_session_module {
    uint64_t module_id;
    char *path;                  /* never NULL ("" when absent) */
    uint64_t base_address, size;
    char build_id[65];           /* lowercase hex; "" when unknown */
} atf_session_module;

typedef struct atf_session_reader {
    char path[1024];
    atf_manifest_state manifest;
    uint32_t format_version;             /* from the manifest, 0 when unknown */
    uint32_t layout, clock_type;         /* from the manifest, else the first thread's file */
    uint64_t time_start_ns, time_end_ns; /* the manifest's when it is OK and has them (the
                                            original tracer wrote 0), else the smallest
                                            time_min_ns and the largest time_max_ns of
                                            the threads, kept up to date as threads are
                                            checked */
    atf_session_thread *threads;         /* sorted by slot, one per slot */
    size_t thread_count;
    atf_session_symbol *symbols;         /* sorted by function_id */
    size_t symbol_count;
    /* The rest of the manifest, as the session writer wrote it; zero, "" or NULL when the
     * manifest does not say (original tracer) or is not read (missing, unreadable). */
    char state[32];                      /* "recording", "closed", ... */
    char overflow[16];                   /* "block", "drop" */
    atf_session_anchor *anchors;         /* timing_anchors, in the manifest's order */
    size_t anchor_count;
    atf_session_module *modules;         /* modules, in the manifest's order */
    size_t module_count;
    char *cmdline;                       /* the recording process's command line, NULL
                                            when the manifest has none */
    uint64_t pid;                        /* the recording process */
    char arch[16], os[16];               /* its "arch" and "os" ("x86_64", "linux", ...) */
    uint64_t attach_failures;            /* threads refused a slot while recording */
    uint64_t max_bytes, max_duration_ns; /* the recording's bounds (0: none) */
    uint64_t min_duration_ns;            /* only calls this long and their callers were
                                            recorded (0: every call) */
    uint64_t keep_last_bytes, keep_last_ns; /* a flight recorder kept the most recent
                                            events by these (0: none) */
    uint64_t disk_reserve_bytes;         /*   and the free space it kept (0: no guard) */
    char stopped[16];                    /* which bound stopped it (atf_stop_reason_str),
                                            "" when none did */
    uint64_t stopped_at_ns;              /*   from which stamp on events were not recorded */
    char *recording_error;               /* the first error the recording met, as one
                                            line (atf_error_format), NULL when none */
    int recording_errno;                 /*   and its errno (0 when none) */
    atf_error manifest_error;            /* why the manifest is UNREADABLE: manifest.json's
                                            path, the byte offset where reading stopped and
                                            what was wrong there; code ATF_OK otherwise */
    atf_error error;                     /* first error; also set by an open that succeeds
                                            when a thread's files failed to open */
    int range_from_threads;              /* private: time_start_ns/time_end_ns follow the
                                            threads' time_min_ns/time_max_ns */
} atf_session_reader;

/* Opens the pid_* directory `dir`. Succeeds whenever dir holds a readable manifest.json
 * (manifest OK or INCOMPLETE) or at least one thread_N directory, whether or not any thread
 * opens: a session stopped before any thread attached lists none (thread_count 0), and
 * every listed or found thread that cannot open is listed with missing / open_result set,
 * the first such error kept in r->error, so that every fact there is can be reported. A
 * thread whose files are present but invalid is skipped by the merge. Fails
 * (ATF_E_NOT_FOUND) only when there is neither, or with ATF_E_ARG / ATF_E_NOMEM; then
 * nothing needs closing, and r->error, r->manifest and r->manifest_error still say what was
 * found. O(threads): the threads' order is left unknown (see above). Not thread-safe per
 * reader. */
ATFDEF atf_result atf_session_reader_open(atf_session_reader *r, const char *dir,
                                          const atf_reader_options *opt /* optional */);
ATFDEF void atf_session_reader_close(atf_session_reader *r);
/* Checks whether thread t of r (NULL: every thread) is time-ordered: sets its out_of_order
 * to 0 or 1 and its time_min_ns/time_max_ns to its smallest and largest timestamps, and
 * updates the session's time range when it comes from the threads. One pass over the
 * timestamps of each thread not checked yet, O(1) for one already checked or whose files
 * did not open. A mapped file is read through a descriptor of its own, in 256 KiB reads,
 * so that the pass maps no page of it into the process (a merge that then seeks into a
 * narrow window maps only what it reads); a file that no longer shows the first and last
 * events the open read there (replaced since) is read through the mapping instead.
 * Returns t's out_of_order (NULL: 1 when any thread is out of order, else 0). Never
 * fails. Not thread-safe against other calls on the same reader: it writes the threads'
 * fields. */
ATFDEF int atf_session_reader_check_order(atf_session_reader *r,
                                          atf_session_thread *t /* optional */);
/* Calls fn(ctx, slot) for every thread_<N> directory of the pid_* directory `pid_dir`
 * (N decimal without leading zeros, at most UINT32_MAX), in directory order. Returns 0,
 * or the OS error that kept the directory from being read (errno; GetLastError() on
 * Windows). Reentrant. */
ATFDEF int atf_session_scan_threads(const char *pid_dir, void (*fn)(void *ctx, uint32_t slot),
                                    void *ctx);
/* The symbol name of function_id from the manifest, or NULL. O(log n). Thread-safe. */
ATFDEF const char *atf_session_reader_symbol(const atf_session_reader *r, uint64_t function_id);
/* The thread with slot `slot`, or NULL. O(log n). Thread-safe. */
ATFDEF atf_session_thread *atf_session_reader_thread(atf_session_reader *r, uint32_t slot);
/* Gives `name` to the symbol entry of function_id that the manifest listed by location
 * only (a tool naming functions offline from the module files). An entry that has a name
 * keeps it (ATF_OK). ATF_E_NOT_FOUND when no entry has that id, ATF_E_ARG for a NULL
 * name, ATF_E_NOMEM. Not thread-safe per reader. */
ATFDEF atf_result atf_session_reader_name_symbol(atf_session_reader *r, uint64_t function_id,
                                                 const char *name);
/* The first timing anchor named `name`, or NULL. Thread-safe. */
ATFDEF const atf_session_anchor *atf_session_reader_anchor(const atf_session_reader *r,
                                                           const char *name);
/* The reading of an exact anchor's clock at trace time t_ns, in its units (1/timescale s):
 * value + floor((t_ns - host_ns) * timescale / 1e9), in exact integer arithmetic (t_ns may
 * be before host_ns). ATF_E_RANGE when the result does not fit an int64, ATF_E_ARG when
 * the anchor is not exact (timescale <= 0) or an argument is NULL. Thread-safe. */
ATFDEF atf_result atf_anchor_value_at(const atf_session_anchor *a, uint64_t t_ns, int64_t *out);

/* First position p in [0, count] whose event has timestamp >= t, by binary search over a
 * time-ordered index file (out_of_order 0 after atf_session_reader_check_order; on any
 * other file the answer means nothing): O(log n) probes. `probes` (optional) receives
 * their number. */
ATFDEF uint64_t atf_index_reader_seek(const atf_index_reader *r, uint64_t t_ns, uint64_t *probes);

/* Zero is the default for every field: every thread, every kind, all time. */
typedef struct atf_merge_filter {
    const uint32_t *slots;       /* only these slots (slot_count of them); NULL = all */
    size_t slot_count;
    uint32_t kinds;              /* bit (1 << kind) per wanted ATF_EVENT_*; 0 = all */
    uint64_t from_ns;            /* events with timestamp >= from_ns */
    uint64_t to_ns;              /* and <= to_ns; 0 = no upper bound */
} atf_merge_filter;

typedef struct atf_merge_item {
    uint32_t slot;               /* thread slot */
    uint64_t seq;                /* index_seq in that thread's file */
    atf_index_event event;
    atf_session_thread *thread;  /* detail: atf_thread_reader_detail_of(&thread->reader, seq) */
    const atf_gap *gap;          /* events were lost right before this one (NULL: none):
                                    its frames cannot be paired across it */
} atf_merge_item;

typedef struct atf__merge_cursor {
    const atf_index_reader *reader;  /* the thread's index events */
    atf__packed_cache *cache;    /* a packed file's blocks as this merge decodes them */
    const uint64_t *order;       /* its sorted permutation; NULL when the file is ordered */
    uint64_t gap_seq;            /* a seq at or past which atf__merge_gap looks for a gap
                                    (the next gap's; 0 for a permuted thread with gaps) */
    uint64_t pos, end;           /* next position in time order; end of the selected range */
    atf_session_thread *thread;
    int layout;
    size_t index;                /* in atf_merge.cursors */
    uint64_t key_pos, key;       /* the merge key of position key_pos, computed early */
} atf__merge_cursor;

typedef struct atf_merge {
    uint64_t probes;             /* binary-search probes of the last seek (read-only) */
    /* private */
    atf__merge_cursor *run;      /* the cursor handing out events, NULL when none */
    uint64_t run_end;            /* it hands out positions below run_end */
    uint64_t lim;                /* whose timestamps are <= lim */
    atf__merge_cursor *cursors;  /* the selected threads, in slot order */
    size_t cursor_count, leaves; /* leaves: the power of two >= cursor_count */
    unsigned depth;              /* log2(leaves) */
    uint64_t *tree;              /* loser tree of keys: [0] the winner, [1, leaves) losers */
    uint64_t base;               /* key = (ts - base) << shift | cursor; UINT64_MAX: done */
    unsigned shift;
    int linear;                  /* the time span does not fit a key: pick by linear scan */
    uint32_t kinds;
    uint64_t from_ns, to_ns;
    atf_session_reader *reader;
} atf_merge;

/* Prepares a merge over `r`, which must stay open and outlive it. Checks the order of the
 * threads it selects that are not checked yet (atf_session_reader_check_order: one pass
 * over their timestamps) and builds the sorted permutations of those out of order, each
 * once per reader (ATF_E_NOMEM if that fails): not thread-safe against other calls on
 * the same reader. Afterwards any number of merges may run over one reader, each used by
 * one thread at a time. */
ATFDEF atf_result atf_merge_init(atf_merge *m, atf_session_reader *r,
                                 const atf_merge_filter *f /* optional */);
/* Private: the slow path of atf_merge_next (a new run); 0 at the end. */
ATFDEF int atf__merge_refill(atf_merge *m);
/* Private: the end of atf_merge_next: zeroes *out, returns ATF_E_RANGE. */
ATFDEF atf_result atf__merge_end(atf_merge_item *out);
/* Private: the gap before event `seq` of cursor c (seq >= c->gap_seq), or NULL; moves
 * c->gap_seq on. */
ATFDEF const atf_gap *atf__merge_gap(atf__merge_cursor *c, uint64_t seq);

/* A read hint for the cache (never faults; the address is formed as an integer, so that
 * it may lie past the end of the data). The merge reads a stream per thread: within a
 * run it asks for the bytes one page ahead (hardware prefetchers stop at page edges),
 * and for the next lines when a thread's next event is keyed. Measured on x86-64 with
 * bench/bench_merge.h. */
#if defined(ATF__CC_GCC) || defined(ATF__CC_CLANG)
#  define ATF__PREFETCH(p, ahead) __builtin_prefetch((const void *)((uintptr_t)(p) + (ahead)))
#else
#  define ATF__PREFETCH(p, ahead) ((void)0)
#endif

/* The next event in (timestamp, slot, seq) order: ATF_OK, or ATF_E_RANGE at the end (and
 * at every later call; *out is zeroed then). Inline: inside a thread's run of consecutive events a call is one
 * comparison and the decode, and the compiler drops the stores of fields the caller never
 * reads; when the lead changes it costs O(log threads) in atf__merge_refill. */
ATF__HOT_INLINE atf_result atf_merge_next(atf_merge *m, atf_merge_item *out) {
    for (;;) {
        atf__merge_cursor *c = m->run;
        if (c && c->pos < m->run_end) {
            uint64_t seq = c->order ? c->order[c->pos] : c->pos;
            const uint8_t *rec = atf__index_record_in(c->reader, c->cache, seq);
            atf_index_event *e = &out->event;
            if (atf__load_le64(rec) <= m->lim) {
                c->pos++;
                ATF__PREFETCH(rec, ATF__MERGE_AHEAD);
                if (m->kinds) {
                    uint32_t kind = c->layout == ATF_LAYOUT_2 ? rec[24] : atf__load_le32(rec + 20);
                    if (kind >= 32 || !(m->kinds & (1u << kind))) continue;
                }
                out->slot = c->thread->slot;
                out->seq = seq;
                out->thread = c->thread;
                out->gap = seq >= c->gap_seq ? atf__merge_gap(c, seq) : NULL;
                /* atf_index_event_decode, written out for this hot path */
                e->timestamp_ns = atf__load_le64(rec);
                e->function_id = atf__load_le64(rec + 8);
                if (c->layout == ATF_LAYOUT_2) {
                    e->detail_seq = atf__load_le64(rec + 16);
                    e->kind = rec[24];
                    e->thread_id = 0;
                    e->call_depth = 0;
                } else {
                    uint32_t d = atf__load_le32(rec + 28);
                    e->thread_id = atf__load_le32(rec + 16);
                    e->kind = atf__load_le32(rec + 20);
                    e->call_depth = atf__load_le32(rec + 24);
                    e->detail_seq = d == ATF_NO_DETAIL_U32 ? ATF_NO_DETAIL : d;
                }
                return ATF_OK;
            }
        }
        if (!atf__merge_refill(m)) return atf__merge_end(out);
    }
}

/* Repositions every thread at its first event with timestamp >= max(t, filter from_ns)
 * by binary search: at most ceil(log2(n + 1)) probes per thread of n events, counted in
 * m->probes. The next atf_merge_next returns the first such event in merge order. */
ATFDEF atf_result atf_merge_seek(atf_merge *m, uint64_t t_ns);
ATFDEF void atf_merge_deinit(atf_merge *m);

/* ==== 13. ktrace ================================================================= >>ktrace */
/* Darwin's kernel trace files, version 3 (ktrace(5)), little-endian throughout: a 64-byte
 * file header, then chunks, each a 16-byte chunk header {tag u32, major u16, minor u16,
 * data size u64} followed by its data. Chunk headers sit at multiples of 8 (data is padded
 * up to the next one); a file may end with fewer than 16 bytes of padding. Chunks that
 * start within the first 16 + header_size bytes are header chunks, the others body
 * chunks. The reader checks the header and hands out chunks in file order without
 * interpreting their data: tags are allocated in <ktrace_chunk.h>, and callers skip the
 * ones they do not know. Nothing a file contains makes it read out of bounds. */
#define ATF_KTRACE_MAGIC 0x55aa0300u          /* file header magic of version 3 */
#define ATF_KTRACE_FILE_HEADER_SIZE 64        /* the fixed file header structure */
#define ATF_KTRACE_CHUNK_HEADER_SIZE 16

typedef enum atf_ktrace_section {
    ATF_KTRACE_HEADER_CHUNK = 0,  /* starts before byte 16 + header_size */
    ATF_KTRACE_BODY_CHUNK = 1     /* everything after the header chunks */
} atf_ktrace_section;

/* The file header, decoded (bytes 56..63 are not described by ktrace(5) and ignored). */
typedef struct atf_ktrace_header {
    uint32_t magic;               /* byte 0: ATF_KTRACE_MAGIC */
    uint16_t major;               /* byte 4: format version of the file */
    uint16_t minor;               /* byte 6 */
    uint64_t header_size;         /* byte 8: bytes after the first 16 up to the end of the
                                     header chunks, chunk headers included; >= 48 */
    uint32_t timebase_numer;      /* byte 16: ns = mach ticks * numer / denom; never 0 */
    uint32_t timebase_denom;      /* byte 20: never 0 */
    uint64_t timestamp;           /* byte 24: a time stamp, in mach ticks */
    uint64_t walltime_secs;       /* byte 32: wall-clock time, seconds since 1970 */
    uint32_t walltime_usecs;      /* byte 40: and microseconds */
    uint32_t minutes_west;        /* byte 44: time zone, minutes west of GMT */
    uint32_t dst;                 /* byte 48: daylight saving time was in effect */
    uint32_t flags;               /* byte 52 */
} atf_ktrace_header;

/* One chunk as read. `data` points into the reader's image and lives until close. */
typedef struct atf_ktrace_chunk {
    uint64_t offset;              /* byte offset of the chunk header in the file */
    uint32_t tag;                 /* chunk type, see <ktrace_chunk.h> */
    uint16_t major;               /* version of the chunk's data */
    uint16_t minor;
    uint64_t size;                /* bytes of data, padding not included */
    const uint8_t *data;          /* `size` bytes */
    atf_ktrace_section section;
} atf_ktrace_chunk;

typedef struct atf_ktrace_reader {
    atf_ktrace_header header;     /* read-only after open */
    uint64_t file_size;
    atf_error error;              /* first error, of open or of the chunk walk */
    char path[512];               /* the path (or name) given at open */
    /* private */
    atf__file_image image;
    uint64_t next;                /* offset of the next chunk header */
    atf_result state;             /* ATF_OK, then ATF_E_RANGE at the end, or the error */
} atf_ktrace_reader;

/* Opens a ktrace v3 file and checks its header: ATF_E_TRUNCATED when shorter than 64
 * bytes or when 16 + header_size passes the end, ATF_E_MAGIC / ATF_E_ENDIAN (byte-swapped
 * magic: a big-endian file), ATF_E_CORRUPT for header_size < 48 or a zero timebase. On
 * failure the reader holds nothing (no close needed) and r->error says what and where.
 * `opt` (optional): only no_mmap applies. Not thread-safe per reader; different readers
 * are independent. */
ATFDEF atf_result atf_ktrace_reader_open(atf_ktrace_reader *r, const char *path,
                                         const atf_reader_options *opt /* optional */);
/* The same over bytes the caller keeps alive until close (`name` is used in errors). */
ATFDEF atf_result atf_ktrace_reader_open_memory(atf_ktrace_reader *r, const void *data,
                                                size_t size, const char *name,
                                                const atf_reader_options *opt);
/* Releases the file; safe on a reader whose open failed. */
ATFDEF void atf_ktrace_reader_close(atf_ktrace_reader *r);
/* The next chunk in file order into *out: ATF_OK; ATF_E_RANGE past the last one; or, for a
 * malformed chunk, ATF_E_TRUNCATED (its data passes the end of the file) or ATF_E_CORRUPT
 * (a header chunk crossing 16 + header_size), with the chunk's offset in r->error. Every
 * later call returns the same code. *out is zeroed unless ATF_OK. Not thread-safe. */
ATFDEF atf_result atf_ktrace_reader_next(atf_ktrace_reader *r, atf_ktrace_chunk *out);
/* mach_ticks in nanoseconds through the file's timebase, exact (floor) and saturating at
 * UINT64_MAX. Thread-safe. */
ATFDEF uint64_t atf_ktrace_time_ns(const atf_ktrace_reader *r, uint64_t mach_ticks);
/* The header's wall-clock time in nanoseconds since 1970, saturating. Thread-safe. */
ATFDEF uint64_t atf_ktrace_wall_ns(const atf_ktrace_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* ATF_H_INCLUDED */

/* ===================================================================================== */
/*                                   IMPLEMENTATION                                       */
/* ===================================================================================== */
#if defined(ATF_IMPLEMENTATION) && !defined(ATF__IMPLEMENTATION_DONE)
#define ATF__IMPLEMENTATION_DONE

/* ==== 1. config ================================================================== >>config */
/* The C library pieces the implementation uses, and the allocator hooks. */
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h> /* malloc (the default ATF_MALLOC), qsort, strtod */
#include <locale.h> /* localeconv: strtod reads the locale's decimal point */
#include <assert.h> /* the default ATF_ASSERT */

#if defined(ATF_STATIC) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
#  define ATF__UNUSED __attribute__((unused))
#else
#  define ATF__UNUSED
#endif
/* Private functions: static, and quiet about being unused when everything is static. */
#define ATF__PRIVATE static ATF__UNUSED ATF_NO_INSTRUMENT


/* ==== 2. result ================================================================== >>result */
/* Names and texts from the one X-macro list, and the error line formatter. */
ATFDEF ATF_NO_INSTRUMENT const char *atf_result_str(atf_result r) {
    switch (r) {
#define ATF__RESULT_TEXT(name, value, text) case name: return text;
        ATF_RESULT_LIST(ATF__RESULT_TEXT)
#undef ATF__RESULT_TEXT
    default: return "unknown result code";
    }
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_result_name(atf_result r) {
    switch (r) {
#define ATF__RESULT_NAME(name, value, text) case name: return #name;
        ATF_RESULT_LIST(ATF__RESULT_NAME)
#undef ATF__RESULT_NAME
    default: return "ATF_E_?";
    }
}

ATFDEF ATF_NO_INSTRUMENT char *atf_error_format(const atf_error *e, char *buf, size_t cap) {
    char values[96] = "";
    char sys[64] = "";
    if (cap == 0) return buf;
    if (e->has_values)
        snprintf(values, sizeof values, " (expected %llu [0x%llx], found %llu [0x%llx])",
                 (unsigned long long)e->expected, (unsigned long long)e->expected,
                 (unsigned long long)e->found, (unsigned long long)e->found);
#if defined(ATF__OS_WINDOWS) /* a GetLastError() code, which strerror() would misname */
    if (e->sys_errno) snprintf(sys, sizeof sys, " (GetLastError %d)", e->sys_errno);
#else
    if (e->sys_errno)
        snprintf(sys, sizeof sys, " (errno %d: %s)", e->sys_errno, strerror(e->sys_errno));
#endif
    snprintf(buf, cap, "%s: offset %llu: %s%s%s: %s", e->path[0] ? e->path : "-",
             (unsigned long long)e->offset, e->what ? e->what : "-", values, sys,
             atf_result_str(e->code));
    return buf;
}

/* Copies src into a fixed buffer, truncating, always NUL-terminated. */
ATF__PRIVATE void atf__copy_str(char *dst, size_t cap, const char *src) {
    size_t n;
    if (cap == 0) return;
    n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Records the first error only: later calls leave an existing error untouched. */
ATF__PRIVATE atf_result atf__error_set(atf_error *e, atf_result code, const char *path,
                                       uint64_t offset, const char *what) {
    if (e->code != ATF_OK || code == ATF_OK) return code;
    e->code = code;
    atf__copy_str(e->path, sizeof e->path, path);
    e->offset = offset;
    e->what = what;
    e->has_values = 0;
    e->expected = e->found = 0;
    e->sys_errno = 0;
    return code;
}

ATF__PRIVATE atf_result atf__error_set_values(atf_error *e, atf_result code, const char *path,
                                              uint64_t offset, const char *what,
                                              uint64_t expected, uint64_t found) {
    if (e->code != ATF_OK || code == ATF_OK) return code;
    atf__error_set(e, code, path, offset, what);
    e->has_values = 1;
    e->expected = expected;
    e->found = found;
    return code;
}

ATF__PRIVATE atf_result atf__error_set_errno(atf_error *e, atf_result code, const char *path,
                                             const char *what, int sys_errno) {
    if (e->code != ATF_OK || code == ATF_OK) return code;
    atf__error_set(e, code, path, 0, what);
    e->sys_errno = sys_errno;
    return code;
}

/* Copies the first error of `from` into `to` unless `to` already has one. */
ATF__PRIVATE void atf__error_adopt(atf_error *to, const atf_error *from) {
    if (to->code == ATF_OK && from->code != ATF_OK) *to = *from;
}


/* ==== 3. platform ============================================================== >>platform */
/* One family of functions per OS service, with the same signature on every OS.
 * Files are mapped read-only (mmap / MapViewOfFile) or read whole into memory; paths are
 * UTF-8 everywhere (converted to UTF-16 on Windows), joined, tested, and directories
 * listed and removed. First the memory and string helpers every section uses. */
#if defined(ATF__OS_WINDOWS)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#else
#  include <dirent.h>
#  include <fcntl.h>
#  include <sys/mman.h>
#  include <sys/stat.h>
#  include <sys/statvfs.h>
#  include <sys/types.h>
#  include <unistd.h>
#endif

enum { ATF__IMAGE_NONE = 0, ATF__IMAGE_BORROWED, ATF__IMAGE_MAPPED, ATF__IMAGE_HEAP };

/* Memory and strings, on every OS alike. */
/* Grows an array of `size`-byte elements to hold one more; 0 on failure. */
ATF__PRIVATE int atf__grow(void **items, size_t *cap, size_t count, size_t size) {
    void *p;
    size_t n;
    if (count < *cap) return 1;
    n = *cap ? *cap * 2 : 16;
    p = ATF_REALLOC(*items, n * size);
    if (!p) return 0;
    *items = p;
    *cap = n;
    return 1;
}

ATF__PRIVATE char *atf__strdup(const char *s) {
    size_t n = strlen(s ? s : "") + 1;
    char *p = (char *)ATF_MALLOC(n);
    if (p) memcpy(p, s ? s : "", n);
    return p;
}

/* 64-byte aligned blocks for rings (cache-line separation of head and tail). */
ATF__PRIVATE void *atf__alloc_aligned(size_t size, void **raw) {
    uint8_t *p = (uint8_t *)ATF_MALLOC(size + 64);
    *raw = p;
    if (!p) return NULL;
    return p + (64 - ((uintptr_t)p & 63u));
}

/* Copies src into dst[cap], cutting at a character boundary, always NUL-terminated. */
ATF__PRIVATE void atf__copy_utf8(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (!cap) return;
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80) n--;
    }
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

ATF__PRIVATE int atf__is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

#if defined(ATF__OS_WINDOWS)
/* UTF-8 -> freshly allocated UTF-16, or NULL. */
ATF__PRIVATE wchar_t *atf__utf8_to_wide(const char *s) {
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    wchar_t *w;
    if (n <= 0) return NULL;
    w = (wchar_t *)ATF_MALLOC((size_t)n * sizeof(wchar_t));
    if (w && MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) != n) {
        ATF_FREE(w);
        w = NULL;
    }
    return w;
}

ATF__PRIVATE atf_result atf__file_map(atf__file_image *img, const char *path, int no_mmap,
                                      atf_error *err) {
    wchar_t *wpath = atf__utf8_to_wide(path);
    HANDLE file, mapping;
    LARGE_INTEGER size;
    memset(img, 0, sizeof *img);
    if (!wpath) return atf__error_set(err, ATF_E_NOMEM, path, 0, "path conversion");
    file = CreateFileW(wpath, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    ATF_FREE(wpath);
    if (file == INVALID_HANDLE_VALUE) {
        DWORD code = GetLastError();
        return atf__error_set_errno(err, (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND)
                                             ? ATF_E_NOT_FOUND : ATF_E_IO,
                                    path, "open", (int)code);
    }
    if (!GetFileSizeEx(file, &size)) {
        int code = (int)GetLastError();
        CloseHandle(file);
        return atf__error_set_errno(err, ATF_E_IO, path, "size", code);
    }
    img->size = (uint64_t)size.QuadPart;
    if (img->size == 0) {
        CloseHandle(file);
        img->kind = ATF__IMAGE_HEAP;
        return ATF_OK;
    }
    if ((uint64_t)(size_t)img->size != img->size)
        return CloseHandle(file), atf__error_set(err, ATF_E_NOMEM, path, 0, "file larger than address space");
    if (!no_mmap) {
        mapping = CreateFileMappingW(file, NULL, PAGE_READONLY, 0, 0, NULL);
        if (mapping) {
            const void *view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
            CloseHandle(mapping);
            if (view) {
                CloseHandle(file);
                img->data = (const uint8_t *)view;
                img->kind = ATF__IMAGE_MAPPED;
                return ATF_OK;
            }
        }
    }
    {
        uint8_t *buf = (uint8_t *)ATF_MALLOC((size_t)img->size);
        uint64_t done = 0;
        if (!buf) return CloseHandle(file), atf__error_set(err, ATF_E_NOMEM, path, 0, "file buffer");
        while (done < img->size) {
            DWORD chunk = (img->size - done) > 0x40000000u ? 0x40000000u : (DWORD)(img->size - done);
            DWORD got = 0;
            if (!ReadFile(file, buf + done, chunk, &got, NULL) || got == 0) {
                int code = (int)GetLastError();
                ATF_FREE(buf);
                CloseHandle(file);
                return atf__error_set_errno(err, ATF_E_IO, path, "read", code);
            }
            done += got;
        }
        CloseHandle(file);
        img->data = buf;
        img->kind = ATF__IMAGE_HEAP;
    }
    return ATF_OK;
}

ATF__PRIVATE void atf__file_unmap(atf__file_image *img) {
    if (img->kind == ATF__IMAGE_MAPPED) UnmapViewOfFile((void *)(uintptr_t)img->data);
    else if (img->kind == ATF__IMAGE_HEAP) ATF_FREE((void *)(uintptr_t)img->data);
    memset(img, 0, sizeof *img);
}
#else /* POSIX */
ATF__PRIVATE atf_result atf__file_read_whole(atf__file_image *img, int fd, const char *path,
                                             atf_error *err) {
    uint8_t *buf = (uint8_t *)ATF_MALLOC((size_t)img->size);
    uint64_t done = 0;
    if (!buf) return atf__error_set(err, ATF_E_NOMEM, path, 0, "file buffer");
    while (done < img->size) {
        ssize_t got = read(fd, buf + done, (size_t)(img->size - done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            int code = got < 0 ? errno : 0;
            ATF_FREE(buf);
            return got < 0 ? atf__error_set_errno(err, ATF_E_IO, path, "read", code)
                           : atf__error_set(err, ATF_E_IO, path, done, "file shrank while read");
        }
        done += (uint64_t)got;
    }
    img->data = buf;
    img->kind = ATF__IMAGE_HEAP;
    return ATF_OK;
}

ATF__PRIVATE atf_result atf__file_map(atf__file_image *img, const char *path, int no_mmap,
                                      atf_error *err) {
    struct stat st;
    atf_result rc = ATF_OK;
    int fd;
    memset(img, 0, sizeof *img);
    do fd = open(path, O_RDONLY); while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return atf__error_set_errno(err, errno == ENOENT ? ATF_E_NOT_FOUND : ATF_E_IO, path,
                                    "open", errno);
    if (fstat(fd, &st) != 0) {
        rc = atf__error_set_errno(err, ATF_E_IO, path, "fstat", errno);
    } else if (!S_ISREG(st.st_mode)) {
        rc = atf__error_set(err, ATF_E_ARG, path, 0, "not a regular file");
    } else if ((uint64_t)(size_t)st.st_size != (uint64_t)st.st_size) {
        rc = atf__error_set(err, ATF_E_NOMEM, path, 0, "file larger than address space");
    } else {
        img->size = (uint64_t)st.st_size;
        img->kind = ATF__IMAGE_HEAP; /* an empty file needs no buffer */
        if (img->size > 0 && !no_mmap) {
            void *p = mmap(NULL, (size_t)img->size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                img->data = (const uint8_t *)p;
                img->kind = ATF__IMAGE_MAPPED;
            }
        }
        if (img->size > 0 && img->kind != ATF__IMAGE_MAPPED)
            rc = atf__file_read_whole(img, fd, path, err);
    }
    close(fd);
    if (rc != ATF_OK) memset(img, 0, sizeof *img);
    return rc;
}

ATF__PRIVATE void atf__file_unmap(atf__file_image *img) {
    if (img->kind == ATF__IMAGE_MAPPED) munmap((void *)(uintptr_t)img->data, (size_t)img->size);
    else if (img->kind == ATF__IMAGE_HEAP) ATF_FREE((void *)(uintptr_t)img->data);
    memset(img, 0, sizeof *img);
}
#endif

/* dir + "/" + leaf into buf; ATF_E_ARG when it does not fit. */
ATF__PRIVATE atf_result atf__path_join(char *buf, size_t cap, const char *dir, const char *leaf) {
    size_t a = strlen(dir), b = strlen(leaf);
    if (a + 1 + b + 1 > cap) return ATF_E_ARG;
    memcpy(buf, dir, a);
    buf[a] = '/';
    memcpy(buf + a + 1, leaf, b + 1);
    return ATF_OK;
}

#if defined(ATF__OS_WINDOWS)
ATF__PRIVATE int atf__path_exists(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    int yes = w && GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES;
    ATF_FREE(w);
    return yes;
}
ATF__PRIVATE int atf__dir_remove(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    int ok = w && RemoveDirectoryW(w);
    ATF_FREE(w);
    return ok ? 0 : -1;
}
/* 1 when dir holds nothing but (optionally) an entry named `allowed` (*has_allowed tells),
 * 0 when it holds anything else, -1 when it cannot be read. */
ATF__PRIVATE int atf__dir_holds_only(const char *dir, const char *allowed, int *has_allowed) {
    char pattern[1100];
    wchar_t *w, *wa;
    WIN32_FIND_DATAW fd;
    HANDLE h;
    int only = 1;
    *has_allowed = 0;
    snprintf(pattern, sizeof pattern, "%s\\*", dir);
    w = atf__utf8_to_wide(pattern);
    wa = atf__utf8_to_wide(allowed);
    h = w && wa ? FindFirstFileW(w, &fd) : INVALID_HANDLE_VALUE;
    ATF_FREE(w);
    if (h == INVALID_HANDLE_VALUE) {
        ATF_FREE(wa);
        return -1;
    }
    do {
        if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0) continue;
        if (wcscmp(fd.cFileName, wa) == 0) *has_allowed = 1;
        else only = 0;
    } while (FindNextFileW(h, &fd));
    FindClose(h);
    ATF_FREE(wa);
    return only;
}
#else
ATF__PRIVATE int atf__path_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}
ATF__PRIVATE int atf__dir_remove(const char *path) { return rmdir(path); }
ATF__PRIVATE int atf__dir_holds_only(const char *dir, const char *allowed, int *has_allowed) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int only = 1;
    *has_allowed = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (strcmp(e->d_name, allowed) == 0) *has_allowed = 1;
        else only = 0;
    }
    closedir(d);
    return only;
}

/* Whether dir/name is a directory (a file named thread_3 is no thread). */
ATF__PRIVATE int atf__is_subdir(const char *dir, const char *name) {
    char path[1100];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return 0;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
#endif


/* ---- 3.1 OS services ---------------------------------------------------------- >>services */
/* The OS services beyond mapped files, one family per OS: files created, opened, read and
 * written at an offset, cut and synced; directories made and synced, atomic rename, free
 * space, ids, local time, sleeping, an atomic increment, locks, threads and the
 * thread-exit hook that closes a departing thread's writer. */
#if defined(ATF__OS_WINDOWS)
typedef HANDLE atf__fd;
#  define ATF__FD_NONE INVALID_HANDLE_VALUE
#else
#  include <time.h>
#  if !defined(ATF_NO_THREADS) || defined(ATF__OS_APPLE) /* Apple: pthread_threadid_np */
#    include <pthread.h>
#  endif
#  if defined(ATF__OS_LINUX)
#    include <sched.h> /* sched_getaffinity (a GNU service) */
#    include <sys/syscall.h>
#  endif
#  if defined(ATF__OS_APPLE)
#    include <mach/mach_time.h>
#  endif
typedef int atf__fd;
#  define ATF__FD_NONE (-1)
#endif

/* Process-wide state: every static the library keeps outside the objects its caller
 * holds (sessions, writers, readers), one place per platform. Each is either set once
 * (with a relaxed atomic, every thread computing the same value) or guarded by the global
 * lock; the tag of the section that uses it is in its comment. */
static long atf__crc32c__chosen; /* >>crc32c: 0 until first use, then an atf_crc32c_impl */
static long atf__crc32c__hw;     /* >>crc32c: 0 until probed, then ATF__CRC32C_PROBED | 1 << impl */
static atf_session *atf__live_sessions; /* >>tls: open sessions, under the global lock */
static uint64_t atf__session_ids;       /* >>tls: the last session id handed out */
#if defined(ATF_NO_THREADS)
#  define ATF__THREAD_LOCAL             /* one thread: no global lock, no exit hook */
#elif defined(ATF__OS_WINDOWS)
#  if defined(ATF__CC_MSVC)
#    define ATF__THREAD_LOCAL __declspec(thread)
#  else
#    define ATF__THREAD_LOCAL __thread
#  endif
static SRWLOCK atf__global_srw = SRWLOCK_INIT;          /* >>services: the global lock */
static DWORD atf__fls_index = FLS_OUT_OF_INDEXES;       /* >>services: thread-exit hook slot */
static INIT_ONCE atf__fls_once = INIT_ONCE_STATIC_INIT;
#else
#  define ATF__THREAD_LOCAL __thread
static pthread_mutex_t atf__global_mutex = PTHREAD_MUTEX_INITIALIZER; /* >>services: global lock */
static pthread_key_t atf__exit_key;                     /* >>services: thread-exit hook key */
static int atf__exit_key_ok;
static pthread_once_t atf__exit_once = PTHREAD_ONCE_INIT;
#endif
#if defined(ATF__OS_WINDOWS)
static LONGLONG volatile atf__qpc_freq; /* >>clock: QueryPerformanceFrequency, 0 until read */
#elif defined(ATF__OS_APPLE)
static uint64_t atf__mach_ratio;        /* >>clock: numer << 32 | denom, 0 until known */
#endif
/* Per thread (>>tls): the writers this thread has, one per session it met, and what it is
 * doing now. */
static ATF__THREAD_LOCAL struct atf__tls_entry *atf__tls_list;
static ATF__THREAD_LOCAL int atf__tls_armed;     /* thread-exit hook installed */
static ATF__THREAD_LOCAL int atf__tls_no_attach; /* exiting, a drain, or inside the library */
static ATF__THREAD_LOCAL int atf__tls_draining;  /* holds a drain lock or a slot lock */

#if defined(ATF__OS_WINDOWS)
ATF__PRIVATE int atf__last_os_error(void) { return (int)GetLastError(); }

ATF__PRIVATE atf__fd atf__fd_create(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    HANDLE h;
    if (!w) return ATF__FD_NONE;
    h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
                    CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    ATF_FREE(w);
    return h;
}
/* An existing file, for reading and writing in place (not truncated). */
ATF__PRIVATE atf__fd atf__fd_open_rw(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    HANDLE h;
    if (!w) return ATF__FD_NONE;
    h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
                    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    ATF_FREE(w);
    return h;
}
/* A file opened for reading in sequence (the order check), or ATF__FD_NONE. */
ATF__PRIVATE atf__fd atf__fd_open_read(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    HANDLE h;
    if (!w) return ATF__FD_NONE;
    h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, OPEN_EXISTING, FILE_FLAG_SEQUENTIAL_SCAN, NULL);
    ATF_FREE(w);
    return h;
}
/* Writes n bytes at `off`: 0, or -1 with the OS error pending and *done_out (optional)
 * holding how many bytes reached the file before the failure. */
ATF__PRIVATE int atf__fd_pwrite(atf__fd fd, const void *buf, size_t n, uint64_t off,
                                size_t *done_out) {
    const uint8_t *p = (const uint8_t *)buf;
    size_t total = 0;
    int rc = 0;
    while (total < n) {
        OVERLAPPED ov;
        size_t left = n - total;
        DWORD chunk = left > 0x40000000u ? 0x40000000u : (DWORD)left, done = 0;
        BOOL ok;
        memset(&ov, 0, sizeof ov);
        ov.Offset = (DWORD)off;
        ov.OffsetHigh = (DWORD)(off >> 32);
        ok = WriteFile(fd, p + total, chunk, &done, &ov);
        total += done;
        off += done;
        if (!ok || done == 0) {
            if (ok) SetLastError(ERROR_WRITE_FAULT);
            rc = -1;
            break;
        }
    }
    if (done_out) *done_out = total;
    return rc;
}
ATF__PRIVATE int atf__fd_pread(atf__fd fd, void *buf, size_t n, uint64_t off) {
    uint8_t *p = (uint8_t *)buf;
    while (n) {
        OVERLAPPED ov;
        DWORD chunk = n > 0x40000000u ? 0x40000000u : (DWORD)n, done = 0;
        memset(&ov, 0, sizeof ov);
        ov.Offset = (DWORD)off;
        ov.OffsetHigh = (DWORD)(off >> 32);
        if (!ReadFile(fd, p, chunk, &done, &ov) || done == 0) return -1;
        p += done;
        n -= done;
        off += done;
    }
    return 0;
}
ATF__PRIVATE int atf__fd_truncate(atf__fd fd, uint64_t size) {
    FILE_END_OF_FILE_INFO info;
    info.EndOfFile.QuadPart = (LONGLONG)size;
    return SetFileInformationByHandle(fd, FileEndOfFileInfo, &info, sizeof info) ? 0 : -1;
}
ATF__PRIVATE int atf__fd_sync(atf__fd fd) { return FlushFileBuffers(fd) ? 0 : -1; }
ATF__PRIVATE void atf__fd_close(atf__fd fd) { CloseHandle(fd); }
ATF__PRIVATE void atf__file_remove(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    if (w) DeleteFileW(w);
    ATF_FREE(w);
}
/* 0 when the directory was made, 1 when it existed, -1 on error (OS error pending). */
ATF__PRIVATE int atf__mkdir(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    int rc;
    if (!w) return -1;
    rc = CreateDirectoryW(w, NULL) ? 0 : GetLastError() == ERROR_ALREADY_EXISTS ? 1 : -1;
    ATF_FREE(w);
    return rc;
}
ATF__PRIVATE void atf__dir_sync(const char *path) { (void)path; /* NTFS: metadata is journaled */ }
/* The bytes an unprivileged writer may still take on the file system holding `path`, and
 * its size. 0, or -1 on error. */
ATF__PRIVATE int atf__fs_space(const char *path, uint64_t *avail, uint64_t *size) {
    wchar_t *w = atf__utf8_to_wide(path);
    ULARGE_INTEGER a, t;
    int ok = w && GetDiskFreeSpaceExW(w, &a, &t, NULL);
    ATF_FREE(w);
    if (!ok) return -1;
    *avail = a.QuadPart;
    *size = t.QuadPart;
    return 0;
}
/* A reader that holds the target open (readers share delete) makes the replace fail until
 * it closes the file: a tool reading manifest.json while the drain rewrites it, or a file
 * that `atf pack` replaces. Every replace is tried again for up to about a second before
 * it counts as a failure (a target that stays refused, e.g. read-only, costs that second). */
#  define ATF__RENAME_RETRY_MS 1000u
ATF__PRIVATE int atf__rename_replace(const char *from, const char *to) {
    wchar_t *a = atf__utf8_to_wide(from), *b = atf__utf8_to_wide(to);
    ULONGLONG start = GetTickCount64();
    DWORD why = ERROR_NOT_ENOUGH_MEMORY;
    int ok = 0;
    while (a && b) {
        if (MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
            ok = 1;
            break;
        }
        why = GetLastError();
        if ((why != ERROR_ACCESS_DENIED && why != ERROR_SHARING_VIOLATION) ||
            GetTickCount64() - start >= ATF__RENAME_RETRY_MS)
            break;
        Sleep(5);
    }
    ATF_FREE(a);
    ATF_FREE(b);
    if (!ok) SetLastError(why); /* the caller reads the error of the last try */
    return ok ? 0 : -1;
}
ATF__PRIVATE uint32_t atf__os_thread_id(void) { return (uint32_t)GetCurrentThreadId(); }
ATF__PRIVATE uint32_t atf__os_pid(void) { return (uint32_t)GetCurrentProcessId(); }
/* the drain thread's idle wait; a producer waiting for its consumer */
ATF__PRIVATE void atf__sleep_us(uint32_t us) { Sleep(us < 1000 ? 1 : us / 1000); }
ATF__PRIVATE void atf__local_time_name(char *buf, size_t cap) {
    SYSTEMTIME t;
    GetLocalTime(&t);
    snprintf(buf, cap, "session_%04u%02u%02u_%02u%02u%02u", (unsigned)t.wYear, (unsigned)t.wMonth,
             (unsigned)t.wDay, (unsigned)t.wHour, (unsigned)t.wMinute, (unsigned)t.wSecond);
}
#else
ATF__PRIVATE int atf__last_os_error(void) { return errno; }

ATF__PRIVATE atf__fd atf__fd_create(const char *path) {
    int fd;
    do fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); while (fd < 0 && errno == EINTR);
    return fd;
}
ATF__PRIVATE atf__fd atf__fd_open_rw(const char *path) {
    int fd;
    do fd = open(path, O_RDWR | O_CLOEXEC); while (fd < 0 && errno == EINTR);
    return fd;
}
ATF__PRIVATE atf__fd atf__fd_open_read(const char *path) {
    int fd;
    do fd = open(path, O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
    return fd;
}
/* Writes n bytes at `off`: 0, or -1 with errno set and *done_out (optional) holding how
 * many bytes reached the file before the failure. */
ATF__PRIVATE int atf__fd_pwrite(atf__fd fd, const void *buf, size_t n, uint64_t off,
                                size_t *done_out) {
    const uint8_t *p = (const uint8_t *)buf;
    size_t total = 0;
    int rc = 0;
    while (total < n) {
        ssize_t done = pwrite(fd, p + total, n - total, (off_t)(off + total));
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) {
            if (done == 0) errno = EIO;
            rc = -1;
            break;
        }
        total += (size_t)done;
    }
    if (done_out) *done_out = total;
    return rc;
}
ATF__PRIVATE int atf__fd_pread(atf__fd fd, void *buf, size_t n, uint64_t off) {
    uint8_t *p = (uint8_t *)buf;
    while (n) {
        ssize_t done = pread(fd, p, n, (off_t)off);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) {
            if (done == 0) errno = EIO;
            return -1;
        }
        p += done;
        n -= (size_t)done;
        off += (uint64_t)done;
    }
    return 0;
}
ATF__PRIVATE int atf__fd_truncate(atf__fd fd, uint64_t size) {
    int rc;
    do rc = ftruncate(fd, (off_t)size); while (rc != 0 && errno == EINTR);
    return rc;
}
ATF__PRIVATE int atf__fd_sync(atf__fd fd) {
#  if defined(ATF__OS_APPLE)
    return fcntl(fd, F_FULLFSYNC) == 0 ? 0 : fsync(fd);
#  elif defined(ATF__OS_LINUX)
    return fdatasync(fd);
#  else
    return fsync(fd);
#  endif
}
ATF__PRIVATE void atf__fd_close(atf__fd fd) { close(fd); }
ATF__PRIVATE void atf__file_remove(const char *path) { unlink(path); }
/* 0 when the directory was made, 1 when it existed, -1 on error (errno set). */
ATF__PRIVATE int atf__mkdir(const char *path) {
    if (mkdir(path, 0755) == 0) return 0;
    return errno == EEXIST ? 1 : -1;
}
/* Makes a rename or a new file in `path` durable. */
ATF__PRIVATE void atf__dir_sync(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}
ATF__PRIVATE int atf__rename_replace(const char *from, const char *to) { return rename(from, to); }
/* The bytes an unprivileged writer may still take on the file system holding `path`, and
 * its size. 0, or -1 on error. */
ATF__PRIVATE int atf__fs_space(const char *path, uint64_t *avail, uint64_t *size) {
    struct statvfs v;
    if (statvfs(path, &v) != 0) return -1;
    *avail = (uint64_t)v.f_bavail * v.f_frsize;
    *size = (uint64_t)v.f_blocks * v.f_frsize;
    return 0;
}
ATF__PRIVATE uint32_t atf__os_thread_id(void) {
#  if defined(ATF__OS_LINUX)
    return (uint32_t)syscall(SYS_gettid);
#  elif defined(ATF__OS_APPLE)
    uint64_t id = 0;
    pthread_threadid_np(NULL, &id);
    return (uint32_t)id;
#  else
    return (uint32_t)getpid();
#  endif
}
ATF__PRIVATE uint32_t atf__os_pid(void) { return (uint32_t)getpid(); }
/* the drain thread's idle wait; a producer waiting for its consumer */
ATF__PRIVATE void atf__sleep_us(uint32_t us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u);
    ts.tv_nsec = (long)(us % 1000000u) * 1000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
ATF__PRIVATE void atf__local_time_name(char *buf, size_t cap) {
    time_t now = time(NULL);
    struct tm t;
    localtime_r(&now, &t);
    snprintf(buf, cap, "session_%04d%02d%02d_%02d%02d%02d", t.tm_year + 1900, t.tm_mon + 1,
             t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
}
#endif

/* Creates the directories of `path` one level at a time (mkdir -p). */
ATF__PRIVATE int atf__mkdir_all(const char *path) {
    char buf[1024];
    size_t i, n = strlen(path);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (i = 1; i < n; i++) {
        if (buf[i] != '/' && buf[i] != '\\') continue;
        buf[i] = '\0';
        if (buf[i - 1] != ':' && atf__mkdir(buf) < 0) return -1;
        buf[i] = path[i];
    }
    return atf__mkdir(buf) < 0 ? -1 : 0;
}

/* One atomic increment, release-ordered (a counter another thread polls). */
ATF__PRIVATE void atf__atomic_inc_u32(uint32_t *p) {
#if defined(ATF__CC_MSVC)
    _InterlockedIncrement((volatile long *)p);
#else
    __atomic_add_fetch(p, 1, __ATOMIC_RELEASE);
#endif
}

/* Adds d (+1 or -1) to a counter several threads change; the new value. */
ATF__PRIVATE uint64_t atf__atomic_add_u64(uint64_t *p, int64_t d) {
#if defined(ATF__CC_MSVC)
    return (uint64_t)_InterlockedExchangeAdd64((volatile __int64 *)p, d) + (uint64_t)d;
#else
    return __atomic_add_fetch(p, (uint64_t)d, __ATOMIC_ACQ_REL);
#endif
}

/* Sets *p to 0; what it held. */
ATF__PRIVATE uint32_t atf__atomic_take_u32(uint32_t *p) {
#if defined(ATF__CC_MSVC)
    return (uint32_t)_InterlockedExchange((volatile long *)p, 0);
#else
    return __atomic_exchange_n(p, 0u, __ATOMIC_ACQ_REL);
#endif
}

/* The processors the calling thread may run on (at least 1): on Linux its affinity mask
 * (when <sched.h> gave CPU_COUNT, which takes _GNU_SOURCE, and the mask fits a
 * cpu_set_t), on Windows the process's within its processor group, else those online.
 * `taskset -c 0` makes a machine of one processor for the session, whose drain then
 * shares the producers' core and caches. Not on a hot path. */
ATF__PRIVATE uint64_t atf__cpu_count(void) {
#if defined(ATF__OS_WINDOWS)
    SYSTEM_INFO si;
    DWORD_PTR mine = 0, all;
    uint64_t n = 0;
    /* both masks are 0 for a process with threads in several processor groups */
    if (GetProcessAffinityMask(GetCurrentProcess(), &mine, &all))
        for (; mine; mine &= mine - 1) n++;
    if (n) return n;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors ? (uint64_t)si.dwNumberOfProcessors : 1;
#else
    long n;
#  if defined(ATF__OS_LINUX) && defined(CPU_COUNT)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (uint64_t)CPU_COUNT(&set);
#  endif
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint64_t)n : 1;
#endif
}

/* Locks and threads; with ATF_NO_THREADS the locks are no-ops and there is no drain
 * thread. The global lock guards the registry of live sessions that thread-exit hooks
 * consult; it is statically initialized so that no setup call is needed. */
#if defined(ATF_NO_THREADS)
typedef int atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { *m = 0; }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { (void)m; }
ATF__PRIVATE int atf__mutex_trylock(atf__mutex *m) { (void)m; return 1; }
ATF__PRIVATE void atf__global_lock(void) {}
ATF__PRIVATE void atf__global_unlock(void) {}
#elif defined(ATF__OS_WINDOWS)
typedef CRITICAL_SECTION atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { InitializeCriticalSection(m); }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { DeleteCriticalSection(m); }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { EnterCriticalSection(m); }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { LeaveCriticalSection(m); }
ATF__PRIVATE int atf__mutex_trylock(atf__mutex *m) { return TryEnterCriticalSection(m) != 0; }
ATF__PRIVATE void atf__global_lock(void) { AcquireSRWLockExclusive(&atf__global_srw); }
ATF__PRIVATE void atf__global_unlock(void) { ReleaseSRWLockExclusive(&atf__global_srw); }
typedef HANDLE atf__thread;
typedef struct atf__thread_start_ctx { void (*fn)(void *); void *arg; } atf__thread_start_ctx;
ATF__PRIVATE DWORD WINAPI atf__thread_trampoline(LPVOID p) {
    atf__thread_start_ctx *c = (atf__thread_start_ctx *)p;
    c->fn(c->arg);
    return 0;
}
/* Returns 0, or the system's error number. */
ATF__PRIVATE int atf__thread_start(atf__thread *t, atf__thread_start_ctx *ctx) {
    *t = CreateThread(NULL, 0, atf__thread_trampoline, ctx, 0, NULL);
    return *t ? 0 : (GetLastError() ? (int)GetLastError() : -1);
}
ATF__PRIVATE void atf__thread_join(atf__thread t) {
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}
#else
typedef pthread_mutex_t atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { pthread_mutex_init(m, NULL); }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { pthread_mutex_destroy(m); }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { pthread_mutex_lock(m); }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { pthread_mutex_unlock(m); }
/* 1 when taken; 0 when held (also by a thread that a fork left behind) */
ATF__PRIVATE int atf__mutex_trylock(atf__mutex *m) { return pthread_mutex_trylock(m) == 0; }
ATF__PRIVATE void atf__global_lock(void) { pthread_mutex_lock(&atf__global_mutex); }
ATF__PRIVATE void atf__global_unlock(void) { pthread_mutex_unlock(&atf__global_mutex); }
typedef pthread_t atf__thread;
typedef struct atf__thread_start_ctx { void (*fn)(void *); void *arg; } atf__thread_start_ctx;
ATF__PRIVATE void *atf__thread_trampoline(void *p) {
    atf__thread_start_ctx *c = (atf__thread_start_ctx *)p;
    c->fn(c->arg);
    return NULL;
}
ATF__PRIVATE int atf__thread_start(atf__thread *t, atf__thread_start_ctx *ctx) {
    return pthread_create(t, NULL, atf__thread_trampoline, ctx);
}
ATF__PRIVATE void atf__thread_join(atf__thread t) { pthread_join(t, NULL); }
#endif

/* Thread-exit hook: atf__thread_exit_arm(v) (v non-NULL) makes the calling thread run
 * atf__thread_exit(v) when it exits (pthread key destructor / fiber-local storage
 * callback). Without threads there is nothing to hook. */
ATF__PRIVATE void atf__thread_exit(void *value);
#if defined(ATF_NO_THREADS)
ATF__PRIVATE void atf__thread_exit_arm(void *value) {
    (void)value;
    (void)atf__thread_exit; /* never called: no thread exits to hook */
}
#elif defined(ATF__OS_WINDOWS)
ATF__PRIVATE VOID WINAPI atf__fls_callback(PVOID value) {
    if (value) atf__thread_exit(value);
}
ATF__PRIVATE BOOL CALLBACK atf__fls_make(PINIT_ONCE once, PVOID param, PVOID *ctx) {
    (void)once;
    (void)param;
    (void)ctx;
    atf__fls_index = FlsAlloc(atf__fls_callback);
    return TRUE;
}
ATF__PRIVATE void atf__thread_exit_arm(void *value) {
    InitOnceExecuteOnce(&atf__fls_once, atf__fls_make, NULL, NULL);
    if (atf__fls_index != FLS_OUT_OF_INDEXES) FlsSetValue(atf__fls_index, value);
}
#else
ATF__PRIVATE void atf__exit_key_destroy(void *value) {
    if (value) atf__thread_exit(value);
}
ATF__PRIVATE void atf__exit_key_make(void) {
    atf__exit_key_ok = pthread_key_create(&atf__exit_key, atf__exit_key_destroy) == 0;
}
ATF__PRIVATE void atf__thread_exit_arm(void *value) {
    pthread_once(&atf__exit_once, atf__exit_key_make);
    if (atf__exit_key_ok) pthread_setspecific(atf__exit_key, value);
}
#endif

/* Faults the pages of [p, p + n) in, writable, without reading or writing a byte of them,
 * so another thread may be storing into them meanwhile: the drain faults a ring in ahead
 * of its producer, whose stores then never stop for the kernel. 0, or -1 where the
 * system cannot (Linux before 5.14, other systems; or on a failure): the pages then fault
 * in at their first store, as any memory does. */
ATF__PRIVATE int atf__mem_populate(void *p, size_t n) {
#if defined(ATF__OS_LINUX)
#  ifdef MADV_POPULATE_WRITE
#    define ATF__MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#  else
#    define ATF__MADV_POPULATE_WRITE 23 /* Linux 5.14; headers may be older than the kernel */
#  endif
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo, hi;
    if (page <= 0 || (page & (page - 1)) != 0 || !n) return -1;
    /* whole pages: those that hold the range are mapped whole */
    lo = (uintptr_t)p & ~(uintptr_t)(page - 1);
    hi = ((uintptr_t)p + n + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    return madvise((void *)lo, hi - lo, ATF__MADV_POPULATE_WRITE) == 0 ? 0 : -1;
#else
    (void)p;
    (void)n;
    return -1;
#endif
}

/* Asks for transparent huge pages on the whole 2-MiB pages of [p, p + n) (Linux; the
 * system's policy decides, nothing changes where it says never): a ring of 4-KiB pages
 * costs its producer a fault per 128 events on the first lap, and under a hypervisor that
 * shadows the guest's page tables the first store to each page costs microseconds even
 * after atf__mem_populate (measured on a 2-core VM: about 4 us a page, 8-10 ns a call of
 * a traced fib(32) whose 32 MiB ring laps 14 times; with huge pages none of it). */
ATF__PRIVATE void atf__mem_hugepages(void *p, size_t n) {
#if defined(ATF__OS_LINUX) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + n) & ~(huge - 1);
    if (lo < hi) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

/* Takes the cache lines of [p, p + n) out of every cache (x86-64; nothing elsewhere): the
 * drain does it to the ring lines it has read. A producer storing to a line that the
 * drain's core still holds waits for that copy to be invalidated; with the copies gone,
 * the store finds the line in memory like any other miss. Measured on a 2-core VM
 * (AMD EPYC), a traced fib(32) with a 2-MiB ring: 417 ms of CPU without this, 292 with
 * it, the hooks twice as slow before; a 32-MiB ring ran at 297 either way, its lines
 * long gone from the drain's caches when the producer came back to them. */
ATF__PRIVATE void atf__mem_evict(const void *p, size_t n) {
#if defined(ATF__ARCH_X64) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG) || defined(ATF__CC_MSVC))
    const uintptr_t line = 64;
    uintptr_t at = (uintptr_t)p & ~(line - 1), end = (uintptr_t)p + n;
    for (; at < end; at += line) {
#  if defined(ATF__CC_MSVC)
        _mm_clflush((const void *)at);
#  else
        __builtin_ia32_clflush((const void *)at);
#  endif
    }
#else
    (void)p;
    (void)n;
#endif
}

#if defined(ATF__ARCH_X64)
#  define ATF__ARCH_CODE ATF_ARCH_X86_64
#elif defined(ATF__ARCH_ARM64)
#  define ATF__ARCH_CODE ATF_ARCH_ARM64
#else
#  define ATF__ARCH_CODE ATF_ARCH_UNKNOWN
#endif
#if defined(ATF__OS_WINDOWS)
#  define ATF__OS_CODE ATF_OS_WINDOWS
#elif defined(ATF__OS_APPLE)
#  include <TargetConditionals.h>
#  if TARGET_OS_IPHONE
#    define ATF__OS_CODE ATF_OS_IOS
#  else
#    define ATF__OS_CODE ATF_OS_MACOS
#  endif
#elif defined(ATF__OS_ANDROID)
#  define ATF__OS_CODE ATF_OS_ANDROID
#elif defined(ATF__OS_LINUX)
#  define ATF__OS_CODE ATF_OS_LINUX
#else
#  define ATF__OS_CODE ATF_OS_UNKNOWN
#endif


/* ==== 4. bytes ==================================================================== >>bytes */
/* Every helper of this section is an inline function of the declarations half. */

/* ==== 5. format ================================================================== >>format */
/* Encode/decode of every record of both layouts. Offsets are written out as
 * literals next to the field they address so that this section reads like the tables of
 * docs/FORMAT.md. Layout 1 (version 1) is the deployed struct layout of TRACE_SCHEMA.md;
 * layout 2 (version 2) is atf-format-spec.txt. */
ATF__PRIVATE void atf__store_magic(uint8_t *p, const char *magic) { memcpy(p, magic, 4); }

/* Versions 1 and 2; `packed_too` also takes version 3 (index files only). */
ATF__PRIVATE atf_result atf__check_identity(const uint8_t *in, const char *magic, int packed_too) {
    if (memcmp(in, magic, 4) != 0) return ATF_E_MAGIC;
    if (in[4] != ATF_ENDIAN_LITTLE) return ATF_E_ENDIAN;
    if (in[5] != ATF_LAYOUT_1 && in[5] != ATF_LAYOUT_2 && !(packed_too && in[5] == ATF_LAYOUT_PACKED))
        return ATF_E_VERSION;
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT void atf_index_header_encode(const atf_index_header *h, uint8_t out[64]) {
    memset(out, 0, 64);
    atf__store_magic(out, ATF_INDEX_MAGIC);
    out[4] = h->endian;
    out[5] = h->version;
    out[6] = h->arch;
    out[7] = h->os;
    atf__store_le32(out + 8, h->flags);
    atf__store_le32(out + 12, h->thread_id);
    out[16] = h->clock_type;
    if (h->version == ATF_LAYOUT_2) {
        atf__store_le32(out + 20, h->event_size);
        atf__store_le64(out + 24, h->event_count);
    } else {
        atf__store_le32(out + 24, h->event_size);
        atf__store_le32(out + 28, h->event_count > UINT32_MAX ? UINT32_MAX : (uint32_t)h->event_count);
    }
    atf__store_le64(out + 32, h->events_offset);
    atf__store_le64(out + 40, h->footer_offset);
    atf__store_le64(out + 48, h->time_start_ns);
    atf__store_le64(out + 56, h->time_end_ns);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_index_header_decode(const uint8_t in[64],
                                                            atf_index_header *h) {
    atf_result rc = atf__check_identity(in, ATF_INDEX_MAGIC, 1);
    memset(h, 0, sizeof *h);
    if (rc == ATF_E_MAGIC) return rc;
    h->endian = in[4];
    h->version = in[5];
    h->arch = in[6];
    h->os = in[7];
    h->flags = atf__load_le32(in + 8);
    h->thread_id = atf__load_le32(in + 12);
    h->clock_type = in[16];
    if (h->version == ATF_LAYOUT_2) {
        h->event_size = atf__load_le32(in + 20);
        h->event_count = atf__load_le64(in + 24);
    } else {
        h->event_size = atf__load_le32(in + 24);
        h->event_count = atf__load_le32(in + 28);
    }
    h->events_offset = atf__load_le64(in + 32);
    h->footer_offset = atf__load_le64(in + 40);
    h->time_start_ns = atf__load_le64(in + 48);
    h->time_end_ns = atf__load_le64(in + 56);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT void atf_index_event_encode(int layout, const atf_index_event *e,
                                                     uint8_t out[32]) {
    atf__store_le64(out + 0, e->timestamp_ns);
    atf__store_le64(out + 8, e->function_id);
    if (layout == ATF_LAYOUT_2) {
        atf__store_le64(out + 16, e->detail_seq);
        memset(out + 24, 0, 8);
        out[24] = (uint8_t)e->kind;
    } else {
        atf__store_le32(out + 16, e->thread_id);
        atf__store_le32(out + 20, e->kind);
        atf__store_le32(out + 24, e->call_depth);
        atf__store_le32(out + 28, e->detail_seq >= ATF_NO_DETAIL_U32 ? ATF_NO_DETAIL_U32
                                                                     : (uint32_t)e->detail_seq);
    }
}

ATFDEF ATF_NO_INSTRUMENT void atf_index_event_decode(int layout, const uint8_t in[32],
                                                     atf_index_event *e) {
    e->timestamp_ns = atf__load_le64(in + 0);
    e->function_id = atf__load_le64(in + 8);
    if (layout == ATF_LAYOUT_2) {
        e->detail_seq = atf__load_le64(in + 16);
        e->kind = in[24];
        e->thread_id = 0;
        e->call_depth = 0;
    } else {
        uint32_t seq = atf__load_le32(in + 28);
        e->thread_id = atf__load_le32(in + 16);
        e->kind = atf__load_le32(in + 20);
        e->call_depth = atf__load_le32(in + 24);
        e->detail_seq = seq == ATF_NO_DETAIL_U32 ? ATF_NO_DETAIL : seq;
    }
}

ATFDEF ATF_NO_INSTRUMENT void atf_index_footer_encode(const atf_index_footer *f, uint8_t out[64]) {
    memset(out, 0, 64);
    atf__store_magic(out, ATF_INDEX_FOOTER_MAGIC);
    atf__store_le32(out + 4, f->checksum);
    atf__store_le64(out + 8, f->event_count);
    atf__store_le64(out + 16, f->time_start_ns);
    atf__store_le64(out + 24, f->time_end_ns);
    atf__store_le64(out + 32, f->bytes_written);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_index_footer_decode(const uint8_t in[64],
                                                            atf_index_footer *f) {
    memset(f, 0, sizeof *f);
    if (memcmp(in, ATF_INDEX_FOOTER_MAGIC, 4) != 0) return ATF_E_MAGIC;
    f->checksum = atf__load_le32(in + 4);
    f->event_count = atf__load_le64(in + 8);
    f->time_start_ns = atf__load_le64(in + 16);
    f->time_end_ns = atf__load_le64(in + 24);
    f->bytes_written = atf__load_le64(in + 32);
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT void atf_detail_header_encode(const atf_detail_header *h,
                                                       uint8_t out[64]) {
    memset(out, 0, 64);
    atf__store_magic(out, ATF_DETAIL_MAGIC);
    out[4] = h->endian;
    out[5] = h->version;
    out[6] = h->arch;
    out[7] = h->os;
    atf__store_le32(out + 8, h->flags);
    atf__store_le32(out + 12, h->thread_id);
    atf__store_le64(out + 20, h->events_offset);
    atf__store_le64(out + 28, h->event_count);
    atf__store_le64(out + 36, h->bytes_length);
    atf__store_le64(out + 44, h->index_seq_start);
    atf__store_le64(out + 52, h->index_seq_end);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_detail_header_decode(const uint8_t in[64],
                                                             atf_detail_header *h) {
    atf_result rc = atf__check_identity(in, ATF_DETAIL_MAGIC, 0);
    memset(h, 0, sizeof *h);
    if (rc == ATF_E_MAGIC) return rc;
    h->endian = in[4];
    h->version = in[5];
    h->arch = in[6];
    h->os = in[7];
    h->flags = atf__load_le32(in + 8);
    h->thread_id = atf__load_le32(in + 12);
    h->events_offset = atf__load_le64(in + 20);
    h->event_count = atf__load_le64(in + 28);
    h->bytes_length = atf__load_le64(in + 36);
    h->index_seq_start = atf__load_le64(in + 44);
    h->index_seq_end = atf__load_le64(in + 52);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT void atf_detail_event_header_encode(int layout,
                                                             const atf_detail_event_header *e,
                                                             uint8_t out[24]) {
    atf__store_le32(out + 0, e->total_length);
    atf__store_le16(out + 4, e->type);
    atf__store_le16(out + 6, e->flags);
    if (layout == ATF_LAYOUT_2) {
        atf__store_le64(out + 8, e->index_seq);
    } else {
        atf__store_le32(out + 8, (uint32_t)e->index_seq);
        atf__store_le32(out + 12, e->thread_id);
    }
    atf__store_le64(out + 16, e->timestamp_ns);
}

ATFDEF ATF_NO_INSTRUMENT void atf_detail_event_header_decode(int layout, const uint8_t in[24],
                                                             atf_detail_event_header *e) {
    e->total_length = atf__load_le32(in + 0);
    e->type = atf__load_le16(in + 4);
    e->flags = atf__load_le16(in + 6);
    if (layout == ATF_LAYOUT_2) {
        e->index_seq = atf__load_le64(in + 8);
        e->thread_id = 0;
    } else {
        e->index_seq = atf__load_le32(in + 8);
        e->thread_id = atf__load_le32(in + 12);
    }
    e->timestamp_ns = atf__load_le64(in + 16);
}

ATFDEF ATF_NO_INSTRUMENT void atf_detail_footer_encode(const atf_detail_footer *f,
                                                       uint8_t out[64]) {
    memset(out, 0, 64);
    atf__store_magic(out, ATF_DETAIL_FOOTER_MAGIC);
    atf__store_le32(out + 4, f->checksum);
    atf__store_le64(out + 8, f->event_count);
    atf__store_le64(out + 16, f->bytes_length);
    atf__store_le64(out + 24, f->time_start_ns);
    atf__store_le64(out + 32, f->time_end_ns);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_detail_footer_decode(const uint8_t in[64],
                                                             atf_detail_footer *f) {
    memset(f, 0, sizeof *f);
    if (memcmp(in, ATF_DETAIL_FOOTER_MAGIC, 4) != 0) return ATF_E_MAGIC;
    f->checksum = atf__load_le32(in + 4);
    f->event_count = atf__load_le64(in + 8);
    f->bytes_length = atf__load_le64(in + 16);
    f->time_start_ns = atf__load_le64(in + 24);
    f->time_end_ns = atf__load_le64(in + 32);
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT size_t atf_detail_payload_encode(const atf_detail_payload *p, uint8_t *out,
                                                          size_t cap) {
    size_t need = ATF_DETAIL_PAYLOAD_SIZE + p->stack_size, i;
    ATF_ASSERT(cap >= need && (p->stack_size == 0 || p->stack));
    if (cap < need) return 0;
    atf__store_le64(out + 0, p->function_id);
    for (i = 0; i < 8; i++) atf__store_le64(out + 8 + 8 * i, p->x[i]);
    atf__store_le64(out + 72, p->lr);
    atf__store_le64(out + 80, p->fp);
    atf__store_le64(out + 88, p->sp);
    atf__store_le16(out + 96, p->stack_size);
    atf__store_le16(out + 98, 0);
    if (p->stack_size) memcpy(out + ATF_DETAIL_PAYLOAD_SIZE, p->stack, p->stack_size);
    return need;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_detail_payload_decode(const uint8_t *in, size_t len,
                                                              atf_detail_payload *p) {
    size_t i;
    memset(p, 0, sizeof *p);
    if (len < ATF_DETAIL_PAYLOAD_SIZE) return ATF_E_TRUNCATED;
    p->function_id = atf__load_le64(in + 0);
    for (i = 0; i < 8; i++) p->x[i] = atf__load_le64(in + 8 + 8 * i);
    p->lr = atf__load_le64(in + 72);
    p->fp = atf__load_le64(in + 80);
    p->sp = atf__load_le64(in + 88);
    p->stack_size = atf__load_le16(in + 96);
    if ((size_t)p->stack_size > len - ATF_DETAIL_PAYLOAD_SIZE) return ATF_E_TRUNCATED;
    p->stack = in + ATF_DETAIL_PAYLOAD_SIZE;
    return ATF_OK;
}

/* The header shared by the side files of a thread (gaps.atf, pauses.atf): magic, endian,
 * version 1, record size 32, thread id. */
ATF__PRIVATE ATF_NO_INSTRUMENT void atf__side_header_encode(const char *magic, uint32_t thread_id,
                                                            uint8_t out[16]) {
    memcpy(out, magic, 4);
    out[4] = ATF_ENDIAN_LITTLE;
    out[5] = 1;
    atf__store_le16(out + 6, 32);
    atf__store_le32(out + 8, thread_id);
    atf__store_le32(out + 12, 0);
}

ATF__PRIVATE ATF_NO_INSTRUMENT atf_result atf__side_header_decode(const char *magic,
                                                                  const uint8_t in[16],
                                                                  uint32_t *thread_id) {
    if (memcmp(in, magic, 4) != 0) return ATF_E_MAGIC;
    if (in[4] != ATF_ENDIAN_LITTLE) return ATF_E_ENDIAN;
    if (in[5] != 1) return ATF_E_VERSION;
    if (atf__load_le16(in + 6) != 32) return ATF_E_CORRUPT;
    if (thread_id) *thread_id = atf__load_le32(in + 8);
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT void atf_gaps_header_encode(uint32_t thread_id, uint8_t out[16]) {
    atf__side_header_encode(ATF_GAPS_MAGIC, thread_id, out);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_gaps_header_decode(const uint8_t in[16],
                                                           uint32_t *thread_id) {
    return atf__side_header_decode(ATF_GAPS_MAGIC, in, thread_id);
}

ATFDEF ATF_NO_INSTRUMENT void atf_pauses_header_encode(uint32_t thread_id, uint8_t out[16]) {
    atf__side_header_encode(ATF_PAUSES_MAGIC, thread_id, out);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_pauses_header_decode(const uint8_t in[16],
                                                             uint32_t *thread_id) {
    return atf__side_header_decode(ATF_PAUSES_MAGIC, in, thread_id);
}

ATFDEF ATF_NO_INSTRUMENT void atf_pause_encode(const atf_pause *p, uint8_t out[32]) {
    atf__store_le64(out, p->index_seq);
    atf__store_le64(out + 8, p->start_ns);
    atf__store_le64(out + 16, p->end_ns);
    atf__store_le32(out + 24, p->reason);
    atf__store_le32(out + 28, 0);
}

ATFDEF ATF_NO_INSTRUMENT void atf_pause_decode(const uint8_t in[32], atf_pause *p) {
    p->index_seq = atf__load_le64(in);
    p->start_ns = atf__load_le64(in + 8);
    p->end_ns = atf__load_le64(in + 16);
    p->reason = atf__load_le32(in + 24);
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_pause_reason_str(uint32_t reason) {
    return reason == ATF_PAUSE_SELF_DRAIN ? "self-drain" : "unknown";
}

ATFDEF ATF_NO_INSTRUMENT void atf_gap_encode(const atf_gap *g, uint8_t out[32]) {
    atf__store_le64(out, g->index_seq);
    atf__store_le64(out + 8, g->index_lost);
    atf__store_le32(out + 16, g->detail_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)g->detail_lost);
    atf__store_le32(out + 20, g->reason);
    atf__store_le64(out + 24, g->first_lost_ns);
}

ATFDEF ATF_NO_INSTRUMENT void atf_gap_decode(const uint8_t in[32], atf_gap *g) {
    g->index_seq = atf__load_le64(in);
    g->index_lost = atf__load_le64(in + 8);
    g->detail_lost = atf__load_le32(in + 16);
    g->reason = atf__load_le32(in + 20);
    g->first_lost_ns = atf__load_le64(in + 24);
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_gap_reason_str(uint32_t reason) {
    switch (reason) {
    case ATF_GAP_DROPPED: return "dropped";
    case ATF_GAP_TIMEOUT: return "timeout";
    case ATF_GAP_IO: return "io";
    case ATF_GAP_STOPPED: return "stopped";
    case ATF_GAP_SKIPPED: return "skipped";
    case ATF_GAP_DISCARDED: return "discarded";
    default: return "unknown";
    }
}

ATFDEF ATF_NO_INSTRUMENT size_t atf_utf8_sequence(const void *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    unsigned char lo = 0x80, hi = 0xBF;
    size_t len, k;
    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) len = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) len = 3;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4) len = 4;
    else return 0;
    if (p[0] == 0xE0) lo = 0xA0;
    if (p[0] == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    if (p[0] == 0xF0) lo = 0x90;
    if (p[0] == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    if (n < len || p[1] < lo || p[1] > hi) return 0;
    for (k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 0;
    return len;
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_event_kind_str(uint32_t kind) {
    switch (kind) {
    case ATF_EVENT_CALL: return "call";
    case ATF_EVENT_RETURN: return "return";
    case ATF_EVENT_EXCEPTION: return "exception";
    default: return "unknown";
    }
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_arch_str(uint32_t arch) {
    switch (arch) {
    case ATF_ARCH_X86_64: return "x86_64";
    case ATF_ARCH_ARM64: return "arm64";
    default: return "unknown";
    }
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_os_str(uint32_t os) {
    switch (os) {
    case ATF_OS_IOS: return "ios";
    case ATF_OS_ANDROID: return "android";
    case ATF_OS_MACOS: return "macos";
    case ATF_OS_LINUX: return "linux";
    case ATF_OS_WINDOWS: return "windows";
    default: return "unknown";
    }
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_clock_str(uint32_t clock_type) {
    switch (clock_type) {
    case ATF_CLOCK_MACH_CONTINUOUS: return "mach_continuous";
    case ATF_CLOCK_QPC: return "qpc";
    case ATF_CLOCK_BOOTTIME: return "boottime";
    default: return "unknown";
    }
}


/* ---- 5.1 packed index lane ----------------------------------------------------- >>packed */
/* The tag byte of a packed event, then its fields in this order, each present only when
 * the tag says so (the timestamp always):
 *   kind     bits 0-1: 0 call, 1 return, 2 exception, 3 another kind (varint follows)
 *   stamp    varint: the difference from the previous stamp, modulo 2^64
 *   function bit 2: zigzag varint of the difference from the function last seen at this
 *            depth (modulo 64), else that function
 *   depth    bit 3: zigzag varint of the difference from the predicted depth: the depth
 *            after the previous event (a call's + 1, a return's or an exception's own)
 *            for a call or another kind, one less for a return or an exception
 *   link     bits 4-5: 0 no detail, 1 the previous link + 1, 2 varint of the link
 *   thread   bit 6: varint, else the previous event's (at first, the header's)
 *   bit 7 and link code 3 are reserved: a decoder rejects them. */
#define ATF__PACK_EXPLICIT_KIND 3u
#define ATF__PACK_FUNCTION 0x04u
#define ATF__PACK_DEPTH 0x08u
#define ATF__PACK_LINK_NEXT 0x10u
#define ATF__PACK_LINK_GIVEN 0x20u
#define ATF__PACK_THREAD 0x40u
#define ATF__PACK_FN_SLOTS 64u

typedef struct atf__pack_state {
    uint64_t ts;                        /* the previous stamp */
    uint32_t depth;                     /* depth after the previous event */
    uint32_t thread;                    /* the previous event's thread */
    uint32_t link;                      /* the previous link (ATF_NO_DETAIL_U32 at first) */
    uint64_t fn[ATF__PACK_FN_SLOTS];    /* function last seen at each depth, modulo 64 */
} atf__pack_state;

ATF__PRIVATE void atf__pack_state_init(atf__pack_state *st, uint32_t thread_id) {
    memset(st, 0, sizeof *st);
    st->thread = thread_id;
    st->link = ATF_NO_DETAIL_U32;
}

ATF__HOT_INLINE uint8_t *atf__varint_put(uint8_t *p, uint64_t v) {
    while (v >= 0x80u) {
        *p++ = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads a varint of at most `bits` bits; NULL when it runs past `end` or its field. */
ATF__PRIVATE const uint8_t *atf__varint_get_long(const uint8_t *p, const uint8_t *end,
                                                 unsigned bits, uint64_t *v) {
    uint64_t x = 0;
    unsigned shift = 0;
    for (;;) {
        uint8_t b;
        if (p == end) return NULL;
        b = *p++;
        if (shift >= bits || (bits - shift < 7 && (b & 0x7Fu) >> (bits - shift)))
            return NULL; /* bits past the field */
        x |= (uint64_t)(b & 0x7Fu) << shift;
        if (!(b & 0x80u)) break;
        shift += 7;
    }
    *v = x;
    return p;
}

/* The same, the one-byte case (most stamps and every small difference) inline. */
ATF__HOT_INLINE const uint8_t *atf__varint_get(const uint8_t *p, const uint8_t *end, unsigned bits,
                                               uint64_t *v) {
    if (p != end && *p < 0x80u) {
        *v = *p;
        return p + 1;
    }
    return atf__varint_get_long(p, end, bits, v);
}

/* Steps over a varint of at most `bits` (32 or 64) bits that lies whole before `end`, as
 * atf__varint_get checks it (no more than 5 or 10 bytes, no bits past the field); NULL
 * when malformed. */
ATF__HOT_INLINE const uint8_t *atf__varint_skip(const uint8_t *p, const uint8_t *end,
                                                unsigned bits) {
    unsigned most = bits == 32 ? 5u : 10u, i = 0;
    uint8_t top = bits == 32 ? 0x0Fu : 0x01u; /* what the last byte may hold */
    for (;;) {
        if (p + i == end) return NULL;
        if (!(p[i] & 0x80u)) break;
        if (++i == most) return NULL;
    }
    return i + 1 == most && p[i] > top ? NULL : p + i + 1;
}

ATF__HOT_INLINE uint64_t atf__zigzag(uint64_t diff) {
    return (diff << 1) ^ (0 - (diff >> 63));
}

ATF__HOT_INLINE uint64_t atf__unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1u)); }

/* The coders below avoid branching on what varies from event to event in a real trace
 * (call or return, a stamp of one byte or two, a function that differs or not, a link or
 * none): such a branch mispredicts on about every other event, and a mispredict costs
 * as much as coding several events. */

/* Whether the event of kind `kind` closes a frame (a return or an exception: its depth is
 * its call's): 1 or 0, by arithmetic. */
ATF__HOT_INLINE uint32_t atf__pack_unwinds(uint32_t kind) {
    return kind - ATF_EVENT_RETURN < 2u;
}

/* Loads of layout-1 records in the coders' loops: atf__load_le64's value, but clang 14
 * splits the byte-wise form back into eight byte loads when part of the value is used
 * on its own (the depth's slot: measured, 1.7x the encoder's time); on a little-endian
 * host a memcpy is one load with every compiler. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
ATF__INLINE uint64_t atf__pack_load_le64(const uint8_t *p) {
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return v;
}
#elif defined(ATF__CC_MSVC) && (defined(ATF__ARCH_X64) || defined(ATF__ARCH_ARM64))
ATF__INLINE uint64_t atf__pack_load_le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
#else
ATF__INLINE uint64_t atf__pack_load_le64(const uint8_t *p) { return atf__load_le64(p); }
#endif

/* The encoder's general case is called out of line: inlined into atf__pack_run, its
 * registers crowd the common case's loop, which then spills (measured: 5-8 % slower on
 * fib's events). */
#if defined(ATF__CC_GCC) || defined(ATF__CC_CLANG)
#  define ATF__PACK_OUT_OF_LINE __attribute__((noinline))
#elif defined(ATF__CC_MSVC)
#  define ATF__PACK_OUT_OF_LINE __declspec(noinline)
#else
#  define ATF__PACK_OUT_OF_LINE
#endif

/* atf__varint_put for the lengths most fields have, below 2^14, without a branch on
 * whether it is one byte or two: writes two bytes, of which the first or both count.
 * The byte that does not count lies within the event's ATF_PACKED_EVENT_MAX: the next
 * field or event writes over it, or it stays past the payload's end. */
ATF__HOT_INLINE uint8_t *atf__varint_put_short(uint8_t *p, uint64_t v) {
    unsigned more = v >= 0x80u;
    if (v >= 0x4000u) return atf__varint_put(p, v);
    p[0] = (uint8_t)(v | more << 7);
    p[1] = (uint8_t)(v >> 7);
    return p + 1 + more;
}

/* The stamp delta and the function difference `diff` at p, as every event with no
 * explicit kind codes them: the difference is written whether present or not (a 0
 * then, two bytes that the next field or event writes over, within the event's room)
 * and counted only when present, so that calls and returns alternating between known
 * and new functions cost no mispredicts. Returns the end. */
ATF__HOT_INLINE uint8_t *atf__pack_delta_fn(uint8_t *p, uint64_t delta, uint64_t diff) {
    uint8_t *with_fn;
    p = atf__varint_put_short(p, delta);
    with_fn = atf__varint_put_short(p, atf__zigzag(diff));
    return diff ? with_fn : p;
}

/* Codes any event: the encoder's general case, which atf__pack_run takes for what its
 * common case does not cover. A present field is written where it goes; the stamp and
 * function differences as atf__pack_delta_fn writes them. */
ATF__PACK_OUT_OF_LINE ATF__PRIVATE uint8_t *atf__pack_event(atf__pack_state *st, const uint8_t *rec,
                                                           uint8_t *out) {
    uint64_t ts = atf__pack_load_le64(rec), fid = atf__pack_load_le64(rec + 8);
    uint64_t thread_kind = atf__pack_load_le64(rec + 16), depth_link = atf__pack_load_le64(rec + 24);
    uint32_t thread = (uint32_t)thread_kind, kind = (uint32_t)(thread_kind >> 32);
    uint32_t depth = (uint32_t)depth_link, link = (uint32_t)(depth_link >> 32);
    uint32_t unwinds = atf__pack_unwinds(kind), want_depth = st->depth - unwinds;
    uint64_t *slot = &st->fn[depth & (ATF__PACK_FN_SLOTS - 1u)];
    unsigned tag = kind - 1u; /* the kind code of a call, a return or an exception */
    unsigned has_fn = fid != *slot, has_link = link != ATF_NO_DETAIL_U32;
    unsigned next = link == st->link + 1u;
    uint8_t *p = out + 1;
    if (tag > 2u) {
        tag = ATF__PACK_EXPLICIT_KIND;
        p = atf__varint_put(p, kind);
    }
    p = atf__pack_delta_fn(p, ts - st->ts, fid - *slot);
    if (depth != want_depth) {
        tag |= ATF__PACK_DEPTH;
        p = atf__varint_put(p, atf__zigzag((uint64_t)(int64_t)(int32_t)(depth - want_depth)));
    }
    if (has_link && !next) p = atf__varint_put(p, link);
    if (thread != st->thread) {
        tag |= ATF__PACK_THREAD;
        p = atf__varint_put(p, thread);
        st->thread = thread;
    }
    /* link code 1 (ATF__PACK_LINK_NEXT) or 2 (ATF__PACK_LINK_GIVEN) when there is one */
    tag |= has_fn << 2 | has_link << (4 + !next);
    out[0] = (uint8_t)tag;
    *slot = fid;
    st->link = has_link ? link : st->link;
    st->ts = ts;
    st->depth = depth + 1u - unwinds;
    return p;
}

ATF__PRIVATE ATF_NO_INSTRUMENT void atf__packed_lane_encode(uint8_t out[ATF_PACKED_LANE_SIZE], uint32_t block_events) {
    memset(out, 0, ATF_PACKED_LANE_SIZE);
    memcpy(out, ATF_PACKED_LANE_MAGIC, 4);
    atf__store_le32(out + 4, block_events);
}

/* Codes `count` records after those `st` has seen, into `out`; returns the end. The state
 * is worked on in a local copy: stores through `out` (bytes, which may alias anything)
 * then cannot touch it, and it stays in registers (measured: twice as fast).
 *
 * The common shape of a traced program's events is coded here, in two bytes: a call or
 * a return of the same thread, no link, its depth and function as predicted, a stamp
 * delta below 128 (the tag is then the kind code, 0 or 1, and the stamp one byte). One
 * test decides it, with no branch on the kind: with same = thread | 1 << 32 (the high
 * word of a call), x = thread_kind - same is 0 for a call and 1 << 32 for a return of
 * that thread, anything else otherwise; its high word u is then the kind code and 1 for
 * the return that unwinds. The depth is kept as nd = ~depth: depth_link + 1 + ~(depth -
 * u) (as 32 bits, which is nd + u) is 0 modulo 2^64 exactly when the record's depth is
 * the predicted depth - u and its link is 0xFFFFFFFF (none: the high word overflows).
 * Such an event changes no function slot and no link, and leaves the depth at
 * depth + 1 - 2u. An event of that shape (`shape` 0) with a longer stamp delta or another
 * function than its depth's slot is coded here too, as atf__pack_event codes it (the
 * tag, the delta, the function difference when present): about half of a real
 * program's events are (measured on the SQLite shell's trace, where taking them out of
 * line cost 4.8 ns an event against 2.8). Every other event is coded by atf__pack_event. */
ATF__PRIVATE uint8_t *atf__pack_run(atf__pack_state *st, const uint8_t *events, size_t count,
                                    uint8_t *out) {
    atf__pack_state local = *st;
    uint64_t ts = local.ts, same = (uint64_t)ATF_EVENT_CALL << 32 | local.thread;
    uint32_t nd = ~local.depth;
    const uint8_t *rec = events, *stop = events + count * ATF_INDEX_EVENT_SIZE;
    for (; rec != stop; rec += ATF_INDEX_EVENT_SIZE) {
        uint64_t now = atf__pack_load_le64(rec), fid = atf__pack_load_le64(rec + 8);
        uint64_t x = atf__pack_load_le64(rec + 16) - same, depth_link = atf__pack_load_le64(rec + 24);
        uint32_t u = (uint32_t)(x >> 32);
        uint64_t delta = now - ts, *slot = &local.fn[depth_link & (ATF__PACK_FN_SLOTS - 1u)];
        uint64_t shape = (x & ~((uint64_t)1 << 32)) | (depth_link + 1u + (uint32_t)(nd + u));
        if ((shape | delta >> 7 | (fid ^ *slot)) == 0) {
            out[0] = (uint8_t)u;
            out[1] = (uint8_t)delta;
            out += 2;
            ts = now;
            nd = nd - 1u + 2u * u;
            continue;
        }
        if (shape == 0) { /* the same shape, a longer stamp delta or another function */
            out[0] = (uint8_t)(u | (unsigned)(fid != *slot) << 2);
            out = atf__pack_delta_fn(out + 1, delta, fid - *slot);
            *slot = fid;
            ts = now;
            nd = nd - 1u + 2u * u;
            continue;
        }
        local.ts = ts;
        local.depth = ~nd;
        out = atf__pack_event(&local, rec, out);
        ts = local.ts;
        nd = ~local.depth;
        same = (uint64_t)ATF_EVENT_CALL << 32 | local.thread;
    }
    local.ts = ts;
    local.depth = ~nd;
    *st = local;
    return out;
}

/* The 16-byte header of a block of `events` events whose payload has `len` bytes and
 * CRC32-C `crc`. */
ATF__PRIVATE ATF_NO_INSTRUMENT void atf__packed_block_header(uint8_t out[ATF_PACKED_BLOCK_HEADER_SIZE],
                                                             uint32_t events, uint32_t len,
                                                             uint32_t crc) {
    atf__store_le32(out, events);
    atf__store_le32(out + 4, len);
    atf__store_le32(out + 8, crc);
    atf__store_le32(out + 12, 0);
}

ATFDEF ATF_NO_INSTRUMENT size_t atf_packed_encode(const uint8_t *events, size_t count,
                                                  uint32_t thread_id, uint8_t *out) {
    atf__pack_state st;
    atf__pack_state_init(&st, thread_id);
    return (size_t)(atf__pack_run(&st, events, count, out) - out);
}

/* The varint at p when it has one byte or two and both bytes lie before `end`, read with
 * no branch on which: its length, or 0 (a longer varint, or one near the end, which the
 * caller reads with atf__varint_get_long, as strictly as ever). A varint of two bytes
 * fits any field. */
ATF__HOT_INLINE unsigned atf__varint_peek2(const uint8_t *p, const uint8_t *end, uint64_t *v) {
    unsigned b0, b1, more;
    if (end - p < 2) return 0;
    b0 = p[0];
    b1 = p[1];
    more = b0 >> 7;
    if (more & b1 >> 7) return 0;
    *v = (b0 & 0x7Fu) | ((b1 << 7) & (0u - more));
    return 1u + more;
}

/* Decodes one event into rec; NULL when the payload is malformed. Few branches depend on
 * the event (see atf__pack_event): the kind's depth prediction and the link are
 * arithmetic, the stamp and function differences of one byte or two are read alike, and
 * the function difference is read whether present or not, then kept or not. */
ATF__HOT_INLINE const uint8_t *atf__unpack_event(atf__pack_state *st, const uint8_t *p,
                                              const uint8_t *end, uint8_t *rec) {
    unsigned tag = *p++, n;
    uint64_t v = 0, fid = 0, ts;
    uint32_t kind = (tag & 3u) + 1u, unwinds, depth, link;
    uint64_t *slot;
    if (tag & 0x80u || (tag & 0x30u) == 0x30u) return NULL;
    if ((tag & 3u) == ATF__PACK_EXPLICIT_KIND) {
        if (!(p = atf__varint_get(p, end, 32, &v))) return NULL;
        kind = (uint32_t)v;
    }
    if ((n = atf__varint_peek2(p, end, &v)) != 0) p += n;
    else if (!(p = atf__varint_get_long(p, end, 64, &v))) return NULL;
    ts = st->ts + v;
    unwinds = atf__pack_unwinds(kind);
    depth = st->depth - unwinds;
    n = atf__varint_peek2(p, end, &v);
    if (tag & ATF__PACK_FUNCTION) {
        if (n) p += n;
        else if (!(p = atf__varint_get_long(p, end, 64, &v))) return NULL;
        fid = atf__unzigzag(v); /* the difference, applied once the depth is known */
    }
    if (tag & ATF__PACK_DEPTH) {
        if (!(p = atf__varint_get(p, end, 32, &v))) return NULL;
        depth += (uint32_t)atf__unzigzag(v); /* an int32 difference, modulo 2^32 */
    }
    slot = &st->fn[depth & (ATF__PACK_FN_SLOTS - 1u)];
    fid += *slot;
    link = st->link + (tag >> 4 & 1u); /* ATF__PACK_LINK_NEXT */
    if (tag & ATF__PACK_LINK_GIVEN) {
        if (!(p = atf__varint_get(p, end, 32, &v))) return NULL;
        link = (uint32_t)v;
    }
    st->link = link;
    if (tag & ATF__PACK_THREAD) {
        if (!(p = atf__varint_get(p, end, 32, &v))) return NULL;
        st->thread = (uint32_t)v;
    }
    /* the ring's stores: byte-wise ones are merged by some compilers into a vector built
     * on the stack, which stalls the next load (measured: 3x the decoder's time) */
    atf__ring_store_le64(rec, ts);
    atf__ring_store_le64(rec + 8, fid);
    atf__ring_store_le64(rec + 16, (uint64_t)kind << 32 | st->thread); /* two fields a store */
    atf__ring_store_le64(rec + 24, (uint64_t)((tag & 0x30u) ? link : ATF_NO_DETAIL_U32) << 32 | depth);
    *slot = fid;
    st->ts = ts;
    st->depth = depth + 1u - unwinds;
    return p;
}

/* The record of a call (u 0) or a return (u 1) with no link, as the decoder's loop
 * writes them; call: the kind and thread word of a call of the thread. */
ATF__HOT_INLINE void atf__unpack_plain(uint8_t *rec, uint64_t ts, uint64_t fid, uint64_t call,
                                      unsigned u, uint32_t depth) {
    atf__ring_store_le64(rec, ts);
    atf__ring_store_le64(rec + 8, fid);
    atf__ring_store_le64(rec + 16, call + ((uint64_t)u << 32));
    atf__ring_store_le64(rec + 24, (uint64_t)ATF_NO_DETAIL_U32 << 32 | depth);
}

/* Decodes `count` events from p (before end) into `events` after those `st` has seen;
 * NULL when the payload is malformed, else where the events end. The common shape of
 * atf__pack_run is decoded here with one test of its two bytes (tag 0 or 1, a stamp byte
 * below 0x80), its state in registers and no store but the record's; its second shape
 * (a longer delta, a function difference, which updates the function's slot) here too,
 * with a few more tests (a real program's events: measured 12 % faster than through
 * atf__unpack_event); every other event by atf__unpack_event. Every event takes two
 * bytes at least, so a run of common ones never reaches past (end - p) / 2 events: only
 * the loop's count is tested. */
ATF__PRIVATE const uint8_t *atf__unpack_run(atf__pack_state *st, const uint8_t *p,
                                            const uint8_t *end, size_t count, uint8_t *events) {
    uint8_t *rec = events;
    uint64_t ts = st->ts, call = (uint64_t)ATF_EVENT_CALL << 32 | st->thread;
    uint32_t depth = st->depth;
    while (count) {
        size_t n = (size_t)(end - p) / 2; /* events that may lie before end */
        if (n > count) n = count;
        for (; n; n--) {
            unsigned two = atf__load_le16(p), u = two & 1u; /* u: 1 for a return */
            if (two & 0x80FEu) break;
            depth -= u;
            ts += two >> 8;
            atf__unpack_plain(rec, ts, st->fn[depth & (ATF__PACK_FN_SLOTS - 1u)], call, u, depth);
            depth += 1u - u;
            p += 2;
            rec += ATF_INDEX_EVENT_SIZE;
            count--;
        }
        if (!count) break;
        if (p == end) return NULL;
        { /* atf__pack_run's second shape, its stamp delta and function difference (when
             * present) of one or two bytes each; anything else, atf__unpack_event */
            unsigned tag = p[0], u = tag & 1u, ts_len, fn_len = 0;
            uint64_t delta = 0, diff = 0, fid, *slot;
            int has_fn = (tag & ATF__PACK_FUNCTION) != 0;
            if ((tag & ~(ATF__PACK_FUNCTION | 1u)) == 0 &&
                (ts_len = atf__varint_peek2(p + 1, end, &delta)) != 0 &&
                (!has_fn || (fn_len = atf__varint_peek2(p + 1 + ts_len, end, &diff)) != 0)) {
                depth -= u;
                ts += delta;
                slot = &st->fn[depth & (ATF__PACK_FN_SLOTS - 1u)];
                fid = *slot + atf__unzigzag(diff);
                *slot = fid; /* before the record's stores, which may alias it */
                atf__unpack_plain(rec, ts, fid, call, u, depth);
                depth += 1u - u;
                p += 1 + ts_len + fn_len;
                rec += ATF_INDEX_EVENT_SIZE;
                count--;
                continue;
            }
        }
        st->ts = ts;
        st->depth = depth;
        if (!(p = atf__unpack_event(st, p, end, rec))) return NULL;
        ts = st->ts;
        depth = st->depth;
        call = (uint64_t)ATF_EVENT_CALL << 32 | st->thread;
        rec += ATF_INDEX_EVENT_SIZE;
        count--;
    }
    st->ts = ts;
    st->depth = depth;
    return p;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_packed_decode(const uint8_t *in, size_t len, size_t count,
                                                      uint32_t thread_id, uint8_t *events) {
    const uint8_t *end = in + len, *p;
    atf__pack_state st;
    if (count == 0) return len == 0 ? ATF_OK : ATF_E_CORRUPT; /* (in may be NULL then) */
    atf__pack_state_init(&st, thread_id);
    p = atf__unpack_run(&st, in, end, count, events);
    return p != NULL && p == end ? ATF_OK : ATF_E_CORRUPT;
}

/* ==== 6. crc32c ================================================================== >>crc32c */
/* CRC32-C through interchangeable paths: slicing-by-16 tables (portable), the
 * x86-64 crc32 instruction in three streams merged with PCLMULQDQ (long buffers fold with
 * VPCLMULQDQ on 512- or 256-bit registers where the CPU has it), and the arm64 crc32c
 * instructions. Private paths carry the raw register; public calls add the inversions and
 * dispatch to the path chosen once. */
#if !defined(ATF_NO_HW_CRC) && defined(ATF__ARCH_X64) && \
    (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG) || defined(ATF__CC_MSVC))
#  define ATF__CRC32C_X64 1
/* VPCLMULQDQ (on 512- and on 256-bit registers) needs a compiler that knows it. */
#  if (defined(ATF__CC_GCC) && __GNUC__ >= 8) || \
      (defined(ATF__CC_CLANG) && __clang_major__ >= 10) || \
      (defined(ATF__CC_MSVC) && _MSC_VER >= 1920)
#    define ATF__CRC32C_AVX512 1
#    define ATF__CRC32C_AVX2 1
#  endif
#  include <immintrin.h>
#  if defined(ATF__CC_MSVC)
#    include <intrin.h>
#    define ATF__CRC32C_TARGET_X64
#    define ATF__CRC32C_TARGET_AVX2
#    define ATF__CRC32C_TARGET_AVX512
#  else
#    include <cpuid.h>
/* Per function, so that the header builds without -msse4.2 and runs on any x86-64. */
#    define ATF__CRC32C_TARGET_X64 __attribute__((target("sse4.2,pclmul")))
#    define ATF__CRC32C_TARGET_AVX2 __attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
#    define ATF__CRC32C_TARGET_AVX512 \
         __attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
#  endif
#elif !defined(ATF_NO_HW_CRC) && defined(ATF__ARCH_ARM64) && !defined(__AARCH64EB__) && \
    (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG) || defined(ATF__CC_MSVC))
#  define ATF__CRC32C_ARM64 1
#  if defined(ATF__CC_MSVC)
#    include <intrin.h>
#    define ATF__CRC32C_TARGET_ARM64
#    define ATF__CRC32C_ARM_D(crc, v) __crc32cd((crc), (v))
#    define ATF__CRC32C_ARM_B(crc, v) __crc32cb((crc), (v))
#  elif defined(ATF__CC_CLANG)
/* The builtins, not <arm_acle.h>: older clang hides __crc32cd unless the whole file is
 * built with +crc, which would let the compiler use crc32 where it was never detected. */
#    define ATF__CRC32C_TARGET_ARM64 __attribute__((target("crc")))
#    define ATF__CRC32C_ARM_D(crc, v) __builtin_arm_crc32cd((crc), (v))
#    define ATF__CRC32C_ARM_B(crc, v) __builtin_arm_crc32cb((crc), (v))
#  else
#    include <arm_acle.h>
#    define ATF__CRC32C_TARGET_ARM64 __attribute__((target("+crc")))
#    define ATF__CRC32C_ARM_D(crc, v) __crc32cd((crc), (v))
#    define ATF__CRC32C_ARM_B(crc, v) __crc32cb((crc), (v))
#  endif
#  if defined(ATF__OS_LINUX)
#    include <sys/auxv.h>
#    ifndef HWCAP_CRC32
#      define HWCAP_CRC32 (1u << 7)
#    endif
#  endif
#endif

/* The dispatch state is two ints, each the whole message it carries (the tables are
 * constant), so relaxed atomic access is enough; a race at first use makes two threads
 * store the same value. The compare-and-swap keeps a caller's atf_crc32c_select from being
 * overwritten by a first use that was probing at the same moment. */
#if defined(ATF__CC_GCC) || defined(ATF__CC_CLANG)
#  define ATF__CRC32C_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#  define ATF__CRC32C_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#  define ATF__CRC32C_SET_IF_ZERO(p, v) \
    do { long z_ = 0; \
         __atomic_compare_exchange_n((p), &z_, (v), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    } while (0)
#elif defined(ATF__CC_MSVC)
#  include <intrin.h>
#  define ATF__CRC32C_LOAD(p) (*(volatile long *)(p))
#  define ATF__CRC32C_STORE(p, v) _InterlockedExchange((volatile long *)(p), (v))
#  define ATF__CRC32C_SET_IF_ZERO(p, v) _InterlockedCompareExchange((volatile long *)(p), (v), 0)
#else /* no atomics known: an aligned long is still written whole on every target here */
#  define ATF__CRC32C_LOAD(p) (*(volatile long *)(p))
#  define ATF__CRC32C_STORE(p, v) (*(volatile long *)(p) = (v))
#  define ATF__CRC32C_SET_IF_ZERO(p, v) \
    do { if (*(volatile long *)(p) == 0) *(volatile long *)(p) = (v); } while (0)
#endif

#define ATF__CRC32C_PROBED 0x100L
/* The folding paths' smallest input (one step of their accumulators). The 512-bit path was
 * measured faster than the 3-way path from there on (18 against 16 GB/s at 256 bytes, 2x
 * and more from 512); the 256-bit one, on AMD, only from 768 bytes (31 against 22 GB/s;
 * 19 against 25 at 256), so SSE42 hands it buffers from there. */
#define ATF__CRC32C_FOLD_MIN 256
#define ATF__CRC32C_AVX2_MIN 768

/* The slicing-by-16 table, [k][b]: the register after byte b followed by k zero bytes,
 * from 0. Generated, it stands at the end of the file (its 4096 numbers would bury this
 * section); this accessor reaches it from here and is inlined away. */
typedef uint32_t atf__crc32c_row[256];
ATF__PRIVATE const atf__crc32c_row *atf__crc32c__slices(void);

/* crc32c constants: generated by tools/gen/crc32c_tables.c; do not edit. */
#if defined(ATF__CRC32C_X64)
#define ATF__CRC32C_LEVELS 3
#define ATF__CRC32C_BLOCKS 4096, 512, 64
/* Per stream length B: x^(16B-33) and x^(8B-33) mod P, which move the first and
 * second register past the blocks after it (see atf__crc32c__sse42). */
static const uint64_t atf__crc32c__merge[ATF__CRC32C_LEVELS][2] = {
    {0x54A86326, 0x82F89C77}, /* B = 4096 */
    {0x170076FA, 0xDD7E3B0C}, /* B = 512 */
    {0x0D3B6092, 0x9E4ADDF8}  /* B = 64 */
};
#if defined(ATF__CRC32C_AVX512)
/* Per distance D: x^(D+31) and x^(D-33) mod P, which move the low and the high
 * half of a 128-bit lane D bits forward (see atf__crc32c__avx512). */
static const uint64_t atf__crc32c__fold[5][2] = {
    {0xDCB17AA4, 0xB9E02B86}, /* D = 2048 */
    {0x740EEF02, 0x9E4ADDF8}, /* D = 512 */
    {0x1C291D04, 0xDDC0152B}, /* D = 384 */
    {0x3DA6D0CB, 0xBA4FC28E}, /* D = 256 */
    {0xF20C0DFE, 0x493C7D27}  /* D = 128 */
};
#endif
#endif
/* end of generated constants */

/* Portable path: 16 bytes per step, each byte looked up in the table that already
 * accounts for the bytes after it. The register reaches only the first four bytes, so
 * the other twelve lookups (by bytes read straight from the buffer) need nothing from
 * the step before; only four table reads and their xors lie on the register's path.
 * (Written as one xor of all sixteen, gcc and clang chained every lookup behind the
 * register: 2.7 GB/s, against 5.2 this way, on AMD Zen 5.) */
ATF__PRIVATE uint32_t atf__crc32c__sw(uint32_t crc, const uint8_t *p, size_t n) {
    const atf__crc32c_row *t = atf__crc32c__slices();
    while (n >= 16) {
        uint32_t data = ((t[11][p[4]] ^ t[10][p[5]]) ^ (t[9][p[6]] ^ t[8][p[7]])) ^
                        ((t[7][p[8]] ^ t[6][p[9]]) ^ (t[5][p[10]] ^ t[4][p[11]])) ^
                        ((t[3][p[12]] ^ t[2][p[13]]) ^ (t[1][p[14]] ^ t[0][p[15]]));
        uint32_t a = atf__load_le32(p) ^ crc;
        crc = data ^ ((t[15][a & 0xFFu] ^ t[14][a >> 8 & 0xFFu]) ^
                      (t[13][a >> 16 & 0xFFu] ^ t[12][a >> 24]));
        p += 16;
        n -= 16;
    }
    while (n--) crc = t[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    return crc;
}

#if defined(ATF__CRC32C_X64)
/* One crc32 chain runs at a third of the instruction's throughput (3-cycle latency), so
 * long buffers go through three chains over three adjacent blocks of B bytes. The three
 * registers are then merged: CRC(A||B||C) = A * x^(16B) + B * x^(8B) + C (mod P). A
 * carry-less product a * k is the 64-bit value a*k*x in the reflected order, and crc32 of a
 * 64-bit value v is v * x^32 mod P, so with k = x^(16B-33) the product of A, xored into
 * the last 8 bytes of C, comes out multiplied by exactly x^(16B); likewise B. */
ATF__PRIVATE ATF__CRC32C_TARGET_X64 uint32_t atf__crc32c__sse42(uint32_t crc, const uint8_t *p,
                                                                size_t n) {
    static const size_t blocks[ATF__CRC32C_LEVELS] = {ATF__CRC32C_BLOCKS};
    uint64_t c = crc;
    size_t level;
    /* Aligned loads never straddle a cache line; that is worth a few single-byte steps. */
    while (n && ((uintptr_t)p & 7u)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    for (level = 0; level < ATF__CRC32C_LEVELS; level++) {
        const size_t b = blocks[level];
        const __m128i k = _mm_set_epi64x((long long)atf__crc32c__merge[level][1],
                                         (long long)atf__crc32c__merge[level][0]);
        while (n >= 3 * b) {
            const uint8_t *end = p + b - 8;
            uint64_t c1 = 0, c2 = 0;
            __m128i m;
            for (; p < end; p += 8) {
                c = _mm_crc32_u64(c, atf__load_le64(p));
                c1 = _mm_crc32_u64(c1, atf__load_le64(p + b));
                c2 = _mm_crc32_u64(c2, atf__load_le64(p + 2 * b));
            }
            c = _mm_crc32_u64(c, atf__load_le64(p));
            c1 = _mm_crc32_u64(c1, atf__load_le64(p + b));
            m = _mm_xor_si128(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c), k, 0x00),
                              _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1), k, 0x10));
            c = _mm_crc32_u64(c2, atf__load_le64(p + 2 * b) ^ (uint64_t)_mm_cvtsi128_si64(m));
            p += 2 * b + 8;
            n -= 3 * b;
        }
    }
    for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, atf__load_le64(p));
    while (n--) c = _mm_crc32_u8((uint32_t)c, *p++);
    return (uint32_t)c;
}

#if defined(ATF__CRC32C_AVX512)
/* dst = src folded `k`'s distance forward, xored with `next`: the halves of each 128-bit
 * lane times their constants, three-way xor in one instruction. */
#  define ATF__CRC32C_FOLD512(src, k, next) \
    _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128((src), (k), 0x00), \
                              _mm512_clmulepi64_epi128((src), (k), 0x11), (next), 0x96)
#  define ATF__CRC32C_FOLD128(src, k) \
    _mm_xor_si128(_mm_clmulepi64_si128((src), (k), 0x00), _mm_clmulepi64_si128((src), (k), 0x11))
#  define ATF__CRC32C_FOLD_K(i) \
    _mm_set_epi64x((long long)atf__crc32c__fold[i][1], (long long)atf__crc32c__fold[i][0])

/* Long buffers on CPUs with VPCLMULQDQ: no crc32 chain at all. Four 64-byte accumulators
 * (sixteen 128-bit lanes) each stand for a polynomial; every 256 bytes each lane is
 * multiplied forward by x^2048 (mod P, by halves: a product lo*k is lo*k*x^33 in 128-bit
 * reflected order, hence the constants x^(D+31) for the low half and x^(D-33) for the high
 * one) and the next data xored on top. At the end the lanes fold into one 128-bit value V
 * and two crc32 steps give V * x^32 mod P, the register. Needs n >= 256. */
#  if defined(ATF__CC_GCC) && defined(__cplusplus)
/* g++ 12 flags the self-initialized "undefined" vectors inside its own AVX-512 intrinsics
 * (_mm512_broadcast_i32x4, _mm512_extracti32x4_epi32) once they are inlined (GCC bug 105593) */
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wuninitialized"
#  endif
ATF__PRIVATE ATF__CRC32C_TARGET_AVX512 uint32_t atf__crc32c__avx512(uint32_t crc, const uint8_t *p,
                                                                    size_t n) {
    const __m512i k2048 = _mm512_broadcast_i32x4(ATF__CRC32C_FOLD_K(0));
    const __m512i k512 = _mm512_broadcast_i32x4(ATF__CRC32C_FOLD_K(1));
    __m512i x0, x1, x2, x3;
    __m128i a, b, c, d;
    uint64_t r;
    /* The incoming register stands for the first 32 bits of the message. */
    x0 = _mm512_xor_si512(_mm512_loadu_si512(p),
                          _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, (long long)crc));
    x1 = _mm512_loadu_si512(p + 64);
    x2 = _mm512_loadu_si512(p + 128);
    x3 = _mm512_loadu_si512(p + 192);
    for (p += 256, n -= 256; n >= 256; p += 256, n -= 256) {
        x0 = ATF__CRC32C_FOLD512(x0, k2048, _mm512_loadu_si512(p));
        x1 = ATF__CRC32C_FOLD512(x1, k2048, _mm512_loadu_si512(p + 64));
        x2 = ATF__CRC32C_FOLD512(x2, k2048, _mm512_loadu_si512(p + 128));
        x3 = ATF__CRC32C_FOLD512(x3, k2048, _mm512_loadu_si512(p + 192));
    }
    x1 = ATF__CRC32C_FOLD512(x0, k512, x1);
    x2 = ATF__CRC32C_FOLD512(x1, k512, x2);
    x3 = ATF__CRC32C_FOLD512(x2, k512, x3);
    for (; n >= 64; p += 64, n -= 64) x3 = ATF__CRC32C_FOLD512(x3, k512, _mm512_loadu_si512(p));
    a = _mm512_extracti32x4_epi32(x3, 0);
    b = _mm512_extracti32x4_epi32(x3, 1);
    c = _mm512_extracti32x4_epi32(x3, 2);
    d = _mm512_extracti32x4_epi32(x3, 3);
    d = _mm_xor_si128(_mm_xor_si128(d, ATF__CRC32C_FOLD128(a, ATF__CRC32C_FOLD_K(2))),
                      _mm_xor_si128(ATF__CRC32C_FOLD128(b, ATF__CRC32C_FOLD_K(3)),
                                    ATF__CRC32C_FOLD128(c, ATF__CRC32C_FOLD_K(4))));
    r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(d));
    r = _mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(d, 1));
    /* Upper halves left in use make every later SSE instruction of the thread (the tail's
     * and the caller's) pay a state transition: 180 ns a call on a Xeon guest. Not every
     * compiler clears them before a tail call. */
    _mm256_zeroupper();
    return atf__crc32c__sse42((uint32_t)r, p, n);
}
#  if defined(ATF__CC_GCC) && defined(__cplusplus)
#    pragma GCC diagnostic pop
#  endif
#endif

#if defined(ATF__CRC32C_AVX2)
/* ATF__CRC32C_FOLD512 on 256-bit registers, which have no three-way xor without AVX-512. */
#  define ATF__CRC32C_FOLD256(src, k, next) \
    _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128((src), (k), 0x00), (next)), \
                     _mm256_clmulepi64_epi128((src), (k), 0x11))
#  define ATF__CRC32C_LOAD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* All eight accumulators folded `k`'s distance forward onto the 256 bytes at q. */
#  define ATF__CRC32C_FOLD256_ALL(k, q) \
    do { x0 = ATF__CRC32C_FOLD256(x0, (k), ATF__CRC32C_LOAD256((q))); \
         x1 = ATF__CRC32C_FOLD256(x1, (k), ATF__CRC32C_LOAD256((q) + 32)); \
         x2 = ATF__CRC32C_FOLD256(x2, (k), ATF__CRC32C_LOAD256((q) + 64)); \
         x3 = ATF__CRC32C_FOLD256(x3, (k), ATF__CRC32C_LOAD256((q) + 96)); \
         x4 = ATF__CRC32C_FOLD256(x4, (k), ATF__CRC32C_LOAD256((q) + 128)); \
         x5 = ATF__CRC32C_FOLD256(x5, (k), ATF__CRC32C_LOAD256((q) + 160)); \
         x6 = ATF__CRC32C_FOLD256(x6, (k), ATF__CRC32C_LOAD256((q) + 192)); \
         x7 = ATF__CRC32C_FOLD256(x7, (k), ATF__CRC32C_LOAD256((q) + 224)); } while (0)
/* Eight bytes at q into each of the three crc32 chains, which run b bytes apart; and 32. */
#  define ATF__CRC32C_MIX_CRC3(q, b) \
    do { c1 = _mm_crc32_u64(c1, atf__load_le64((q))); \
         c2 = _mm_crc32_u64(c2, atf__load_le64((q) + (b))); \
         c3 = _mm_crc32_u64(c3, atf__load_le64((q) + 2 * (b))); } while (0)
#  define ATF__CRC32C_MIX_CRC3_32(q, b) \
    do { ATF__CRC32C_MIX_CRC3((q), (b)); ATF__CRC32C_MIX_CRC3((q) + 8, (b)); \
         ATF__CRC32C_MIX_CRC3((q) + 16, (b)); ATF__CRC32C_MIX_CRC3((q) + 24, (b)); } while (0)
/* The chains' last 8 bytes, at q, merged as in atf__crc32c__sse42 with the constants `k`
 * of their length b: c3 ends as the register for the three chains' bytes. */
#  define ATF__CRC32C_MIX_MERGE(q, b, k) \
    do { __m128i m_; \
         c1 = _mm_crc32_u64(c1, atf__load_le64((q))); \
         c2 = _mm_crc32_u64(c2, atf__load_le64((q) + (b))); \
         m_ = _mm_xor_si128( \
             _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c1), (k), 0x00), \
             _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c2), (k), 0x10)); \
         c3 = _mm_crc32_u64(c3, atf__load_le64((q) + 2 * (b)) ^ \
                                    (uint64_t)_mm_cvtsi128_si64(m_)); } while (0)
/* The mixed steps: a long one folds 1536 bytes while three crc32 chains take the 3 x 512
 * bytes after them, a short one folds 256 bytes while they take the 3 x 64 bytes after
 * them (the chain lengths of the 3-way path's lower levels, whose merge constants they
 * reuse); then the accumulators jump over the chains' bytes. The long step is half and
 * half because on AMD cores each side does 8 bytes a cycle; Intel client cores fold
 * twice as fast, and there the chains set the pace. */
#  define ATF__CRC32C_MIX_LONG (1536 + 3 * 512)
#  define ATF__CRC32C_MIX_SHORT (256 + 3 * 64)
/* x^(D+31) and x^(D-33) mod P for those jumps: D = 8 * (256 + 3 * 512) = 14336 bits and
 * D = 8 * (256 + 3 * 64) = 3584 bits (not among the generated tables; tests/test_crc32c.c
 * checks them as it checks those). */
static const uint64_t atf__crc32c__mix_jump[2][2] = {
    {0xDE8A97F8, 0xAA7C7AD5}, /* D = 14336 */
    {0x9AF01F2D, 0x1B03397F}  /* D = 3584 */
};
#  define ATF__CRC32C_MIX_K(i) \
    _mm_set_epi64x((long long)atf__crc32c__mix_jump[i][1], (long long)atf__crc32c__mix_jump[i][0])

/* The folding of atf__crc32c__avx512 on eight 32-byte accumulators, for CPUs with
 * VPCLMULQDQ but not AVX-512 (AMD Zen 3, Intel client cores): again 256 bytes and the
 * x^2048 constants per step. AMD cores start a 256-bit product only every other cycle, so
 * there folding alone is no faster than the 3-way path's crc32 chains (both 8 bytes a
 * cycle: 28 and 29 GB/s on Zen 5); buffers therefore keep both units busy at once, in
 * mixed steps (56 GB/s from 64 KiB). A mixed step merges its chains, as the 3-way path does,
 * into one register for their bytes and xors it into the first 32 bits of the data the
 * accumulators jump to, the way the incoming register enters; only that accumulator waits
 * for the merge, at its next fold. The end is the plain folding's: the even and the odd
 * accumulators fold into two chains that take 64 bytes a step, then into one 128-bit
 * value, and two crc32 steps give the register. Needs n >= 256. */
ATF__PRIVATE ATF__CRC32C_TARGET_AVX2 uint32_t atf__crc32c__avx2(uint32_t crc, const uint8_t *p,
                                                                size_t n) {
    const __m256i k2048 = _mm256_broadcastsi128_si256(ATF__CRC32C_FOLD_K(0));
    const __m256i k512 = _mm256_broadcastsi128_si256(ATF__CRC32C_FOLD_K(1));
    __m256i x0, x1, x2, x3, x4, x5, x6, x7, k256;
    __m128i lo, hi;
    uint64_t r;
    /* The incoming register stands for the first 32 bits of the message. */
    x0 = _mm256_xor_si256(ATF__CRC32C_LOAD256(p), _mm256_set_epi64x(0, 0, 0, (long long)crc));
    x1 = ATF__CRC32C_LOAD256(p + 32);
    x2 = ATF__CRC32C_LOAD256(p + 64);
    x3 = ATF__CRC32C_LOAD256(p + 96);
    x4 = ATF__CRC32C_LOAD256(p + 128);
    x5 = ATF__CRC32C_LOAD256(p + 160);
    x6 = ATF__CRC32C_LOAD256(p + 192);
    x7 = ATF__CRC32C_LOAD256(p + 224);
    p += 256;
    n -= 256;
    if (n >= ATF__CRC32C_MIX_LONG) {
        const __m256i jump = _mm256_broadcastsi128_si256(ATF__CRC32C_MIX_K(0));
        const __m128i merge = _mm_set_epi64x((long long)atf__crc32c__merge[1][1],
                                             (long long)atf__crc32c__merge[1][0]);
        do { /* p is 256 bytes into the step's 1536; the chains start 1280 bytes on */
            const uint8_t *q = p + 1280, *end = q + 5 * 96;
            uint64_t c1 = 0, c2 = 0, c3 = 0;
            for (; q < end; p += 256, q += 96) { /* five folds, 480 bytes of each chain */
                ATF__CRC32C_FOLD256_ALL(k2048, p);
                ATF__CRC32C_MIX_CRC3_32(q, 512);
                ATF__CRC32C_MIX_CRC3_32(q + 32, 512);
                ATF__CRC32C_MIX_CRC3_32(q + 64, 512);
            }
            /* p is at the chains' bytes; the accumulators jump to the 256 after them while
             * the chains take their last 32 bytes and merge. */
            ATF__CRC32C_FOLD256_ALL(jump, p + 3 * 512);
            ATF__CRC32C_MIX_CRC3(q, 512);
            ATF__CRC32C_MIX_CRC3(q + 8, 512);
            ATF__CRC32C_MIX_CRC3(q + 16, 512);
            ATF__CRC32C_MIX_MERGE(q + 24, 512, merge);
            x0 = _mm256_xor_si256(x0, _mm256_set_epi64x(0, 0, 0, (long long)c3));
            p += 3 * 512 + 256;
            n -= ATF__CRC32C_MIX_LONG;
        } while (n >= ATF__CRC32C_MIX_LONG);
    }
    if (n >= ATF__CRC32C_MIX_SHORT) {
        const __m256i jump = _mm256_broadcastsi128_si256(ATF__CRC32C_MIX_K(1));
        const __m128i merge = _mm_set_epi64x((long long)atf__crc32c__merge[2][1],
                                             (long long)atf__crc32c__merge[2][0]);
        do { /* p is at the chains' bytes */
            uint64_t c1 = 0, c2 = 0, c3 = 0;
            ATF__CRC32C_FOLD256_ALL(jump, p + 3 * 64);
            ATF__CRC32C_MIX_CRC3_32(p, 64);
            ATF__CRC32C_MIX_CRC3(p + 32, 64);
            ATF__CRC32C_MIX_CRC3(p + 40, 64);
            ATF__CRC32C_MIX_CRC3(p + 48, 64);
            ATF__CRC32C_MIX_MERGE(p + 56, 64, merge);
            x0 = _mm256_xor_si256(x0, _mm256_set_epi64x(0, 0, 0, (long long)c3));
            p += ATF__CRC32C_MIX_SHORT;
            n -= ATF__CRC32C_MIX_SHORT;
        } while (n >= ATF__CRC32C_MIX_SHORT);
    }
    if (n >= 256) {
        ATF__CRC32C_FOLD256_ALL(k2048, p);
        p += 256;
        n -= 256;
    }
    x2 = ATF__CRC32C_FOLD256(x0, k512, x2);
    x3 = ATF__CRC32C_FOLD256(x1, k512, x3);
    x4 = ATF__CRC32C_FOLD256(x2, k512, x4);
    x5 = ATF__CRC32C_FOLD256(x3, k512, x5);
    x6 = ATF__CRC32C_FOLD256(x4, k512, x6);
    x7 = ATF__CRC32C_FOLD256(x5, k512, x7);
    for (; n >= 64; p += 64, n -= 64) {
        x6 = ATF__CRC32C_FOLD256(x6, k512, ATF__CRC32C_LOAD256(p));
        x7 = ATF__CRC32C_FOLD256(x7, k512, ATF__CRC32C_LOAD256(p + 32));
    }
    k256 = _mm256_broadcastsi128_si256(ATF__CRC32C_FOLD_K(3));
    x7 = ATF__CRC32C_FOLD256(x6, k256, x7);
    if (n >= 32) {
        x7 = ATF__CRC32C_FOLD256(x7, k256, ATF__CRC32C_LOAD256(p));
        p += 32;
        n -= 32;
    }
    lo = _mm256_castsi256_si128(x7);
    hi = _mm_xor_si128(_mm256_extracti128_si256(x7, 1),
                       ATF__CRC32C_FOLD128(lo, ATF__CRC32C_FOLD_K(4)));
    r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(hi));
    r = _mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(hi, 1));
    _mm256_zeroupper(); /* as in atf__crc32c__avx512 */
    return atf__crc32c__sse42((uint32_t)r, p, n);
}
#endif

/* Bits of atf__crc32c__hw for what this x86-64 CPU and OS run. */
ATF__PRIVATE long atf__crc32c__probe_x64(void) {
    unsigned r1[4], r7[4] = {0, 0, 0, 0}, max_leaf;
    uint64_t xcr0 = 0;
    long hw = 0;
#  if defined(ATF__CC_MSVC)
    int r[4], i;
    __cpuid(r, 0);
    max_leaf = (unsigned)r[0];
    __cpuid(r, 1);
    for (i = 0; i < 4; i++) r1[i] = (unsigned)r[i];
    if (max_leaf >= 7) {
        __cpuidex(r, 7, 0);
        for (i = 0; i < 4; i++) r7[i] = (unsigned)r[i];
    }
    if (r1[2] >> 27 & 1u) xcr0 = _xgetbv(0);
#  else
    /* the __cpuid macro, not __get_cpuid_max(): a function of <cpuid.h> that a build with
     * -finstrument-functions would instrument (x86-64 always has cpuid) */
    __cpuid(0, max_leaf, r7[1], r7[2], r7[3]);
    r7[1] = r7[2] = r7[3] = 0;
    if (max_leaf < 1) return 0;
    __cpuid(1, r1[0], r1[1], r1[2], r1[3]);
    if (max_leaf >= 7) __cpuid_count(7, 0, r7[0], r7[1], r7[2], r7[3]);
    if (r1[2] >> 27 & 1u) { /* OSXSAVE: xgetbv exists */
        unsigned lo, hi;
        __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (uint64_t)hi << 32 | lo;
    }
#  endif
    /* SSE4.2 (bit 20) brings crc32, PCLMULQDQ (bit 1) the merge. Only CPUs of 2008
     * (Nehalem) have the first without the second; they take the portable path. */
    if ((r1[2] >> 20 & 1u) && (r1[2] >> 1 & 1u)) {
        hw |= 1L << ATF_CRC32C_SSE42;
#  if defined(ATF__CRC32C_AVX512)
        /* VPCLMULQDQ (leaf 7 ECX bit 10) with AVX (leaf 1 ECX bit 28) and AVX2 (leaf 7 EBX
         * bit 5), and an OS that saves the ymm state (XCR0 bits 1, 2); with AVX512F (leaf 7
         * EBX bit 16) and an OS that saves the zmm and opmask state (XCR0 bits 5, 6, 7). */
        if ((r7[2] >> 10 & 1u) && (r1[2] >> 28 & 1u) && (r7[1] >> 5 & 1u) &&
            (xcr0 & 0x06u) == 0x06u)
            hw |= 1L << ATF_CRC32C_AVX2;
        if ((r7[2] >> 10 & 1u) && (r7[1] >> 16 & 1u) && (xcr0 & 0xE6u) == 0xE6u)
            hw |= 1L << ATF_CRC32C_AVX512;
#  else
        (void)r7;
        (void)xcr0;
#  endif
    }
    return hw;
}
#endif

#if defined(ATF__CRC32C_ARM64)
ATF__PRIVATE ATF__CRC32C_TARGET_ARM64 uint32_t atf__crc32c__armv8(uint32_t crc, const uint8_t *p,
                                                                  size_t n) {
    while (n && ((uintptr_t)p & 7u)) {
        crc = ATF__CRC32C_ARM_B(crc, *p++);
        n--;
    }
    for (; n >= 8; n -= 8, p += 8) crc = ATF__CRC32C_ARM_D(crc, atf__load_le64(p));
    while (n--) crc = ATF__CRC32C_ARM_B(crc, *p++);
    return crc;
}

ATF__PRIVATE int atf__crc32c__probe_arm64(void) {
#  if defined(__ARM_FEATURE_CRC32) || defined(ATF__OS_APPLE)
    return 1; /* every Apple arm64 core has it; so does any target built with +crc */
#  elif defined(ATF__OS_LINUX)
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#  elif defined(ATF__OS_WINDOWS)
    return IsProcessorFeaturePresent(PF_ARM_V8_CRC32_INSTRUCTIONS_AVAILABLE) != 0;
#  else
    return 0;
#  endif
}
#endif

/* Bit `impl` set for each hardware path this CPU runs; probed once (cpuid may trap to the
 * hypervisor, which costs microseconds). */
ATF__PRIVATE long atf__crc32c__hw_paths(void) {
    long hw = ATF__CRC32C_LOAD(&atf__crc32c__hw);
    if (hw == 0) {
        hw = ATF__CRC32C_PROBED;
#if defined(ATF__CRC32C_X64)
        hw |= atf__crc32c__probe_x64();
#elif defined(ATF__CRC32C_ARM64)
        if (atf__crc32c__probe_arm64()) hw |= 1L << ATF_CRC32C_ARMV8;
#endif
        ATF__CRC32C_STORE(&atf__crc32c__hw, hw);
    }
    return hw;
}

ATF__PRIVATE atf_crc32c_impl atf__crc32c__best(void) {
    long hw = atf__crc32c__hw_paths();
    if (hw & (1L << ATF_CRC32C_SSE42)) return ATF_CRC32C_SSE42;
    if (hw & (1L << ATF_CRC32C_ARMV8)) return ATF_CRC32C_ARMV8;
    return ATF_CRC32C_SW;
}

/* `impl` must be available: callers check first. */
ATF__PRIVATE uint32_t atf__crc32c__run(atf_crc32c_impl impl, uint32_t crc, const void *buf,
                                       size_t len) {
    const uint8_t *p = (const uint8_t *)buf;
    if (len == 0) return crc;
    ATF_ASSERT(buf != NULL);
    switch (impl) {
#if defined(ATF__CRC32C_X64)
    case ATF_CRC32C_SSE42:
#  if defined(ATF__CRC32C_AVX512)
        if (len >= ATF__CRC32C_FOLD_MIN) {
            long hw = ATF__CRC32C_LOAD(&atf__crc32c__hw);
            if (hw & (1L << ATF_CRC32C_AVX512)) return ~atf__crc32c__avx512(~crc, p, len);
            if ((hw & (1L << ATF_CRC32C_AVX2)) && len >= ATF__CRC32C_AVX2_MIN)
                return ~atf__crc32c__avx2(~crc, p, len);
        }
#  endif
        return ~atf__crc32c__sse42(~crc, p, len);
#  if defined(ATF__CRC32C_AVX512)
    case ATF_CRC32C_AVX512:
        if (len >= ATF__CRC32C_FOLD_MIN) return ~atf__crc32c__avx512(~crc, p, len);
        return ~atf__crc32c__sse42(~crc, p, len);
    case ATF_CRC32C_AVX2:
        if (len >= ATF__CRC32C_FOLD_MIN) return ~atf__crc32c__avx2(~crc, p, len);
        return ~atf__crc32c__sse42(~crc, p, len);
#  endif
#endif
#if defined(ATF__CRC32C_ARM64)
    case ATF_CRC32C_ARMV8: return ~atf__crc32c__armv8(~crc, p, len);
#endif
    default: return ~atf__crc32c__sw(~crc, p, len);
    }
}

ATFDEF ATF_NO_INSTRUMENT atf_crc32c_impl atf_crc32c_active(void) {
    long impl = ATF__CRC32C_LOAD(&atf__crc32c__chosen);
    if (impl == 0) {
#if defined(ATF_CRC32C_FORCE_SW)
        ATF__CRC32C_SET_IF_ZERO(&atf__crc32c__chosen, (long)ATF_CRC32C_SW);
#else
        ATF__CRC32C_SET_IF_ZERO(&atf__crc32c__chosen, (long)atf__crc32c__best());
#endif
        impl = ATF__CRC32C_LOAD(&atf__crc32c__chosen);
    }
    return (atf_crc32c_impl)impl;
}

ATFDEF ATF_NO_INSTRUMENT uint32_t atf_crc32c_update(uint32_t crc, const void *buf, size_t len) {
    return atf__crc32c__run(atf_crc32c_active(), crc, buf, len);
}

ATFDEF ATF_NO_INSTRUMENT uint32_t atf_crc32c(const void *buf, size_t len) {
    return atf_crc32c_update(0, buf, len);
}

ATFDEF ATF_NO_INSTRUMENT int atf_crc32c_available(atf_crc32c_impl impl) {
    switch (impl) {
    case ATF_CRC32C_AUTO:
    case ATF_CRC32C_SW: return 1;
    case ATF_CRC32C_SSE42:
    case ATF_CRC32C_ARMV8:
    case ATF_CRC32C_AVX2:
    case ATF_CRC32C_AVX512: return (atf__crc32c__hw_paths() >> impl & 1L) != 0;
    default: return 0;
    }
}

ATFDEF ATF_NO_INSTRUMENT uint32_t atf_crc32c_update_with(atf_crc32c_impl impl, uint32_t crc,
                                                         const void *buf,
                                                         size_t len, int *ok) {
    if (impl == ATF_CRC32C_AUTO) impl = atf_crc32c_active();
    if (!atf_crc32c_available(impl)) {
        if (ok) *ok = 0;
        return 0;
    }
    if (ok) *ok = 1;
    return atf__crc32c__run(impl, crc, buf, len);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_crc32c_select(atf_crc32c_impl impl) {
    if ((int)impl < (int)ATF_CRC32C_AUTO || (int)impl > (int)ATF_CRC32C_AVX512) return ATF_E_ARG;
    if (!atf_crc32c_available(impl)) return ATF_E_UNSUPPORTED;
    if (impl == ATF_CRC32C_AUTO) impl = atf__crc32c__best();
    ATF__CRC32C_STORE(&atf__crc32c__chosen, (long)impl);
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_crc32c_impl_str(atf_crc32c_impl impl) {
    switch (impl) {
    case ATF_CRC32C_AUTO: return "auto";
    case ATF_CRC32C_SW: return "sw";
    case ATF_CRC32C_SSE42: return "sse42";
    case ATF_CRC32C_ARMV8: return "armv8";
    case ATF_CRC32C_AVX2: return "avx2";
    case ATF_CRC32C_AVX512: return "avx512";
    default: return "unknown";
    }
}

/* The register's arithmetic modulo the polynomial: the file writer carries a patch's
 * correction over the bytes appended after it (>>filewriter). */
#define ATF__CRC32C_POLY 0x82F63B78u

/* a * b modulo the CRC32-C polynomial, in the CRC's reflected bit order (x^0 = top bit). */
ATF__PRIVATE uint32_t atf__crc32c_mulmod(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, p = 0;
    if (!a) return 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1u) ? (b >> 1) ^ ATF__CRC32C_POLY : b >> 1;
    }
    return p;
}

/* The raw (uninverted) CRC register r carried over n zero bytes: r * x^(8n) mod P. */
ATF__PRIVATE uint32_t atf__crc32c_shift(uint32_t r, uint64_t n) {
    uint32_t power = 1u << 23, acc = 1u << 31; /* x^8 and x^0 */
    if (!r) return 0;
    while (n) {
        if (n & 1u) acc = atf__crc32c_mulmod(power, acc);
        power = atf__crc32c_mulmod(power, power);
        n >>= 1;
    }
    return atf__crc32c_mulmod(acc, r);
}


/* ==== 7. clock ==================================================================== >>clock */
/* The platform's continuous clock in nanoseconds, and wall time for anchors.
 * Conversions from tick counters split seconds and remainder so that no multiplication
 * overflows however long the machine has been up; the tick rate is read once and cached
 * with a relaxed atomic (every thread computes the same value). Then the calibration
 * that turns atf_ticks() stamps into trace-clock ns for the drain. */
#if defined(ATF__OS_WINDOWS)
ATFDEF ATF_NO_INSTRUMENT uint64_t atf_now_ns(void) {
    LARGE_INTEGER now;
    LONGLONG f = InterlockedCompareExchange64(&atf__qpc_freq, 0, 0);
    uint64_t q, uf;
    if (!f) {
        LARGE_INTEGER rate;
        QueryPerformanceFrequency(&rate);
        f = rate.QuadPart;
        InterlockedExchange64(&atf__qpc_freq, f);
    }
    QueryPerformanceCounter(&now);
    q = (uint64_t)now.QuadPart;
    uf = (uint64_t)f;
    return q / uf * 1000000000u + q % uf * 1000000000u / uf;
}
ATFDEF ATF_NO_INSTRUMENT uint32_t atf_clock_type(void) { return ATF_CLOCK_QPC; }
ATFDEF ATF_NO_INSTRUMENT uint64_t atf_wall_ns(void) {
    FILETIME ft;
    uint64_t t;
#  if defined(_WIN32_WINNT) && _WIN32_WINNT >= 0x0602
    GetSystemTimePreciseAsFileTime(&ft);
#  else
    GetSystemTimeAsFileTime(&ft);
#  endif
    t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime; /* 100 ns since 1601 */
    return (t - 116444736000000000ull) * 100u;
}
#elif defined(ATF__OS_APPLE)
ATFDEF ATF_NO_INSTRUMENT uint64_t atf_now_ns(void) {
    uint64_t ticks = mach_continuous_time();
    uint64_t ratio = __atomic_load_n(&atf__mach_ratio, __ATOMIC_RELAXED), numer, denom;
    if (!ratio) {
        mach_timebase_info_data_t tb;
        mach_timebase_info(&tb);
        ratio = ((uint64_t)tb.numer << 32) | tb.denom;
        __atomic_store_n(&atf__mach_ratio, ratio, __ATOMIC_RELAXED);
    }
    numer = ratio >> 32;
    denom = ratio & 0xFFFFFFFFu;
    if (numer == denom) return ticks;
    return ticks / denom * numer + ticks % denom * numer / denom;
}
ATFDEF ATF_NO_INSTRUMENT uint32_t atf_clock_type(void) { return ATF_CLOCK_MACH_CONTINUOUS; }
ATFDEF ATF_NO_INSTRUMENT uint64_t atf_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#else
#  if defined(ATF__OS_LINUX) && !defined(CLOCK_BOOTTIME)
#    define CLOCK_BOOTTIME 7 /* the Linux ABI value, for C libraries that hide it */
#  endif
ATFDEF ATF_NO_INSTRUMENT uint64_t atf_now_ns(void) {
    struct timespec ts;
#  if defined(CLOCK_BOOTTIME)
    clock_gettime(CLOCK_BOOTTIME, &ts);
#  else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#  endif
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
ATFDEF ATF_NO_INSTRUMENT uint32_t atf_clock_type(void) {
#  if defined(CLOCK_BOOTTIME)
    return ATF_CLOCK_BOOTTIME;
#  else
    return ATF_CLOCK_UNKNOWN;
#  endif
}
ATFDEF ATF_NO_INSTRUMENT uint64_t atf_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* Ticks to trace clock (the drain's side of ATF_STAMP_TICKS). A pair is a tick count and
 * an atf_now_ns() read taken together: ticks on both sides of the ns read, the middle of
 * the narrowest of a few tries. A map keeps up to ATF__TICK_PAIRS pairs, ticks strictly
 * increasing, and converts by linear interpolation between neighbours, exact at every
 * pair. The drain converts every event, so the slopes are fixed point (whole ns per tick
 * and 32 bits of fraction: integer multiplies and shifts, no floating point); over a
 * segment of 2^32 ticks the fraction is off by less than 1 ns. */
#define ATF__TICK_PAIRS 64
#define ATF__TICK_SPAN_NS 1000000u   /* a pair closer than this replaces the newest one */

typedef struct atf__tick_pair { uint64_t ticks, ns; } atf__tick_pair;
/* ns per tick: whole + frac / 2^32 */
typedef struct atf__tick_rate { uint64_t whole; uint64_t frac; } atf__tick_rate;
typedef struct atf__tick_map {
    atf__tick_pair p[ATF__TICK_PAIRS];
    atf__tick_rate slope[ATF__TICK_PAIRS]; /* from p[i] to p[i + 1] */
    atf__tick_rate rate;            /* from the oldest pair to the newest */
    size_t count;
    uint64_t width;                 /* narrowest bracket seen, in ticks (0: none yet) */
} atf__tick_map;

#if !ATF_TICKS_ARE_NS
/* atf_ticks() that neither starts before the loads ahead of it complete nor lets later
 * instructions start before it: the drain reads a pair after an event's publication. */
ATF__PRIVATE uint64_t atf__ticks_fenced(void) {
#  if defined(ATF__CC_MSVC) && defined(ATF__ARCH_X64)
    uint64_t t;
    _mm_lfence();
    t = (uint64_t)__rdtsc();
    _mm_lfence();
    return t;
#  elif defined(ATF__CC_MSVC)
    uint64_t t;
    __isb(_ARM64_BARRIER_SY);
    t = (uint64_t)_ReadStatusReg(0x5F02);
    __isb(_ARM64_BARRIER_SY);
    return t;
#  elif defined(ATF__ARCH_X64)
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return (uint64_t)hi << 32 | lo;
#  else
    uint64_t t;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t) : : "memory");
    return t;
#  endif
}
#endif

/* Reads one pair. `width` keeps the narrowest bracket seen: the first read takes the best
 * of 8 tries, later ones stop at the first bracket within twice that. */
ATF__PRIVATE atf__tick_pair atf__tick_pair_read(uint64_t *width) {
    atf__tick_pair best;
#if ATF_TICKS_ARE_NS
    (void)width;
    best.ticks = best.ns = atf_now_ns();
#else
    uint64_t best_w = UINT64_MAX;
    int i;
    best.ticks = best.ns = 0;
    for (i = 0; i < 8; i++) {
        uint64_t t0 = atf__ticks_fenced(), ns = atf_now_ns(), t1 = atf__ticks_fenced();
        if (t1 < t0) continue; /* moved to a core whose counter is behind: again */
        if (t1 - t0 < best_w) {
            best_w = t1 - t0;
            best.ticks = t0 + best_w / 2;
            best.ns = ns;
        }
        if (*width && best_w <= 2 * *width) break;
    }
    if (best_w == UINT64_MAX) { /* never a clean bracket: take one anyway */
        best.ticks = atf__ticks_fenced();
        best.ns = atf_now_ns();
    } else if (!*width || best_w < *width) {
        *width = best_w ? best_w : 1;
    }
#endif
    return best;
}

/* The rate of `ns` nanoseconds over `ticks` ticks (ticks > 0). A span of 2^32 ticks or
 * more is scaled down first, so that the fraction's division cannot overflow. */
ATF__PRIVATE atf__tick_rate atf__tick_rate_of(uint64_t ns, uint64_t ticks) {
    atf__tick_rate r;
    uint64_t rem;
    r.whole = ns / ticks;
    rem = ns % ticks;
    while (ticks >> 32) {
        ticks >>= 1;
        rem >>= 1;
    }
    r.frac = ticks ? (rem << 32) / ticks : 0;
    if (r.frac >> 32) r.frac = 0xFFFFFFFFu; /* rem rounded to ticks by the scaling */
    return r;
}

/* atf__tick_scale when a product may overflow. */
ATF__PRIVATE uint64_t atf__tick_scale_wide(uint64_t d, atf__tick_rate r) {
    uint64_t whole, part;
    if (r.whole && d > UINT64_MAX / r.whole) return UINT64_MAX;
    whole = d * r.whole;
    /* d * frac / 2^32 in two halves of d, each product below 2^64 */
    part = (d >> 32) * r.frac;
    if (part >> 32 >> 32) return UINT64_MAX;
    part += ((d & 0xFFFFFFFFu) * r.frac) >> 32;
    return whole > UINT64_MAX - part ? UINT64_MAX : whole + part;
}

/* d ticks at rate r in ns, UINT64_MAX when that overflows. Inline: the drain converts
 * every event with it. */
ATF__HOT_INLINE uint64_t atf__tick_scale(uint64_t d, atf__tick_rate r) {
    if (!(d >> 32) && !(r.whole >> 31)) /* the drain's case: no product can overflow */
        return d * r.whole + ((d * r.frac) >> 32);
    return atf__tick_scale_wide(d, r);
}

ATF__PRIVATE void atf__tick_map_slopes(atf__tick_map *m) {
    size_t n = m->count;
    if (n >= 2) {
        m->slope[n - 2] = atf__tick_rate_of(m->p[n - 1].ns - m->p[n - 2].ns,
                                            m->p[n - 1].ticks - m->p[n - 2].ticks);
        m->rate = atf__tick_rate_of(m->p[n - 1].ns - m->p[0].ns, m->p[n - 1].ticks - m->p[0].ticks);
    }
}

/* Adds pair q, read after every pair in the map. A pair less than ATF__TICK_SPAN_NS after
 * the one before the newest replaces the newest (segments stay long enough for a steady
 * rate, the newest pair stays fresh); a full map forgets its oldest pair; ticks that went
 * back (a counter reset) start the map again from q, keeping the last rate. */
ATF__PRIVATE void atf__tick_map_add(atf__tick_map *m, atf__tick_pair q) {
    size_t n = m->count;
    if (n) {
        const atf__tick_pair *last = &m->p[n - 1];
        if (q.ticks == last->ticks) return;
        if (q.ticks < last->ticks) {
            n = m->count = 0;
        } else if (q.ns < last->ns) {
            q.ns = last->ns; /* the trace clock does not go back; keep the map monotone */
        }
    }
    if (n >= 2 && q.ns - m->p[n - 2].ns < ATF__TICK_SPAN_NS) {
        m->p[n - 1] = q;
    } else {
        if (n == ATF__TICK_PAIRS) {
            memmove(m->p, m->p + 1, (n - 1) * sizeof *m->p);
            memmove(m->slope, m->slope + 1, (n - 1) * sizeof *m->slope);
            n--;
        }
        m->p[n] = q;
        m->count = n + 1;
    }
    atf__tick_map_slopes(m);
}

/* ns + d ticks at `rate`, saturated instead of overflowing. */
ATF__HOT_INLINE uint64_t atf__tick_forward(uint64_t ns, uint64_t d, atf__tick_rate rate) {
    uint64_t x = atf__tick_scale(d, rate);
    return x > UINT64_MAX - ns ? UINT64_MAX : ns + x;
}
/* ns - d ticks at `rate`, 0 at the least. */
ATF__PRIVATE uint64_t atf__tick_back(uint64_t ns, uint64_t d, atf__tick_rate rate) {
    uint64_t x = atf__tick_scale(d, rate);
    return x >= ns ? 0 : ns - x;
}

/* The trace-clock time of t. Between two pairs: interpolated (never past the right one).
 * Before the oldest pair: extrapolated back with the map's rate. From the newest pair on:
 * its ns (the drain only converts events published before its newest pair was read, so a
 * later tick is a counter that differs between cores) or, with `ahead`, extrapolated.
 * *hint: the segment where the search starts (the previous result: stamps mostly rise). */
ATF__PRIVATE uint64_t atf__tick_map_ns(const atf__tick_map *m, uint64_t t, int ahead,
                                       size_t *hint) {
    size_t n = m->count, lo, hi, i = *hint;
    const atf__tick_pair *p = m->p;
    uint64_t v;
    if (n == 0) return t;
    if (t >= p[n - 1].ticks) {
        *hint = n - 1;
        return ahead ? atf__tick_forward(p[n - 1].ns, t - p[n - 1].ticks, m->rate) : p[n - 1].ns;
    }
    if (t < p[0].ticks) {
        *hint = 0;
        return atf__tick_back(p[0].ns, p[0].ticks - t, m->rate);
    }
    if (!(i + 1 < n && p[i].ticks <= t && t < p[i + 1].ticks)) {
        lo = 0; /* the last pair with ticks <= t: p[lo].ticks <= t < p[hi].ticks */
        hi = n - 1;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (p[mid].ticks <= t) lo = mid;
            else hi = mid;
        }
        i = lo;
        *hint = i;
    }
    v = atf__tick_forward(p[i].ns, t - p[i].ticks, m->slope[i]);
    return v < p[i + 1].ns ? v : p[i + 1].ns;
}


/* ==== 8. ring ====================================================================== >>ring */
/* Formatting and attaching SPSC rings in caller memory. The push side lives
 * inline in the declarations (atf_producer_push); the pop side is the drain's. A ring's
 * header is validated on attach so a foreign or damaged mapping is refused, not used. */
#define ATF__RING_DATA_OFFSET ((uint64_t)sizeof(atf_ring_header))
#define ATF__RING_MAX_CAPACITY ((uint64_t)1 << 40)
#define ATF__DETAIL_ENTRY_HEADER 8u
#define ATF__DETAIL_ENTRY_PAD 1u       /* entry flag: filler up to the end of the ring */
#define ATF__DETAIL_ENTRY_UNLINKED 2u  /* entry flag: windowed, the drain links it */

ATF__PRIVATE uint64_t atf__ring_min_capacity(uint32_t kind) {
    return kind == ATF_RING_INDEX ? 64u : 4096u;
}

ATFDEF ATF_NO_INSTRUMENT size_t atf_ring_memory_size(uint32_t kind, uint64_t capacity) {
    uint64_t cap, bytes;
    if ((kind != ATF_RING_INDEX && kind != ATF_RING_DETAIL) || capacity > ATF__RING_MAX_CAPACITY)
        return 0;
    cap = atf__ring_min_capacity(kind);
    while (cap < capacity) cap <<= 1;
    bytes = ATF__RING_DATA_OFFSET + (kind == ATF_RING_INDEX ? cap * ATF_INDEX_EVENT_SIZE : cap);
    return (uint64_t)(size_t)bytes == bytes ? (size_t)bytes : 0;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_ring_init(void *mem, size_t size, uint32_t kind,
                                                  uint64_t capacity, uint32_t layout,
                                                  uint32_t thread_id) {
    atf_ring_header *h = (atf_ring_header *)mem;
    size_t need = atf_ring_memory_size(kind, capacity);
    uint64_t cap;
    if (!mem || ((uintptr_t)mem & 63u) || need == 0 || size < need || layout > ATF_LAYOUT_2)
        return ATF_E_ARG;
    cap = (need - ATF__RING_DATA_OFFSET) / (kind == ATF_RING_INDEX ? ATF_INDEX_EVENT_SIZE : 1u);
    memset(h, 0, sizeof *h);
    h->kind = kind;
    h->capacity = cap;
    h->data_offset = ATF__RING_DATA_OFFSET;
    h->layout = layout ? layout : ATF_LAYOUT_1;
    h->thread_id = thread_id;
    atf__store_release_u32(&h->magic, ATF_RING_MAGIC); /* everything above is visible first */
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_ring_attach(atf_ring *r, void *mem, size_t size,
                                                    int as_producer) {
    atf_ring_header *h = (atf_ring_header *)mem;
    uint64_t unit, head, tail;
    if (!r) return ATF_E_ARG;
    memset(r, 0, sizeof *r);
    if (!mem || size < sizeof *h) return ATF_E_ARG;
    if (atf__load_acquire_u32(&h->magic) != ATF_RING_MAGIC) return ATF_E_MAGIC;
    if (h->kind != ATF_RING_INDEX && h->kind != ATF_RING_DETAIL) return ATF_E_CORRUPT;
    unit = h->kind == ATF_RING_INDEX ? ATF_INDEX_EVENT_SIZE : 1u;
    if (h->capacity < atf__ring_min_capacity(h->kind) || h->capacity > ATF__RING_MAX_CAPACITY ||
        (h->capacity & (h->capacity - 1)) || h->data_offset < sizeof *h ||
        h->data_offset > size || (h->data_offset & 7u) ||
        h->capacity > (size - h->data_offset) / unit ||
        (h->layout != ATF_LAYOUT_1 && h->layout != ATF_LAYOUT_2))
        return ATF_E_CORRUPT;
    tail = atf__load_acquire_u64(&h->tail);
    head = atf__load_acquire_u64(&h->head);
    if (head - tail > h->capacity || (h->kind == ATF_RING_DETAIL && ((head | tail) & 7u)))
        return ATF_E_CORRUPT;
    r->shared = h;
    r->data = (uint8_t *)mem + h->data_offset;
    r->mask = h->capacity - 1;
    r->pos = as_producer ? head : tail;
    r->other = as_producer ? tail : head;
    return ATF_OK;
}


/* ==== 9. producer ============================================================== >>producer */
/* The producer calls that are not inline (detail payloads, binding to caller
 * memory, the overflow path). The inline index push is in the declarations. While the
 * rings have room everything here is wait-free: bounded loops, no locks, no allocation,
 * no system calls; a full ring goes to atf__producer_overflow, which applies the policy. */
#define ATF__WAIT_TIMEOUT_NS 1000000000u /* BLOCK on caller memory: default longest wait */
#define ATF__WAIT_SPINS 128               /* rereads of the tail before sleeping */

ATF__PRIVATE int atf__session_self_drain(atf_session *s, atf_producer *w);

ATFDEF ATF_NO_INSTRUMENT atf_result atf_producer_set_overflow(atf_producer *w, uint32_t policy,
                                                            uint64_t timeout_ns) {
    if (!w || policy > ATF_OVERFLOW_DROP) return ATF_E_ARG;
    w->overflow = policy;
    w->wait_timeout_ns = timeout_ns;
    return ATF_OK;
}

/* The event being pushed is lost: counted in the open gap (opened with its stamp). The
 * cached tail is set to say "full", so the next push comes back to the slow path, which
 * publishes the gap before that event. Returns 0. */
ATF__PRIVATE int atf__producer_drop(atf_producer *w, uint64_t ts, int detail) {
    atf_ring *r = &w->index;
    if (!w->gap_lost) {
        w->gap_first_ns = ts;
        w->gap_reason = w->giving_up ? ATF_GAP_TIMEOUT : ATF_GAP_DROPPED;
        atf__store_release_u32(&r->shared->gap_reason, w->gap_reason);
        atf__store_release_u64(&r->shared->gap_first_ns, ts);
    }
    w->gap_lost++;
    if (detail) {
        w->gap_detail_lost++;
        w->gap_detail_total++;
        atf__store_release_u64(&r->shared->gap_detail_lost, w->gap_detail_total);
    }
    w->dropped++;
    atf__store_release_u64(&r->shared->dropped, w->dropped);
    r->other = r->pos - r->mask - 1;
    return 0;
}

/* Publishes the open gap as the record before the event about to be pushed; 0 when the
 * consumer has not taken the earlier gap records yet. */
ATF__PRIVATE int atf__producer_publish_gap(atf_producer *w) {
    atf_ring_header *h = w->index.shared;
    uint64_t head = h->gap_head; /* written by this producer only */
    atf_ring_gap *g;
    if (head - atf__load_acquire_u64(&h->gap_tail) >= ATF_RING_GAPS) return 0;
    g = &h->gaps[head % ATF_RING_GAPS];
    g->seq = w->index.pos;
    g->index_lost = w->gap_lost;
    g->detail_lost = w->gap_detail_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)w->gap_detail_lost;
    g->reason = w->gap_reason;
    g->first_lost_ns = w->gap_first_ns;
    atf__store_release_u64(&h->gap_head, head + 1);
    w->gap_lost = w->gap_detail_lost = 0;
    return 1;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_producer_skipped(atf_producer *w, uint64_t events,
                                                        uint64_t first_ts) {
    atf_ring_header *h;
    atf_ring_gap *g;
    uint64_t head;
    if (!w || !events || !w->index.shared) return ATF_E_ARG;
    h = w->index.shared;
    if (w->gap_lost && !atf__producer_publish_gap(w)) return ATF_E_FULL; /* drops first */
    head = h->gap_head;
    if (head - atf__load_acquire_u64(&h->gap_tail) >= ATF_RING_GAPS) return ATF_E_FULL;
    g = &h->gaps[head % ATF_RING_GAPS];
    g->seq = w->index.pos;
    g->index_lost = events;
    g->detail_lost = 0;
    g->reason = ATF_GAP_SKIPPED;
    g->first_lost_ns = first_ts;
    atf__store_release_u64(&h->gap_head, head + 1);
    w->depth = 0;
    return ATF_OK;
}

/* 1 when the index ring has room for one event and no gap is open (publishing it). */
ATF__PRIVATE int atf__producer_room(atf_producer *w) {
    atf_ring *r = &w->index;
    r->other = atf__load_acquire_u64(&r->shared->tail);
    if (r->pos - r->other > r->mask) return 0;
    return !w->gap_lost || atf__producer_publish_gap(w);
}

/* Waits until the consumer's position in r moves on from `seen`: spinning, then sleeping
 * 1 us doubling up to 1 ms. 0 when it did not move for timeout_ns. */
ATF__PRIVATE int atf__ring_wait_tail(const atf_ring *r, uint64_t seen, uint64_t timeout_ns) {
    uint64_t since = 0;
    uint32_t spins = 0, sleep_us = 1;
    while (atf__load_acquire_u64(&r->shared->tail) == seen) {
        if (spins < ATF__WAIT_SPINS) {
            spins++;
            continue;
        }
        if (!since) since = atf_now_ns();
        else if (atf_now_ns() - since > timeout_ns) return 0;
        atf__sleep_us(sleep_us);
        if (sleep_us < 1000) sleep_us *= 2;
    }
    return 1;
}

ATF__PRIVATE uint64_t atf__producer_timeout(const atf_producer *w) {
    return w->wait_timeout_ns ? w->wait_timeout_ns : ATF__WAIT_TIMEOUT_NS;
}

/* BLOCK on caller memory: waits for the consumer (another process) to make room, for at
 * most the timeout without its tail moving. After a timeout it drops at once until the
 * tail moves again, so a dead consumer costs one timeout, not one per event. */
ATF__PRIVATE int atf__producer_wait(atf_producer *w) {
    atf_ring *r = &w->index;
    if (w->giving_up && r->other == w->giving_up_tail) return 0;
    w->giving_up = 0;
    while (!atf__producer_room(w)) {
        if (!atf__ring_wait_tail(r, r->other, atf__producer_timeout(w))) {
            w->timeouts++;
            atf__store_release_u64(&r->shared->timeouts, w->timeouts);
            w->giving_up = 1;
            w->giving_up_tail = r->other;
            return 0;
        }
    }
    return 1;
}

/* The same for the detail ring: 1 once its consumer moved; after a timeout it stops
 * waiting until the consumer moves again. */
ATF__PRIVATE int atf__producer_wait_detail(atf_producer *w) {
    uint64_t tail = atf__load_acquire_u64(&w->detail.shared->tail);
    if (w->giving_up && tail == w->giving_up_detail_tail) return 0;
    if (atf__ring_wait_tail(&w->detail, tail, atf__producer_timeout(w))) return 1;
    w->timeouts++;
    atf__store_release_u64(&w->index.shared->timeouts, w->timeouts);
    w->giving_up = 1;
    w->giving_up_tail = w->index.other;
    w->giving_up_detail_tail = tail;
    return 0;
}

ATFDEF ATF_NO_INSTRUMENT int atf__producer_overflow(atf_producer *w, uint64_t ts, int detail) {
    int room;
    if (atf__producer_room(w)) return 1;
    if (w->overflow == ATF_OVERFLOW_DROP || w->in_overflow)
        return atf__producer_drop(w, ts, detail); /* wait-free, or re-entered (a signal) */
    w->in_overflow = 1;
    w->waits++;
    atf__store_release_u64(&w->index.shared->waits, w->waits);
    /* a session writer drains its own ring; then a failed file has taken the events as
     * lost, so there is room either way (unless this thread is the one draining) */
    room = w->session ? atf__session_self_drain(w->session, w) && atf__producer_room(w)
                      : atf__producer_wait(w);
    w->in_overflow = 0;
    return room ? 1 : atf__producer_drop(w, ts, detail);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_producer_init(atf_producer *w, void *index_mem,
                                                    size_t index_size, void *detail_mem,
                                                    size_t detail_size, uint32_t detail_mode) {
    atf_result rc;
    if (!w) return ATF_E_ARG;
    memset(w, 0, sizeof *w);
    if (detail_mode > ATF_DETAIL_WINDOWED) return ATF_E_ARG;
    rc = atf_ring_attach(&w->index, index_mem, index_size, 1);
    if (rc == ATF_OK && w->index.shared->kind != ATF_RING_INDEX) rc = ATF_E_ARG;
    if (rc == ATF_OK && detail_mem) {
        rc = atf_ring_attach(&w->detail, detail_mem, detail_size, 1);
        if (rc == ATF_OK && (w->detail.shared->kind != ATF_RING_DETAIL ||
                             w->detail.shared->layout != w->index.shared->layout))
            rc = ATF_E_ARG;
    }
    if (rc != ATF_OK) {
        memset(w, 0, sizeof *w);
        return rc;
    }
    w->layout = w->index.shared->layout;
    w->thread_id = w->index.shared->thread_id;
    w->dropped = atf__load_acquire_u64(&w->index.shared->dropped);
    if (detail_mem) w->detail_dropped = atf__load_acquire_u64(&w->detail.shared->dropped);
    w->detail_mode = detail_mem ? detail_mode : (uint32_t)ATF_DETAIL_OFF;
    return ATF_OK;
}

ATF__PRIVATE void atf__session_writer_closed(atf_producer *w);

/* Marks the rings closed (the session's own path: no thread-local bookkeeping). */
ATF__PRIVATE void atf__producer_close_rings(atf_producer *w) {
    if (w->session) atf__session_writer_closed(w);
    if (w->detail.shared) atf__store_release_u64(&w->detail.shared->closed, 1);
    if (w->index.shared) atf__store_release_u64(&w->index.shared->closed, 1);
}

ATF__PRIVATE void atf__session_forget_writer(atf_producer *w);

ATFDEF ATF_NO_INSTRUMENT void atf_producer_close(atf_producer *w) {
    if (!w) return;
    if (w->session) atf__session_forget_writer(w); /* no second close at thread exit */
    atf__producer_close_rings(w);
}

/* Room for `need` more units at the producer's position, rereading the consumer's
 * position only when the cached one says there is none. */
ATF__PRIVATE int atf__ring_has_room(atf_ring *r, uint64_t need) {
    uint64_t cap = r->mask + 1;
    if (cap - (r->pos - r->other) >= need) return 1;
    r->other = atf__load_acquire_u64(&r->shared->tail);
    return cap - (r->pos - r->other) >= need;
}

/* Writes one detail entry (after a filler when it would straddle the end of the ring);
 * returns 0 when there is no room. The record's index_seq is the index event about to be
 * pushed. The detail event header is encoded here, inline, in the writer's layout. */
/* Ring bytes of the entry of a `len`-byte payload (UINT64_MAX when it can never fit). */
ATF__PRIVATE uint64_t atf__detail_entry_size(size_t len) {
    uint64_t record = ATF_DETAIL_EVENT_HEADER_SIZE + (uint64_t)len;
    if ((uint64_t)len > ATF__RING_MAX_CAPACITY || record > UINT32_MAX) return UINT64_MAX;
    return (ATF__DETAIL_ENTRY_HEADER + record + 7u) & ~(uint64_t)7u;
}

ATF__PRIVATE int atf__producer_put_detail(atf_producer *w, uint64_t ts, uint16_t type,
                                        const void *payload, size_t len, uint32_t entry_flags) {
    atf_ring *r = &w->detail;
    uint64_t cap = r->mask + 1, record, entry = atf__detail_entry_size(len), to_end, need;
    uint8_t *at;
    if (entry > cap / 2) return 0;
    record = ATF_DETAIL_EVENT_HEADER_SIZE + (uint64_t)len;
    to_end = cap - (r->pos & r->mask);
    need = entry <= to_end ? entry : to_end + entry;
    if (!atf__ring_has_room(r, need)) return 0;
    if (entry > to_end) {
        at = r->data + (r->pos & r->mask);
        atf__store_le32(at, (uint32_t)to_end);
        atf__store_le32(at + 4, ATF__DETAIL_ENTRY_PAD);
        r->pos += to_end;
    }
    at = r->data + (r->pos & r->mask);
    atf__store_le32(at, (uint32_t)entry);
    atf__store_le32(at + 4, entry_flags);
    at += ATF__DETAIL_ENTRY_HEADER;
    atf__store_le32(at, (uint32_t)record);
    atf__store_le16(at + 4, type);
    atf__store_le16(at + 6, 0);
    if (w->layout == ATF_LAYOUT_2) {
        atf__store_le64(at + 8, w->index.pos);
    } else {
        atf__store_le32(at + 8, (uint32_t)w->index.pos);
        atf__store_le32(at + 12, w->thread_id);
    }
    atf__store_le64(at + 16, ts);
    if (len) memcpy(at + ATF_DETAIL_EVENT_HEADER_SIZE, payload, len);
    r->pos += entry;
    atf__store_release_u64(&r->shared->head, r->pos);
    return 1;
}

/* BLOCK, detail ring full: the same remedy as for the index ring (the records in it all
 * belong to published index events, so a drain empties it). 1 when it was applied. */
ATF__PRIVATE int atf__producer_detail_room(atf_producer *w) {
    int done;
    w->in_overflow = 1;
    w->waits++;
    atf__store_release_u64(&w->index.shared->waits, w->waits);
    done = w->session ? atf__session_self_drain(w->session, w) : atf__producer_wait_detail(w);
    w->in_overflow = 0;
    return done;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_producer_event_detail(atf_producer *w, uint32_t kind,
                                                            uint64_t function_id, uint64_t ts,
                                                            uint16_t type, const void *payload,
                                                            size_t len) {
    uint64_t detail_seq = ATF_NO_DETAIL;
    uint32_t depth, flags;
    int windowed, fits, put;
    /* refused before anything moves: a payload is never discarded in silence */
    if (w->detail_mode == ATF_DETAIL_OFF || !w->detail.data) return ATF_E_DETAIL_OFF;
    /* the depth follows the program, dropped or not, as in atf_producer_call/return */
    if (kind == ATF_EVENT_CALL) depth = w->depth++;
    else depth = w->depth ? --w->depth : 0;
    /* the index event first: dropped as a whole, since a detail record must never name a
     * missing index event */
    if (w->index.pos - w->index.other > w->index.mask && !atf__producer_overflow(w, ts, 1))
        return ATF_E_FULL;
    windowed = w->detail_mode == ATF_DETAIL_WINDOWED;
    fits = w->layout == ATF_LAYOUT_2 ||
           (w->index.pos <= 0xFFFFFFFFu && w->detail_count < ATF_NO_DETAIL_U32);
    flags = windowed ? ATF__DETAIL_ENTRY_UNLINKED : 0u;
    put = fits && atf__producer_put_detail(w, ts, type, payload, len, flags);
    /* ALWAYS under BLOCK is lossless too: make room as for the index ring (a record larger
     * than half the ring never fits and is dropped); windowed detail is a flight recorder
     * and drops */
    while (!put && fits && !windowed && w->overflow == ATF_OVERFLOW_BLOCK && !w->in_overflow &&
           atf__detail_entry_size(len) <= (w->detail.mask + 1) / 2 && atf__producer_detail_room(w))
        put = atf__producer_put_detail(w, ts, type, payload, len, flags);
    if (put) {
        if (!windowed) detail_seq = w->detail_count;
        w->detail_count++;
    } else {
        w->detail_dropped++;
        atf__store_release_u64(&w->detail.shared->dropped, w->detail_dropped);
    }
    return atf__producer_push_linked(w, kind, function_id, ts, depth, detail_seq);
}


/* ==== 10. session writer ======================================================== >>session */
/* ---- 10.1 file writer ------------------------------------------------------- >>filewriter */
/* One output file: created whole (placeholder header under a temporary
 * name, then renamed), events appended, footer and header rewrite at finalize. The
 * CRC32-C is kept incrementally over what is appended; an in-place patch (windowed detail
 * links) adds its linear correction, so finalize never rereads the file for it. A failed
 * write stops the file: the records that reached it whole are kept (a packed file's: the
 * blocks as their headers on disk count them; its table and footer follow them at
 * finalize), it is cut back after the last of them, and every later append is counted as
 * lost. */

/* The most bytes a block of this library takes, header included. */
#define ATF__PACK_BLOCK_MAX (ATF_PACKED_BLOCK_HEADER_SIZE + ATF_PACKED_BLOCK_EVENTS * ATF_PACKED_EVENT_MAX)
/* The stage, in blocks at their largest: a write takes up to 7 of them (at 2 bytes an
 * event, about 140 k events: a drain pass's, mostly). */
#define ATF__PACK_STAGE_BLOCKS 8

/* A packed index file's open block, and where every block begun starts. Everything an
 * append coded is on disk when it returns, unless the packer is held (a drain pass's
 * appends, released at its end: atf__file_writer_release): its blocks wait in the stage,
 * from the first one not whole on disk, and go out in one write (two when part of that
 * first one was on disk, its header last: atf__packer_write), so a crash leaves the
 * previous version of a block or a torn one that readers cut. The records coded and not
 * written yet are booked (count, CRC, times) by the write that takes them. Not one or two
 * writes a block: a traced fib(32) made 24.7 k writes so, 5.9 k with the stage and an
 * append for each 4096-event grant of the default disk guard, 0.9 k held through a pass
 * with a stage of 8 blocks. The open block grows in place until it holds
 * ATF_PACKED_BLOCK_EVENTS events. */
typedef struct atf__packer {
    atf__pack_state st;
    uint32_t events;             /* in the open block; 0: none open */
    size_t len;                  /* its payload bytes */
    uint64_t at;                 /* file offset of the open block, or of the next one */
    uint64_t stage_at;           /* file offset of stage[0]: the open block, or the first
                                    block ended since the last write */
    uint32_t on_disk;            /* of the block at stage_at: the events its header on disk
                                    counts, */
    size_t written;              /*   its payload bytes on disk (0: none of the block is), */
    uint32_t crc;                /*   and their CRC32-C */
    uint64_t *table;             /* file offset of each block begun */
    size_t blocks, table_cap;
    int held;                    /* appends leave their blocks in the stage */
    uint64_t pending;            /* records coded, not written yet: */
    uint32_t pending_crc;        /*   the file's CRC32-C with them, */
    uint64_t pending_first;      /*   their first and last timestamps */
    uint64_t pending_last;
    uint8_t stage[ATF__PACK_STAGE_BLOCKS * ATF__PACK_BLOCK_MAX]; /* room for one more block at least */
} atf__packer;

typedef struct atf__file_writer {
    atf__fd fd;
    int is_open;                 /* created, not yet closed */
    int stopped;                 /* no more appends: a write failed, or the file was cut */
    int dirty;                   /* the file may not end at HEADER + bytes: no footer */
    int crc_stale;               /* recompute the CRC from the file at finalize */
    int is_detail;
    uint32_t layout, thread_id;
    uint32_t crc;                /* CRC32-C of the bytes appended */
    uint32_t crc_delta;          /* correction for patched bytes, advanced as the file grows */
    uint64_t bytes;              /* events section bytes on disk */
    uint64_t count;              /* records on disk */
    uint64_t time_start, time_end;
    uint64_t seq_first, seq_last; /* detail: index_seq range covered */
    uint64_t synced_bytes;
    uint64_t lost;               /* records that could not be written (or were cut) */
    atf__packer *pack;           /* a packed index file (layout ATF_LAYOUT_PACKED): bytes and
                                    crc are then those of the layout-1 records it holds */
    char path[1024];
} atf__file_writer;

#define ATF__WRITE_PIECE ((size_t)1 << 18)  /* index appends: CRC each piece right after writing it */

/* Where the records on disk end: after the last whole record, or a packed file's last
 * block (the open one as its header on disk says). */
ATF__PRIVATE uint64_t atf__file_writer_end(const atf__file_writer *f) {
    const atf__packer *k = f->pack;
    if (!k) return ATF_HEADER_SIZE + f->bytes;
    return k->at + (k->events ? ATF_PACKED_BLOCK_HEADER_SIZE + k->len : 0);
}

ATF__PRIVATE atf_result atf__file_writer_fail(atf__file_writer *f, atf_error *err, const char *what,
                                              int code) {
    uint64_t end = atf__file_writer_end(f);
    f->stopped = 1;
    if (err->code == ATF_OK) {
        atf__error_set_errno(err, ATF_E_IO, f->path, what, code);
        err->offset = end;
    }
    /* a partial write may have left part of a record: cut back after the last whole one */
    if (f->fd != ATF__FD_NONE) f->dirty = atf__fd_truncate(f->fd, end) != 0;
    return ATF_E_IO;
}

/* The placeholder header of a new file: identity fields final, counts and ranges zero. */
ATF__PRIVATE void atf__file_writer_index_header(const atf__file_writer *f, int has_detail,
                                                atf_index_header *h) {
    memset(h, 0, sizeof *h);
    h->endian = ATF_ENDIAN_LITTLE;
    h->version = (uint8_t)f->layout;
    h->arch = ATF__ARCH_CODE;
    h->os = ATF__OS_CODE;
    h->flags = has_detail ? ATF_INDEX_FLAG_HAS_DETAIL_FILE : 0;
    h->thread_id = f->thread_id;
    h->clock_type = (uint8_t)atf_clock_type();
    h->event_size = ATF_INDEX_EVENT_SIZE;
    h->events_offset = ATF_HEADER_SIZE;
}

ATF__PRIVATE void atf__file_writer_detail_header(const atf__file_writer *f, atf_detail_header *h) {
    memset(h, 0, sizeof *h);
    h->endian = ATF_ENDIAN_LITTLE;
    h->version = (uint8_t)f->layout;
    h->arch = ATF__ARCH_CODE;
    h->os = ATF__OS_CODE;
    h->thread_id = f->thread_id;
    h->events_offset = ATF_HEADER_SIZE;
}

ATF__PRIVATE void atf__file_writer_placeholder(const atf__file_writer *f, uint8_t out[64]) {
    if (f->is_detail) {
        atf_detail_header h;
        atf__file_writer_detail_header(f, &h);
        atf_detail_header_encode(&h, out);
    } else {
        atf_index_header h;
        atf__file_writer_index_header(f, 0, &h);
        atf_index_header_encode(&h, out);
    }
}

/* What finalizing writes about a file's events section. The writer's close and recovery
 * (>>recovery) both finalize through the encoders below, so a recovered file is the file the
 * close would have written. */
typedef struct atf__final {
    uint32_t crc;                /* CRC32-C of the events section */
    uint64_t events_offset, count, bytes;
    uint64_t time_start, time_end;   /* stamps of the first and last record */
    uint64_t seq_first, seq_last;    /* detail: index_seq of the first and last record */
    uint64_t footer_offset;          /* 0: right after the records (a packed file: its table) */
} atf__final;

/* The footer and the finalized header of an index file; `h` is its placeholder header
 * (identity fields and flags are kept). */
ATF__PRIVATE void atf__index_final_encode(atf_index_header h, const atf__final *s,
                                          uint8_t footer[64], uint8_t header[64]) {
    atf_index_footer x;
    memset(&x, 0, sizeof x);
    x.checksum = s->crc;
    x.event_count = s->count;
    x.time_start_ns = s->time_start;
    x.time_end_ns = s->time_end;
    x.bytes_written = s->bytes;
    atf_index_footer_encode(&x, footer);
    h.event_size = ATF_INDEX_EVENT_SIZE;
    h.event_count = s->count;
    h.footer_offset = s->footer_offset ? s->footer_offset : s->events_offset + s->bytes;
    h.time_start_ns = s->time_start;
    h.time_end_ns = s->time_end;
    atf_index_header_encode(&h, header);
}

/* The same for a detail file, whose header keeps no time range. */
ATF__PRIVATE void atf__detail_final_encode(atf_detail_header h, const atf__final *s,
                                           uint8_t footer[64], uint8_t header[64]) {
    atf_detail_footer d;
    memset(&d, 0, sizeof d);
    d.checksum = s->crc;
    d.event_count = s->count;
    d.bytes_length = s->bytes;
    d.time_start_ns = s->time_start;
    d.time_end_ns = s->time_end;
    atf_detail_footer_encode(&d, footer);
    h.event_count = s->count;
    h.bytes_length = s->bytes;
    h.index_seq_start = s->seq_first;
    h.index_seq_end = s->seq_last;
    atf_detail_header_encode(&h, header);
}

/* Writes the footer at `footer_offset`, then the header at 0: footer first, so that a
 * crash between the two leaves a placeholder header and an agreeing footer at the end,
 * which readers accept. 0; 1 when the footer failed, 2 when the header did (OS error
 * pending). */
ATF__PRIVATE int atf__final_write(atf__fd fd, const uint8_t footer[64], uint64_t footer_offset,
                                  const uint8_t header[64]) {
    if (atf__fd_pwrite(fd, footer, ATF_FOOTER_SIZE, footer_offset, NULL) != 0) return 1;
    if (atf__fd_pwrite(fd, header, ATF_HEADER_SIZE, 0, NULL) != 0) return 2;
    return 0;
}

/* The packer of a new packed index file; its lane header waits in the stage. */
ATF__PRIVATE atf_result atf__file_writer_pack_start(atf__file_writer *f) {
    f->pack = (atf__packer *)ATF_MALLOC(sizeof *f->pack);
    if (!f->pack) return ATF_E_NOMEM;
    memset(f->pack, 0, offsetof(atf__packer, stage));
    f->pack->at = f->pack->stage_at = ATF_HEADER_SIZE + ATF_PACKED_LANE_SIZE;
    atf__packed_lane_encode(f->pack->stage, ATF_PACKED_BLOCK_EVENTS);
    return ATF_OK;
}

ATF__PRIVATE void atf__file_writer_pack_free(atf__file_writer *f) {
    if (f->pack) ATF_FREE(f->pack->table);
    ATF_FREE(f->pack);
    f->pack = NULL;
}

/* Creates `path` holding just the placeholder header: written as <path>.tmp and renamed,
 * so that a crash leaves either no file or one whose header is whole. */
ATF__PRIVATE atf_result atf__file_writer_open(atf__file_writer *f, const char *path, int is_detail,
                                              uint32_t layout, uint32_t thread_id, atf_error *err) {
    uint8_t header[ATF_HEADER_SIZE];
    char tmp[1040];
    memset(f, 0, sizeof *f);
    f->fd = ATF__FD_NONE;
    f->stopped = 1; /* until the file exists */
    atf__copy_str(f->path, sizeof f->path, path);
    f->is_detail = is_detail;
    f->layout = layout;
    f->thread_id = thread_id;
    if (strlen(path) >= sizeof f->path ||
        snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return atf__error_set(err, ATF_E_ARG, path, 0, "path too long");
    f->fd = atf__fd_create(tmp);
    if (f->fd == ATF__FD_NONE)
        return atf__error_set_errno(err, ATF_E_IO, tmp, "create", atf__last_os_error());
    atf__file_writer_placeholder(f, header);
    if (layout == ATF_LAYOUT_PACKED && !is_detail && atf__file_writer_pack_start(f) != ATF_OK) {
        atf__fd_close(f->fd);
        f->fd = ATF__FD_NONE;
        atf__file_remove(tmp);
        return atf__error_set(err, ATF_E_NOMEM, path, 0, "packed block buffer");
    }
    if (atf__fd_pwrite(f->fd, header, sizeof header, 0, NULL) != 0 ||
        (f->pack && atf__fd_pwrite(f->fd, f->pack->stage, ATF_PACKED_LANE_SIZE, ATF_HEADER_SIZE, NULL) != 0) ||
        atf__rename_replace(tmp, path) != 0) {
        int code = atf__last_os_error();
        atf__fd_close(f->fd);
        f->fd = ATF__FD_NONE;
        atf__file_remove(tmp);
        return atf__error_set_errno(err, ATF_E_IO, path, "create (header, rename)", code);
    }
    f->is_open = 1;
    f->stopped = 0;
    return ATF_OK;
}

/* Index of the record (its index_seq) of a detail record in this file's layout. */
ATF__PRIVATE uint64_t atf__detail_record_seq(uint32_t layout, const uint8_t *rec) {
    return layout == ATF_LAYOUT_2 ? atf__load_le64(rec + 8) : atf__load_le32(rec + 8);
}

/* Books `count` whole records (n bytes at data) as written. */
ATF__PRIVATE void atf__file_writer_account(atf__file_writer *f, const uint8_t *data, size_t n,
                                           uint64_t count, uint64_t t_first, uint64_t t_last,
                                           uint64_t seq_first, uint64_t seq_last) {
    if (!count) return;
    f->crc = atf_crc32c_update(f->crc, data, n);
    if (f->crc_delta) f->crc_delta = atf__crc32c_shift(f->crc_delta, n);
    if (f->count == 0) {
        f->time_start = t_first;
        f->seq_first = seq_first;
    }
    f->time_end = t_last;
    f->seq_last = seq_last;
    f->bytes += n;
    f->count += count;
}

/* How many whole detail records the first `n` bytes of data hold; their byte length,
 * and the timestamp and index_seq of the last one. */
ATF__PRIVATE uint64_t atf__detail_whole(const uint8_t *data, size_t n, uint32_t layout,
                                        size_t *bytes, uint64_t *t_last, uint64_t *seq_last) {
    size_t at = 0;
    uint64_t k = 0;
    while (n - at >= ATF_DETAIL_EVENT_HEADER_SIZE) {
        uint32_t length = atf__load_le32(data + at);
        if (length < ATF_DETAIL_EVENT_HEADER_SIZE || length > n - at) break;
        *t_last = atf__load_le64(data + at + 16);
        *seq_last = atf__detail_record_seq(layout, data + at);
        at += length;
        k++;
    }
    *bytes = at;
    return k;
}

enum { ATF__PACK_OK = 0, ATF__PACK_IO = 1, ATF__PACK_HEADER_IO = 2, ATF__PACK_NOMEM = 3 };

/* The open block, in the stage. */
ATF__PRIVATE uint8_t *atf__packer_open_block(atf__packer *k) {
    return k->stage + (size_t)(k->at - k->stage_at);
}

/* Gives the open block its header (events, payload length, CRC32-C: continued over the
 * bytes not on disk when part of it is) and returns that CRC. */
ATF__PRIVATE uint32_t atf__packer_seal(atf__packer *k) {
    uint8_t *block = atf__packer_open_block(k), *payload = block + ATF_PACKED_BLOCK_HEADER_SIZE;
    uint32_t crc = k->at == k->stage_at && k->written
                       ? atf_crc32c_update(k->crc, payload + k->written, k->len - k->written)
                       : atf_crc32c_update(0, payload, k->len);
    atf__packed_block_header(block, k->events, (uint32_t)k->len, crc);
    return crc;
}

/* Writes the stage: what its first block gained and every block after it in one write,
 * then that first block's header when part of the block was on disk already, so that a
 * header on disk never counts bytes that are not (a crash between the two leaves the
 * block as it was and the bytes after it unreachable: readers and recovery cut them as
 * a torn block). A block none of which was on disk goes header first, as a reader finds
 * it: torn, when its header names more payload than the file holds. Then the open block
 * becomes the stage's first. ATF__PACK_OK; ATF__PACK_IO when the write failed and the
 * file was cut back to where it ended (the blocks on disk are as before);
 * ATF__PACK_HEADER_IO when the header failed, or the cut did (the file may end torn). */
ATF__PRIVATE int atf__packer_write(atf__file_writer *f, atf__packer *k) {
    size_t from = k->written ? ATF_PACKED_BLOCK_HEADER_SIZE + k->written : 0;
    size_t end = (size_t)(k->at - k->stage_at) + (k->events ? ATF_PACKED_BLOCK_HEADER_SIZE + k->len : 0);
    uint32_t open_crc = k->events ? atf__packer_seal(k) : 0;
    if (end == from) return ATF__PACK_OK;
    if (atf__fd_pwrite(f->fd, k->stage + from, end - from, k->stage_at + from, NULL) != 0)
        return atf__fd_truncate(f->fd, k->stage_at + from) == 0 ? ATF__PACK_IO : ATF__PACK_HEADER_IO;
    if (k->written &&
        atf__fd_pwrite(f->fd, k->stage, ATF_PACKED_BLOCK_HEADER_SIZE, k->stage_at, NULL) != 0)
        return ATF__PACK_HEADER_IO;
    if (k->events && k->at != k->stage_at)
        memmove(k->stage, atf__packer_open_block(k), ATF_PACKED_BLOCK_HEADER_SIZE + k->len);
    k->stage_at = k->at;
    k->on_disk = k->events;
    k->written = k->events ? k->len : 0;
    k->crc = open_crc;
    return ATF__PACK_OK;
}

/* After a failed write: the packer as the file has it, its last block as the header on
 * disk counts it (the blocks begun after it forgotten, the records coded not booked). */
ATF__PRIVATE void atf__packer_unstage(atf__packer *k) {
    k->at = k->stage_at;
    k->events = k->on_disk;
    k->len = k->written;
    k->pending = 0;
    while (k->blocks && (k->table[k->blocks - 1] > k->stage_at ||
                         (k->table[k->blocks - 1] == k->stage_at && !k->on_disk)))
        k->blocks--;
}

#define ATF__PACK_CHUNK 128u     /* records coded, then CRC'd, at a time */

/* Codes the next n (> 0, <= the open block's room) records into the open block,
 * beginning one when none is open, and adds them to the pending ones, the file's CRC
 * continued over them while they are in cache. 0 when memory for the block table ran
 * out. */
ATF__PRIVATE int atf__packer_code(atf__file_writer *f, const uint8_t *data, uint64_t n) {
    atf__packer *k = f->pack;
    uint8_t *payload, *p;
    uint64_t j;
    uint32_t crc = k->pending ? k->pending_crc : f->crc;
    if (k->events == 0) {
        if (!atf__grow((void **)&k->table, &k->table_cap, k->blocks, sizeof *k->table)) return 0;
        k->table[k->blocks++] = k->at;
        atf__pack_state_init(&k->st, f->thread_id);
        k->len = 0;
    }
    payload = atf__packer_open_block(k) + ATF_PACKED_BLOCK_HEADER_SIZE;
    p = payload + k->len;
    for (j = 0; j < n; j += ATF__PACK_CHUNK) {
        const uint8_t *in = data + j * ATF_INDEX_EVENT_SIZE;
        size_t m = n - j < ATF__PACK_CHUNK ? (size_t)(n - j) : ATF__PACK_CHUNK;
        p = atf__pack_run(&k->st, in, m, p);
        crc = atf_crc32c_update(crc, in, m * ATF_INDEX_EVENT_SIZE);
    }
    k->len = (size_t)(p - payload);
    k->events += (uint32_t)n;
    if (!k->pending) k->pending_first = atf__load_le64(data);
    k->pending_last = atf__load_le64(data + (n - 1) * ATF_INDEX_EVENT_SIZE);
    k->pending += n;
    k->pending_crc = crc;
    return 1;
}

/* Writes the stage and books the pending records (count, CRC, times); on a failure the
 * packer is put back to what is on disk, and the pending records are the caller's to
 * count as lost. */
ATF__PRIVATE int atf__packer_flush(atf__file_writer *f) {
    atf__packer *k = f->pack;
    int rc = atf__packer_write(f, k);
    if (rc != ATF__PACK_OK) {
        atf__packer_unstage(k);
        return rc;
    }
    if (k->pending) {
        if (f->count == 0) f->time_start = k->pending_first;
        f->time_end = k->pending_last;
        f->crc = k->pending_crc;
        f->bytes += k->pending * ATF_INDEX_EVENT_SIZE;
        f->count += k->pending;
        k->pending = 0;
    }
    return ATF__PACK_OK;
}

/* Codes `count` layout-1 records into blocks and writes them, in one write while the
 * stage has room (see atf__packer), or leaves them in the stage while the packer is
 * held. What reached the disk is booked as it does (count, CRC, times); on a failure
 * the packer is put back to what is on disk and the rest, the pending records of
 * earlier appends included, is the caller's to count as lost. ATF__PACK_OK or the
 * failure (OS error pending for the I/O ones). */
ATF__PRIVATE int atf__file_writer_pack(atf__file_writer *f, const uint8_t *data, uint64_t count) {
    atf__packer *k = f->pack;
    uint64_t i = 0;
    int rc;
    while (i < count) {
        uint64_t room = ATF_PACKED_BLOCK_EVENTS - k->events, n = count - i < room ? count - i : room;
        if (k->events == 0 && sizeof k->stage - (size_t)(k->at - k->stage_at) < ATF__PACK_BLOCK_MAX &&
            (rc = atf__packer_flush(f)) != ATF__PACK_OK)
            return rc;
        if (!atf__packer_code(f, data + i * ATF_INDEX_EVENT_SIZE, n)) {
            rc = atf__packer_flush(f); /* what was coded before */
            return rc != ATF__PACK_OK ? rc : ATF__PACK_NOMEM;
        }
        i += n;
        if (k->events == ATF_PACKED_BLOCK_EVENTS) { /* full: the next one begins after it */
            atf__packer_seal(k);
            k->at += ATF_PACKED_BLOCK_HEADER_SIZE + k->len;
            k->events = 0;
        }
    }
    return k->held ? ATF__PACK_OK : atf__packer_flush(f);
}

/* A packed file's write (or its block table's memory) failed: `unwritten` records are
 * lost and the file stops there. Returns the error, as the session is told it. */
ATF__PRIVATE atf_result atf__file_writer_pack_failed(atf__file_writer *f, int rc, uint64_t unwritten,
                                                     atf_error *err) {
    int code = atf__last_os_error();
    f->lost += unwritten;
    f->stopped = 1;
    /* a torn block header: the file ends where a reader's walk says, no footer */
    f->dirty = rc == ATF__PACK_HEADER_IO;
    if (err->code != ATF_OK) return rc == ATF__PACK_NOMEM ? ATF_E_NOMEM : ATF_E_IO;
    if (rc == ATF__PACK_NOMEM) return atf__error_set(err, ATF_E_NOMEM, f->path, 0, "packed block table");
    atf__error_set_errno(err, ATF_E_IO, f->path, "write packed block", code);
    err->offset = atf__file_writer_end(f);
    return ATF_E_IO;
}

/* fsync_every: the file synced once that many bytes were booked since the last time. */
ATF__PRIVATE void atf__file_writer_sync_every(atf__file_writer *f, uint64_t fsync_every, atf_error *err) {
    if (fsync_every && f->bytes - f->synced_bytes >= fsync_every) {
        if (atf__fd_sync(f->fd) != 0)
            atf__error_set_errno(err, ATF_E_IO, f->path, "periodic fsync", atf__last_os_error());
        f->synced_bytes = f->bytes;
    }
}

/* Appends `count` whole records (n bytes) whose timestamps span [t_first, t_last]. Index
 * files take 32-byte records in pieces, each CRC'd while still in cache; detail files
 * take a staged run of variable-length records in one write. */
ATF__PRIVATE atf_result atf__file_writer_append(atf__file_writer *f, const uint8_t *data, size_t n,
                                                uint64_t count, uint64_t t_first, uint64_t t_last,
                                                uint64_t fsync_every, atf_error *err) {
    size_t at = 0;
    if (!f->is_open || f->stopped) {
        f->lost += count;
        return ATF_E_IO;
    }
    if (f->pack) {
        uint64_t before = f->count + f->pack->pending;
        int rc = atf__file_writer_pack(f, data, count);
        if (rc != ATF__PACK_OK) return atf__file_writer_pack_failed(f, rc, before + count - f->count, err);
    } else if (f->is_detail) {
        size_t done = 0;
        uint64_t seq_first = atf__detail_record_seq(f->layout, data);
        if (atf__fd_pwrite(f->fd, data, n, ATF_HEADER_SIZE + f->bytes, &done) != 0) {
            int code = atf__last_os_error();
            size_t kept_bytes = 0;
            uint64_t kept, ts = 0, seq = 0;
            kept = atf__detail_whole(data, done, f->layout, &kept_bytes, &ts, &seq);
            atf__file_writer_account(f, data, kept_bytes, kept, t_first, ts, seq_first, seq);
            f->lost += count - kept;
            return atf__file_writer_fail(f, err, "write detail records", code);
        } else {
            size_t whole = 0;
            uint64_t ts = t_last, seq = 0;
            atf__detail_whole(data, n, f->layout, &whole, &ts, &seq);
            atf__file_writer_account(f, data, n, count, t_first, t_last, seq_first, seq);
        }
    } else {
        while (at < n) {
            /* pieces end on ATF__WRITE_PIECE boundaries of the file: the events start at
             * offset 64, and writes that straddle pages copy at half the speed */
            size_t to_edge = ATF__WRITE_PIECE - (size_t)((ATF_HEADER_SIZE + f->bytes) & (ATF__WRITE_PIECE - 1));
            size_t piece = n - at < to_edge ? n - at : to_edge, done = 0;
            const uint8_t *p = data + at;
            uint64_t records = piece / ATF_INDEX_EVENT_SIZE;
            if (atf__fd_pwrite(f->fd, p, piece, ATF_HEADER_SIZE + f->bytes, &done) != 0) {
                int code = atf__last_os_error();
                uint64_t kept = done / ATF_INDEX_EVENT_SIZE;
                if (kept)
                    atf__file_writer_account(f, p, (size_t)(kept * ATF_INDEX_EVENT_SIZE), kept,
                                             atf__load_le64(p),
                                             atf__load_le64(p + (kept - 1) * ATF_INDEX_EVENT_SIZE), 0, 0);
                f->lost += count - (at / ATF_INDEX_EVENT_SIZE) - kept;
                return atf__file_writer_fail(f, err, "write index events", code);
            }
            atf__file_writer_account(f, p, piece, records, atf__load_le64(p),
                                     atf__load_le64(p + piece - ATF_INDEX_EVENT_SIZE), 0, 0);
            at += piece;
        }
        (void)t_first;
        (void)t_last;
    }
    atf__file_writer_sync_every(f, fsync_every, err);
    return ATF_OK;
}

/* Holds a packed index file's appends in its stage until atf__file_writer_release (a
 * drain pass: a write per pass, not per append). Nothing for any other file. */
ATF__PRIVATE void atf__file_writer_hold(atf__file_writer *f) {
    if (f->pack) f->pack->held = 1;
}

/* Writes what a held packed index file keeps in its stage and stops holding, as the
 * appends would have (a failure stops the file, its records not written counted as
 * lost). ATF_OK, or the error. */
ATF__PRIVATE atf_result atf__file_writer_release(atf__file_writer *f, uint64_t fsync_every,
                                                 atf_error *err) {
    atf__packer *k = f->pack;
    uint64_t before;
    int rc;
    if (!k || !k->held) return ATF_OK;
    k->held = 0;
    if (!f->is_open || f->stopped) return ATF_OK; /* a stopped file has no records pending */
    before = f->count + k->pending;
    rc = atf__packer_flush(f);
    if (rc != ATF__PACK_OK) return atf__file_writer_pack_failed(f, rc, before - f->count, err);
    atf__file_writer_sync_every(f, fsync_every, err);
    return ATF_OK;
}

/* Overwrites the n (<= 8) bytes at events-section offset `offset`, which held `old`, with
 * `now`, and folds the change into the CRC: CRC(M ^ E) = CRC(M) ^ raw(0, E), where E is
 * the difference followed by the bytes after it as zeros (a shift of the register). */
ATF__PRIVATE atf_result atf__file_writer_patch(atf__file_writer *f, uint64_t offset,
                                               const uint8_t *old, const uint8_t *now, size_t n,
                                               atf_error *err) {
    uint8_t delta[8];
    size_t i;
    if (!f->is_open || f->dirty || f->pack || n > sizeof delta || offset + n > f->bytes) return ATF_E_IO;
    if (atf__fd_pwrite(f->fd, now, n, ATF_HEADER_SIZE + offset, NULL) != 0) {
        /* the field may hold either value now: let finalize read back what is there */
        f->crc_stale = 1;
        atf__error_set_errno(err, ATF_E_IO, f->path, "patch detail link", atf__last_os_error());
        return ATF_E_IO;
    }
    for (i = 0; i < n; i++) delta[i] = (uint8_t)(old[i] ^ now[i]);
    f->crc_delta ^= atf__crc32c_shift(~atf_crc32c_update(0xFFFFFFFFu, delta, n),
                                      f->bytes - offset - n);
    return ATF_OK;
}

/* Cuts the file back to its first `count` records (`bytes` bytes) and stops it. */
ATF__PRIVATE void atf__file_writer_cut(atf__file_writer *f, uint64_t bytes, uint64_t count,
                                       uint64_t time_end, uint64_t seq_last, atf_error *err) {
    f->stopped = 1;
    if (!f->is_open || count >= f->count) return;
    f->lost += f->count - count;
    f->bytes = bytes;
    f->count = count;
    f->time_end = count ? time_end : 0;
    f->seq_last = count ? seq_last : 0;
    if (!count) f->time_start = f->seq_first = 0;
    f->crc_stale = 1;
    if (atf__fd_truncate(f->fd, ATF_HEADER_SIZE + bytes) != 0) {
        f->dirty = 1;
        atf__error_set_errno(err, ATF_E_IO, f->path, "cut detail records", atf__last_os_error());
    }
}

ATF__PRIVATE uint32_t atf__file_writer_crc_from_disk(atf__file_writer *f, int *ok) {
    uint8_t buf[1 << 16];
    uint64_t at = 0;
    uint32_t crc = 0;
    *ok = 1;
    while (at < f->bytes) {
        size_t n = f->bytes - at < sizeof buf ? (size_t)(f->bytes - at) : sizeof buf;
        if (atf__fd_pread(f->fd, buf, n, ATF_HEADER_SIZE + at) != 0) {
            *ok = 0;
            return 0;
        }
        crc = atf_crc32c_update(crc, buf, n);
        at += n;
    }
    return crc;
}

/* A packed file's block table, after its last block: 0, or 1 (OS error pending). */
ATF__PRIVATE int atf__packer_table_write(atf__file_writer *f, uint64_t *footer_offset) {
    atf__packer *k = f->pack;
    uint64_t at = atf__file_writer_end(f);
    uint8_t *table = k->blocks ? (uint8_t *)ATF_MALLOC(k->blocks * 8) : NULL;
    size_t i;
    int failed;
    if (k->blocks && !table) {
        errno = ENOMEM;
        return 1;
    }
    for (i = 0; i < k->blocks; i++) atf__store_le64(table + i * 8, k->table[i]);
    *footer_offset = at + k->blocks * 8;
    failed = k->blocks && atf__fd_pwrite(f->fd, table, k->blocks * 8, at, NULL) != 0;
    ATF_FREE(table);
    return failed;
}

/* Footer, then the real header, then (optionally) a sync; closes the file. A stopped file
 * gets its footer too when it ends where it should; one whose end is unknown is left as
 * a crash would leave it (readers recover it by size or walk). */
ATF__PRIVATE atf_result atf__file_writer_finalize(atf__file_writer *f, int has_detail, int sync,
                                                  atf_error *err) {
    uint8_t footer[ATF_FOOTER_SIZE], header[ATF_HEADER_SIZE];
    atf_result rc = ATF_OK;
    if (!f->is_open) return ATF_OK;
    if (!f->dirty) {
        uint32_t crc = f->crc ^ f->crc_delta;
        int ok = 1;
        if (f->crc_stale) crc = atf__file_writer_crc_from_disk(f, &ok);
        if (!ok) {
            rc = atf__error_set_errno(err, ATF_E_IO, f->path, "read back for CRC", atf__last_os_error());
        } else {
            atf__final fin;
            int failed;
            fin.crc = crc;
            fin.events_offset = ATF_HEADER_SIZE;
            fin.count = f->count;
            fin.bytes = f->bytes;
            fin.time_start = f->time_start;
            fin.time_end = f->time_end;
            fin.seq_first = f->seq_first;
            fin.seq_last = f->seq_last;
            fin.footer_offset = ATF_HEADER_SIZE + f->bytes;
            failed = f->pack ? atf__packer_table_write(f, &fin.footer_offset) : 0;
            if (f->is_detail) {
                atf_detail_header h;
                atf__file_writer_detail_header(f, &h);
                atf__detail_final_encode(h, &fin, footer, header);
            } else {
                atf_index_header h;
                atf__file_writer_index_header(f, has_detail, &h);
                atf__index_final_encode(h, &fin, footer, header);
            }
            if (!failed) failed = atf__final_write(f->fd, footer, fin.footer_offset, header);
            if (failed == 1)
                rc = atf__file_writer_fail(f, err, "write footer", atf__last_os_error());
            else if (failed == 2)
                rc = atf__error_set_errno(err, ATF_E_IO, f->path, "rewrite header", atf__last_os_error());
        }
    }
    if (sync && atf__fd_sync(f->fd) != 0 && rc == ATF_OK)
        rc = atf__error_set_errno(err, ATF_E_IO, f->path, "fsync", atf__last_os_error());
    atf__fd_close(f->fd);
    f->fd = ATF__FD_NONE;
    f->is_open = 0;
    f->stopped = 1;
    atf__file_writer_pack_free(f);
    return rc;
}


/* ---- 10.2 sessions: thread slots, the drain, attaching --------------------------- >>slots */
/* Thread slots, the drain, windowed detail, links and the manifest. Attaching
 * takes the session lock (never on the hot path); the drain walks the published slots,
 * moves each ring's events into its files in large batches (detail before index, so an
 * index event never reaches the disk before the detail record it names), and finalizes a
 * slot once its producer has closed. */
typedef struct atf__window { uint64_t lo, hi; } atf__window;

/* A detail record in detail.atf whose index event is not in index.atf yet, or whose
 * index event still waits for its link (windowed). Kept in index_seq order. */
typedef struct atf__link {
    uint64_t index_seq;          /* its index event */
    uint64_t detail_seq;         /* its number in detail.atf */
    uint64_t bytes_before;       /* detail.atf state before it: where to cut */
    uint64_t time_end_before, seq_last_before;
    int linked;                  /* the index record carries the link already */
} atf__link;

/* What the manifest says of a thread. */
typedef struct atf__manifest_thread {
    atf_thread_stats st;
    const char *name;
    int has_time;                  /* its index file has events: */
    uint64_t time_start, time_end; /*   their time range */
} atf__manifest_thread;

/* A side file of a thread (gaps.atf, pauses.atf): a 16-byte header, then 32-byte records,
 * made at its first record. */
typedef struct atf__side_file {
    atf__fd fd;
    int state;                   /* 0 none yet, 1 open, 2 failed */
    uint64_t written;            /* records in it */
} atf__side_file;

/* Each slot is drained under its own lock (by the drain thread, or by its producer when
 * its ring is full), so that one thread writing its files never makes another wait. What a
 * pass needs of the session's changing state it copies under the session lock: the tick
 * map and the trigger windows; what the manifest says of the slot it hands over the same
 * way (shown). */
typedef struct atf__slot {
    atf_producer writer;           /* the producer's view (used by the traced thread only) */
    atf__mutex lock;             /* everything below but `shown`, `name` and the ids */
    atf_ring index_c, detail_c;  /* the drain's views */
    void *index_raw, *detail_raw; /* owned ring memory, NULL when the caller owns it */
    atf__file_writer index_file, detail_file;
    atf__link *links;            /* [link_head, link_head + link_len) */
    size_t link_head, link_len, link_cap;
    uint64_t detail_released;    /* detail records released unpersisted */
    uint64_t bound_lost;         /* index events discarded after a bound stopped recording */
    uint64_t skipped;            /* index events left out while recording was off, in gaps
                                    of reason ATF_GAP_SKIPPED in gaps.atf */
    uint64_t bound_first_ns;     /*   the stamp of the first of them */
    uint8_t **keep;              /* flight recorder: chunks of held events, oldest first */
    size_t keep_first, keep_count, keep_cap; /*   (a ring of chunk pointers) */
    uint64_t keep_lo, keep_hi;   /*   ring numbers of the held events [keep_lo, keep_hi) */
    uint64_t keep_oldest_ns;     /*   last stamp of the oldest chunk (release-stored: other
                                      slots read it to choose whom to take a chunk from) */
    uint32_t keep_gen;           /*   the session's persist_gen at the last write */
    atf_gap *keep_gaps;          /*   ring gaps among or before the held events */
    size_t keep_gap_count, keep_gap_cap;
    atf_pause *keep_pauses;      /*   self-drains, numbered as the ring numbers events */
    size_t keep_pause_count, keep_pause_cap;
    uint8_t *keep_detail;        /*   detail records of held events, [head, len), each led by
                                      its length and naming its event as the ring does */
    size_t keep_detail_head, keep_detail_len, keep_detail_cap;
    uint64_t keep_detail_counted; /*  bytes of them counted in the session's keep_held */
    uint64_t discarded;          /* events discarded by the flight recorder, in gaps.atf */
    uint64_t discard_pending;    /*   those not in gaps.atf yet */
    uint64_t discard_first_ns;   /*   the stamp of the first of these */
    uint64_t ring_dropped;       /* copies of the rings' producer counters, taken by the */
    uint64_t ring_detail_dropped; /*  drain (the ring memory goes at finalize) */
    uint64_t ring_pushed, ring_waits, ring_timeouts;
    uint64_t ring_gap_detail_lost;  /*   and its open gap: detail lost, reason, first stamp */
    uint32_t ring_gap_reason;
    uint64_t ring_gap_first;
    uint64_t paused_ns;          /* the producer's self-drains */
    uint8_t *stage;              /* staging buffer for detail records */
    size_t stage_cap;
    uint8_t *piece;              /* ATF_STAMP_TICKS without a detail ring: the events of a
                                    write piece, converted (the ring keeps the producer's
                                    stamps); NULL until needed, or when out of memory */
    atf__tick_map ticks;         /* the session's map, as of ticks_gen */
    uint64_t ticks_gen;
    atf__window *windows;        /* the session's trigger windows, as of window_gen */
    size_t window_count;
    uint64_t window_gen;
    atf__manifest_thread shown;  /* what the manifest says of it (under the session lock) */
    atf__side_file gaps;         /* gaps.atf, made at the first gap */
    atf__side_file pauses;       /* pauses.atf, made at the first self-drain */
    uint64_t gaps_index_lost;    /* index events the records there account for */
    uint64_t gaps_detail_lost;   /* detail records they account for (ring records) */
    uint64_t gap_tail;           /* gap records taken from the ring */
    uint32_t thread_id, slot;
    uint32_t layout;             /* the rings' (1 or 2), copied at attach: a retired slot's
                                    ring memory is gone */
    int files_made;              /* the drain made thread_<slot>/ and index.atf (or failed) */
    int finalized, has_detail_ring;
    uint32_t producing;          /* its own ring: 1 from its attach until its producer
                                    closes (atomic) */
    int self_draining;           /* its producer drains it: a trigger's write waits for the
                                    drain (not in the producer's time) */
    int retired;                 /* flight recorder: the thread ended and its ring memory
                                    went; what it holds waits for a write (>>flightrecorder) */
    int detail_stopped;          /* detail.atf takes no more records (numbering untrusted) */
    int error_reported;          /* error handed to the session */
    atf_error error;             /* first error of this slot's files */
    uint64_t populated;          /* index ring slots from its start faulted in (during its
                                    first lap; later laps reuse those pages) */
    uint64_t tick_index;         /* ATF_STAMP_TICKS with a detail ring: index events */
    uint64_t tick_detail;        /* before this one and detail ring bytes before this
                                    position are converted in the ring */
    uint64_t tick_last;          /* the thread's latest converted time */
    size_t tick_hint;            /* map segment of the latest conversion */
    char name[128];
    int name_given;              /* named by atf_session_attach: atf_session_name_thread
                                    leaves the name alone */
} atf__slot;

/* One function of the manifest: a name, a location, or both (NULL name: location only). */
typedef struct atf__symbol {
    uint64_t function_id;
    char *name;
    uint64_t offset;
    uint32_t module_id;
    int has_offset;
} atf__symbol;
typedef struct atf__module {
    uint32_t module_id;
    char *path;
    uint64_t base, size;
    char build_id[65];           /* lowercase hex, "" unknown */
} atf__module;
/* timescale > 0: exact, value in units of 1/timescale s; 0: value_f at `rate` units/s */
typedef struct atf__anchor {
    char name[128];
    uint64_t host_ns;
    int64_t value;
    int32_t timescale;
    double value_f, rate;
} atf__anchor;

#define ATF__MAX_WINDOWS 4096
#define ATF__INDEX_BATCH 2048     /* the drain thread leaves smaller index batches waiting */
#define ATF__CONVERT_PIECE_EVENTS 8192 /* events converted, then appended, at a time (256 KiB) */
#define ATF__POPULATE_FIRST 131072   /* index ring slots faulted in at attach (4 MiB) */
#define ATF__POPULATE_AHEAD 524288   /* then by the drain, ahead of the producer (16 MiB) */
#define ATF__DRAIN_BUSY 16384     /* a pass that moved this many records: no sleep */
#define ATF__TRIGGER_SLACK_NS 100000000u /* how late a trigger may name its time t */

/* Where a session stands against its bounds (>>bounds), under the session's lock;
 * `active` set at open; `full`, `reason` and `cut_ns` also read without it
 * (release-stored). */
typedef struct atf__bound {
    int active;                  /* some bound applies: appends go through the bounds */
    uint32_t full;               /* a bound and its slack reached: nothing more is written */
    uint32_t reason;             /* ATF_STOP_* of the first bound reached */
    uint64_t stopped_ns;         /*   where it cut the trace */
    uint64_t cut_ns;             /* events stamped from here on are not written (UINT64_MAX:
                                    none; release-stored) */
    uint32_t duration_pending;   /* max_duration_ns's cut waits for the first event */
    uint64_t written;            /* event bytes the session's files took */
    uint64_t granted_ns;         /*   the latest stamp of the events they were granted for */
    uint64_t reserve;            /* disk guard: the free space kept (0: no guard) */
    uint64_t room;               /*   bytes that could be written at the last look, */
    uint64_t since_look;         /*   granted since then, */
    uint64_t looked_ns;          /*   and when that was */
} atf__bound;

struct atf_session {
    atf_session_config cfg;
    uint64_t id;                 /* distinguishes sessions in thread-local caches */
    char dir[1024];              /* <root>/<session>/pid_<pid> */
    atf__mutex lock;             /* slots, metadata, triggers, error */
    atf__mutex drain_lock;       /* one drain pass at a time, the manifest's rewrites;
                                    taken before a slot's lock, which is taken before
                                    `lock` */
    atf__slot **slots;
    uint64_t slot_count;         /* published with a release store */
    atf__module *modules;
    size_t module_count, module_cap;
    atf__symbol *symbols;
    size_t symbol_count, symbol_cap;
    size_t *symbol_hash;         /* open addressing: index + 1 into symbols, 0 empty */
    size_t symbol_hash_cap;      /*   a power of two, at least twice symbol_count */
    char *cmdline;               /* NULL until atf_session_set_cmdline */
    atf__anchor *anchors;
    size_t anchor_count, anchor_cap;
    atf__window *windows;        /* triggers: sorted, disjoint (under `lock`) */
    size_t window_count;
    uint64_t window_gen;         /* bumped on every change */
    uint64_t attach_failures;
    uint64_t self_drained;       /* records producers drained themselves (under `lock`) */
    uint64_t producing;          /* slots with rings of their own whose producers have not
                                    closed (atomic) */
    uint64_t cpus;               /* processors, counted at open */
    atf__bound bound;            /* max_bytes, max_duration_ns, disk_reserve */
    int keep_active;             /* flight recorder (keep_last_*) */
    uint64_t keep_held;          /*   bytes of chunks held (under `lock`) */
    uint32_t persist_gen;        /*   bumped by atf_session_trigger (atomic; 32 bits: lock-free
                                      on every target) */
    int manifest_dirty;
    uint64_t manifest_room;      /* bytes of manifest.json as last written while recording:
                                    its text and the room kept after it (>>manifest) */
    atf_error error;
#if !defined(ATF_NO_THREADS)
    atf__thread drain_thread;
    atf__thread_start_ctx drain_ctx;
    int drain_running;
#endif
    uint64_t stop;               /* set once: the drain thread exits */
    atf__tick_map ticks;         /* calibration (under `lock`), */
    uint64_t ticks_gen;          /*   bumped on every change */
    int convert_ticks;           /* ATF_STAMP_TICKS where ticks are not ns already */
    atf_session *live_next;      /* registry of open sessions (under the global lock) */
};

/* ---- 10.3 thread-local producers --------------------------------------------------- >>tls */

/* One per (thread, session) the thread met; the most recently used one first. A NULL
 * writer means "do not attach again" (detached, or attaching failed). */
typedef struct atf__tls_entry {
    uint64_t session_id;
    atf_producer *writer;
    struct atf__tls_entry *next;
} atf__tls_entry;


ATF__PRIVATE uint64_t atf__next_session_id(void) {
#if defined(ATF__CC_MSVC)
    return (uint64_t)_InterlockedIncrement64((volatile __int64 *)&atf__session_ids);
#else
    return __atomic_add_fetch(&atf__session_ids, 1, __ATOMIC_RELAXED);
#endif
}

/* The session lock, marking the thread as inside the library: an instrumentation hook
 * that fires meanwhile (a library function built with instrumentation, an allocator)
 * must not try to attach, which would take the same lock again. */
ATF__PRIVATE void atf__session_lock(atf_session *s) {
    atf__tls_no_attach++;
    atf__mutex_lock(&s->lock);
}
ATF__PRIVATE void atf__session_unlock(atf_session *s) {
    atf__mutex_unlock(&s->lock);
    atf__tls_no_attach--;
}

ATF__PRIVATE int atf__session_live(uint64_t id) { /* caller holds the global lock */
    atf_session *s;
    for (s = atf__live_sessions; s; s = s->live_next)
        if (s->id == id) return 1;
    return 0;
}

/* The calling thread's entry for session `id`, moved to the front; NULL if none. */
ATF__PRIVATE atf__tls_entry *atf__tls_find(uint64_t id) {
    atf__tls_entry *e = atf__tls_list, *prev = NULL;
    for (; e; prev = e, e = e->next) {
        if (e->session_id != id) continue;
        if (prev) {
            prev->next = e->next;
            e->next = atf__tls_list;
            atf__tls_list = e;
        }
        return e;
    }
    return NULL;
}

/* Frees the calling thread's entries of sessions that were closed. */
ATF__PRIVATE void atf__tls_prune(void) {
    atf__tls_entry **link = &atf__tls_list;
    atf__global_lock();
    while (*link) {
        atf__tls_entry *e = *link;
        if (atf__session_live(e->session_id)) {
            link = &e->next;
        } else {
            *link = e->next;
            ATF_FREE(e);
        }
    }
    atf__global_unlock();
}

/* Thread exit: close this thread's writers of sessions still open (the drain then
 * finalizes their files) and free the entries. Never attach again from here on. */
ATF__PRIVATE void atf__thread_exit(void *value) {
    atf__tls_entry *e, *next;
    (void)value;
    atf__tls_no_attach = 1;
    atf__global_lock();
    for (e = atf__tls_list; e; e = next) {
        next = e->next;
        if (e->writer && atf__session_live(e->session_id)) atf__producer_close_rings(e->writer);
        ATF_FREE(e);
    }
    atf__tls_list = NULL;
    atf__global_unlock();
}

/* atf_producer_close on a session writer from its thread: forget it, so that thread exit
 * does not close it a second time after the drain released its rings. */
ATF__PRIVATE void atf__session_forget_writer(atf_producer *w) {
    atf__tls_entry *e;
    for (e = atf__tls_list; e; e = e->next)
        if (e->writer == w) e->writer = NULL;
}

ATF__PRIVATE void atf__session_fail(atf_session *s, const atf_error *e) {
    atf__session_lock(s);
    atf__error_adopt(&s->error, e);
    atf__session_unlock(s);
}

/* ---- 10.4 bounds: max size, duration, the disk reserve -------------------------- >>bounds */
/* Every append of events goes through the bounds when the session has any. A bound cuts
 * the trace at one stamp for every thread: events stamped before the cut are written,
 * those from it on are not. max_duration_ns sets the cut at open. max_bytes and the disk
 * reserve grant bytes before they are written; the first grant refused sets the cut at the
 * stamp of the events refused, and from then on the events before the cut that are still
 * queued in other threads' rings may take a little more (the slack: 1 % + 512 KiB of
 * max_bytes, an eighth of the reserve) so that the trace ends at the same time in every
 * thread; past the slack nothing more is written. The free space is looked at again
 * when a grant would pass what the last look allowed, and at least once a second (other
 * writers share the file system). */

/* A look at the file system's free space (the session's lock held). A file system that
 * cannot say leaves the guard without effect. */
ATF__PRIVATE void atf__bound_look(atf_session *s) {
    atf__bound *b = &s->bound;
    uint64_t avail, size;
    b->looked_ns = atf_now_ns();
    if (atf__fs_space(s->dir, &avail, &size) != 0) {
        b->room = UINT64_MAX;
        return;
    }
    if (!s->cfg.disk_reserve) { /* max(1 GiB, 5 %) */
        b->reserve = size / 20;
        if (b->reserve < ((uint64_t)1 << 30)) b->reserve = (uint64_t)1 << 30;
    }
    b->room = avail > b->reserve ? avail - b->reserve : 0;
    b->since_look = 0;
}

/* Records the first bound reached, and cuts the trace at `at_ns`, or later when events
 * past it were granted already (another thread's): the session's lock held. */
ATF__PRIVATE void atf__bound_stop(atf_session *s, uint32_t reason, uint64_t at_ns) {
    atf__bound *b = &s->bound;
    if (b->reason) return;
    if (at_ns <= b->granted_ns) at_ns = b->granted_ns + 1;
    b->stopped_ns = at_ns;
    if (at_ns < b->cut_ns) atf__store_release_u64(&b->cut_ns, at_ns);
    atf__store_release_u32(&b->reason, reason);
    s->manifest_dirty = 1;
}

/* The bytes that `cap` leaves after `used`, as a grant of at most `want` in whole units. */
ATF__PRIVATE uint64_t atf__bound_fit(uint64_t want, uint64_t unit, uint64_t cap, uint64_t used) {
    uint64_t left = cap > used ? cap - used : 0;
    return want <= left ? want : left - left % unit;
}

/* Grants up to `want` bytes, a multiple of `unit`, for events stamped from `ts` on
 * (before the cut): index events at `run` (unit: one each), or detail records that end
 * at `ts_last` (run NULL; unit: all of them). 0 when none fit: the first time, recording
 * stops there; once the slack is spent too, nothing more is granted. What a write did
 * not use goes back with atf__bound_give. */
ATF__PRIVATE uint64_t atf__bound_take(atf_session *s, uint64_t want, uint64_t unit, uint64_t ts,
                                      const uint8_t *run, uint64_t ts_last) {
    atf__bound *b = &s->bound;
    uint64_t grant = want;
    uint32_t refused = ATF_STOP_NONE;
    int slack;
    if (atf__load_acquire_u32(&b->full)) return 0;
    atf__session_lock(s);
    slack = b->reason == ATF_STOP_MAX_SIZE || b->reason == ATF_STOP_DISK_RESERVE;
    if (s->cfg.max_bytes) {
        uint64_t cap = s->cfg.max_bytes;
        if (slack) cap += s->cfg.max_bytes / 100 + ((uint64_t)1 << 19);
        grant = atf__bound_fit(grant, unit, cap, b->written);
        if (!grant) refused = ATF_STOP_MAX_SIZE;
    }
    if (grant && b->reserve) {
        if (b->since_look + grant > b->room || atf_now_ns() - b->looked_ns > 1000000000u)
            atf__bound_look(s);
        if (b->room != UINT64_MAX)
            grant = atf__bound_fit(grant, unit, b->room + (slack ? b->reserve / 8 : 0),
                                   b->since_look);
        if (!grant) refused = ATF_STOP_DISK_RESERVE;
    }
    if (refused && b->reason) atf__store_release_u32(&b->full, 1); /* the slack is spent */
    else if (refused) atf__bound_stop(s, refused, ts);
    if (grant && run) ts_last = atf__load_le64(run + (grant / unit - 1) * unit);
    if (grant && ts_last > b->granted_ns) b->granted_ns = ts_last;
    b->written += grant;
    b->since_look += grant;
    atf__session_unlock(s);
    return grant;
}

/* Gives back granted bytes a write did not use (a packed file's events are smaller). */
ATF__PRIVATE void atf__bound_give(atf_session *s, uint64_t bytes) {
    atf__bound *b = &s->bound;
    if (!bytes) return;
    atf__session_lock(s);
    b->written -= bytes;
    b->since_look = b->since_look > bytes ? b->since_look - bytes : 0;
    atf__session_unlock(s);
}

/* Where the trace is cut now: events stamped from here on are not written. */
ATF__PRIVATE uint64_t atf__bound_cut(atf_session *s) {
    return atf__load_acquire_u64(&s->bound.cut_ns);
}

/* max_duration_ns counts from the first event written (not from the open, which a
 * recorder may make well before it): the cut is set then, once. */
ATF__PRIVATE void atf__bound_first_event(atf_session *s, uint64_t ts) {
    atf__bound *b = &s->bound;
    atf__session_lock(s);
    if (b->duration_pending) {
        atf__store_release_u32(&b->duration_pending, 0);
        if (ts + s->cfg.max_duration_ns < b->cut_ns)
            atf__store_release_u64(&b->cut_ns, ts + s->cfg.max_duration_ns);
    }
    atf__session_unlock(s);
}

/* Whether a drain pass may hold its packed appends in their stages (atf__file_writer_hold):
 * no bound by size, or one far enough away that what every thread's stage can hold
 * cannot matter (the free space seen while they hold it is that much too large). Near a
 * bound, appends are written as they are granted. */
#define ATF__HOLD_MARGIN ((uint64_t)64 << 20)
ATF__PRIVATE int atf__bound_far(atf_session *s) {
    atf__bound *b = &s->bound;
    uint64_t margin = ATF__HOLD_MARGIN +
                      atf__load_acquire_u64(&s->slot_count) * ATF__PACK_STAGE_BLOCKS * ATF__PACK_BLOCK_MAX;
    int roomy;
    if (!b->active) return 1;
    atf__session_lock(s);
    roomy = !b->reason &&
          (!s->cfg.max_bytes || (s->cfg.max_bytes > b->written && s->cfg.max_bytes - b->written > margin)) &&
          (!b->reserve || b->room == UINT64_MAX ||
           (b->room > b->since_look && b->room - b->since_look > margin));
    atf__session_unlock(s);
    return roomy;
}

/* At open: a first look when the disk guard is on. */
ATF__PRIVATE void atf__bound_open(atf_session *s) {
    atf__bound *b = &s->bound;
    b->cut_ns = UINT64_MAX;
    b->duration_pending = s->cfg.max_duration_ns != 0;
    if (s->cfg.disk_reserve != ATF_DISK_RESERVE_OFF) {
        b->reserve = s->cfg.disk_reserve;
        atf__bound_look(s);
        if (b->room == UINT64_MAX) b->reserve = 0; /* the file system cannot say */
    }
    b->active = s->cfg.max_bytes || s->cfg.max_duration_ns || b->reserve;
}

/* ---- 10.5 windowed detail ------------------------------------------------------ >>windows */

/* Whether ts falls in one of n sorted disjoint windows (binary search). */
ATF__PRIVATE int atf__in_windows(const atf__window *w, size_t n, uint64_t ts) {
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first window with lo > ts */
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid].lo <= ts) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && ts <= w[lo - 1].hi;
}

/* Adds [lo, hi] to the sorted disjoint list (capacity ATF__MAX_WINDOWS + 1), merging
 * what overlaps or touches; past the limit the two closest neighbours merge. */
ATF__PRIVATE void atf__windows_add(atf__window *w, size_t *count, uint64_t lo, uint64_t hi) {
    size_t n = *count, at = 0, end, i, best = 0;
    uint64_t best_gap = UINT64_MAX;
    while (at < n && w[at].hi < lo && w[at].hi + 1 < lo) at++;   /* first that may touch */
    end = at;
    while (end < n && w[end].lo <= hi + (hi < UINT64_MAX)) {      /* last that touches */
        if (w[end].lo < lo) lo = w[end].lo;
        if (w[end].hi > hi) hi = w[end].hi;
        end++;
    }
    /* replace w[at, end) by the one merged window */
    memmove(w + at + 1, w + end, (n - end) * sizeof *w);
    w[at].lo = lo;
    w[at].hi = hi;
    n = n - (end - at) + 1;
    if (n > ATF__MAX_WINDOWS) {
        for (i = 0; i + 1 < n; i++) {
            uint64_t gap = w[i + 1].lo - w[i].hi;
            if (gap < best_gap) {
                best_gap = gap;
                best = i;
            }
        }
        w[best].hi = w[best + 1].hi;
        memmove(w + best + 1, w + best + 2, (n - best - 2) * sizeof *w);
        n--;
    }
    *count = n;
}

/* ---- 10.6 links between detail records and index events -------------------------- >>links */

ATF__PRIVATE atf__link *atf__slot_link_push(atf__slot *sl) {
    if (sl->link_head + sl->link_len == sl->link_cap) {
        if (sl->link_head) { /* compact before growing */
            memmove(sl->links, sl->links + sl->link_head, sl->link_len * sizeof *sl->links);
            sl->link_head = 0;
        }
        if (sl->link_len == sl->link_cap) {
            size_t cap = sl->link_cap ? sl->link_cap * 2 : 256;
            atf__link *p = (atf__link *)ATF_REALLOC(sl->links, cap * sizeof *p);
            if (!p) return NULL;
            sl->links = p;
            sl->link_cap = cap;
        }
    }
    return &sl->links[sl->link_head + sl->link_len++];
}

/* Where the link lives in a 32-byte index record, and how wide it is. */
ATF__PRIVATE size_t atf__link_field(uint32_t layout, size_t *width) {
    *width = layout == ATF_LAYOUT_2 ? 8 : 4;
    return layout == ATF_LAYOUT_2 ? 16 : 28;
}

ATF__PRIVATE void atf__link_encode(uint8_t *out, size_t width, uint64_t detail_seq) {
    if (width == 8) atf__store_le64(out, detail_seq);
    else atf__store_le32(out, (uint32_t)detail_seq);
}

/* Drops detail records from `k` on: their index events will never be in index.atf. */
ATF__PRIVATE void atf__slot_cut_detail(atf__slot *sl, const atf__link *k) {
    atf__file_writer_cut(&sl->detail_file, k->bytes_before, k->detail_seq, k->time_end_before,
                         k->seq_last_before, &sl->error);
    sl->link_head = sl->link_len = 0;
}

/* Settles pending links against the index file and the ring [tail, head): an index event
 * on disk gets its link patched in place (windowed) and the entry goes; one still in the
 * ring gets the link in the ring before it is written; when index.atf stopped (or a
 * bound stopped recording), the records whose events cannot reach it are cut from
 * detail.atf. */
ATF__PRIVATE void atf__slot_settle_links(atf__slot *sl, uint64_t head) {
    atf__file_writer *ix = &sl->index_file;
    size_t width, field = atf__link_field(ix->layout, &width), i = 0;
    while (i < sl->link_len) {
        atf__link *k = &sl->links[sl->link_head + i];
        if (k->index_seq < ix->count) { /* on disk; everything before it went already */
            if (!k->linked) {
                uint8_t none[8], now[8];
                memset(none, 0xFF, sizeof none);
                atf__link_encode(now, width, k->detail_seq);
                atf__file_writer_patch(ix, k->index_seq * ATF_INDEX_EVENT_SIZE + field, none, now,
                                       width, &sl->error);
            }
            sl->link_head++;
            sl->link_len--;
        } else if (ix->stopped || sl->bound_lost) { /* cannot reach index.atf any more */
            atf__slot_cut_detail(sl, k);
            return;
        } else if (k->index_seq < head) { /* in the ring, not written yet */
            if (!k->linked) {
                uint8_t *rec = sl->index_c.data + ((k->index_seq & sl->index_c.mask) << 5);
                atf__link_encode(rec + field, width, k->detail_seq);
                k->linked = 1;
            }
            i++;
        } else {
            break;
        }
    }
    if (sl->link_len == 0) sl->link_head = 0;
}

/* ---- 10.7 draining detail records ------------------------------------------------ >>drain */

/* Opens thread_<slot>/<leaf> for a slot's file. */
ATF__PRIVATE atf_result atf__slot_open_file(atf_session *s, atf__slot *sl, atf__file_writer *f,
                                            const char *leaf, int is_detail) {
    char path[1024];
    uint32_t layout = sl->layout;
    if (snprintf(path, sizeof path, "%s/thread_%u/%s", s->dir, sl->slot, leaf) >= (int)sizeof path)
        return atf__error_set(&sl->error, ATF_E_ARG, s->dir, 0, "path too long");
    if (!is_detail && layout == ATF_LAYOUT_1 && s->cfg.layout == ATF_LAYOUT_PACKED)
        layout = ATF_LAYOUT_PACKED; /* the ring's layout-1 records, packed by the drain */
    return atf__file_writer_open(f, path, is_detail, layout, sl->thread_id, &sl->error);
}

/* Detail records collected for one write. */
typedef struct atf__stage { size_t bytes; uint64_t count, t_first, t_last, seq_last; } atf__stage;

/* Writes the staged records to detail.atf (opened on the first one); the links of records
 * that did not reach it are dropped. */
/* A bounded session's flush: the staged records that fit in what the bounds grant, whole;
 * when some do not, recording has stopped and detail.atf takes no more (detail_stopped:
 * the links to the records left out go). */
ATF__PRIVATE void atf__slot_flush_bounded(atf_session *s, atf__slot *sl, atf__stage *st) {
    atf__file_writer *f = &sl->detail_file;
    uint64_t grant = atf__bound_take(s, st->bytes, 1, st->t_first, NULL, st->t_last);
    uint64_t at = 0, last = 0, kept = 0;
    while (at < st->bytes) { /* whole records, each led by its length */
        uint32_t length = atf__load_le32(sl->stage + at);
        if (length == 0 || at + length > grant) break;
        last = at;
        at += length;
        kept++;
    }
    if (kept && !f->is_open) atf__slot_open_file(s, sl, f, "detail.atf", 1); /* made once used */
    if (kept)
        atf__file_writer_append(f, sl->stage, (size_t)at, kept, st->t_first,
                                atf__load_le64(sl->stage + last + 16), s->cfg.fsync_every_bytes,
                                &sl->error);
    atf__bound_give(s, grant - at);
    if (kept == st->count) return;
    f->lost += st->count - kept; /* a bound stopped recording: detail.atf ends here */
    sl->detail_stopped = 1;
}

ATF__PRIVATE void atf__slot_flush(atf_session *s, atf__slot *sl, atf__stage *st) {
    atf__file_writer *f = &sl->detail_file;
    if (!st->count) return;
    if (s->bound.active && !f->stopped && !sl->detail_stopped) {
        atf__slot_flush_bounded(s, sl, st);
    } else {
        if (!f->is_open && !f->stopped && !sl->detail_stopped)
            atf__slot_open_file(s, sl, f, "detail.atf", 1);
        atf__file_writer_append(f, sl->stage, st->bytes, st->count, st->t_first, st->t_last,
                                s->cfg.fsync_every_bytes, &sl->error);
    }
    while (sl->link_len && sl->links[sl->link_head + sl->link_len - 1].detail_seq >= f->count)
        sl->link_len--;
    st->bytes = 0;
    st->count = 0;
}

/* Whether detail.atf takes no more records. */
ATF__PRIVATE int atf__slot_detail_closed(const atf__slot *sl) {
    return sl->detail_stopped || sl->detail_file.stopped;
}

/* Adds one record to the stage (grown on demand). 0 when it was not staged: detail.atf
 * stopped while flushing, or out of memory (then the caller stops detail.atf, since a
 * hole would shift every later number). */
ATF__PRIVATE int atf__slot_stage(atf_session *s, atf__slot *sl, atf__stage *st, const uint8_t *rec,
                                 uint32_t length, uint64_t index_seq, uint64_t ts, int linked) {
    atf__file_writer *f = &sl->detail_file;
    atf__link *k;
    if (st->bytes + length > sl->stage_cap) {
        atf__slot_flush(s, sl, st);
        if (atf__slot_detail_closed(sl)) return 0;
        if (length > sl->stage_cap) { /* 1 MiB, or the ring's size when smaller */
            size_t ring = (size_t)sl->detail_c.mask + 1;
            size_t base = ring < ((size_t)1 << 20) ? ring : ((size_t)1 << 20);
            size_t want = length < base ? base : (size_t)length;
            uint8_t *p = (uint8_t *)ATF_REALLOC(sl->stage, want);
            if (!p) return 0;
            sl->stage = p;
            sl->stage_cap = want;
        }
    }
    k = atf__slot_link_push(sl);
    if (!k) return 0;
    k->index_seq = index_seq;
    k->detail_seq = f->count + st->count;
    k->bytes_before = f->bytes + st->bytes;
    k->time_end_before = st->count ? st->t_last : f->time_end;
    k->seq_last_before = st->count ? st->seq_last : f->seq_last;
    k->linked = linked;
    memcpy(sl->stage + st->bytes, rec, length);
    if (!st->count) st->t_first = ts;
    st->t_last = ts;
    st->seq_last = index_seq;
    st->bytes += length;
    st->count++;
    return 1;
}

ATF__PRIVATE int atf__slot_keep_detail(atf__slot *sl, const uint8_t *rec,
                                       uint32_t length); /* (>>flightrecorder) */

/* Moves detail records out of the ring, up to those whose index event is published
 * (index_seq < index_head). Linked (ALWAYS) records are all persisted; unlinked
 * (windowed) ones inside a trigger window are persisted, those no future trigger can
 * reach (older than `horizon`) are released, and the rest stay pending unless the ring is
 * more than half full. `final`: the producer is done; release what is not persisted. */
ATF__PRIVATE uint64_t atf__slot_drain_detail(atf_session *s, atf__slot *sl, uint64_t index_head,
                                             uint64_t horizon, int final) {
    atf_ring *r = &sl->detail_c;
    atf__file_writer *f = &sl->detail_file;
    uint64_t head = atf__load_acquire_u64(&r->shared->head), at = r->pos, moved = 0;
    uint64_t cap = r->mask + 1;
    uint32_t layout = r->shared->layout;
    atf__stage st;
    memset(&st, 0, sizeof st);
    if (head - at > cap || (head & 7u)) {
        atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, 0,
                              "detail ring head", cap, head - at);
        sl->detail_stopped = 1;
        return 0;
    }
    while (at < head) {
        const uint8_t *e = r->data + (at & r->mask);
        const uint8_t *rec = e + ATF__DETAIL_ENTRY_HEADER;
        uint32_t entry = atf__load_le32(e), flags = atf__load_le32(e + 4), length;
        uint64_t ts, index_seq;
        int persist;
        if (entry < ATF__DETAIL_ENTRY_HEADER || (entry & 7u) || entry > head - at ||
            (at & r->mask) + entry > cap ||
            (!(flags & ATF__DETAIL_ENTRY_PAD) &&
             ((length = atf__load_le32(rec)) < ATF_DETAIL_EVENT_HEADER_SIZE ||
              length > entry - ATF__DETAIL_ENTRY_HEADER))) {
            /* the producer cannot have written this: the memory is damaged (shared memory
             * is only as trustworthy as the other process). Stop reading it. */
            atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, at,
                                  "detail ring entry", 0, entry);
            sl->detail_stopped = 1;
            at = head;
            break;
        }
        if (flags & ATF__DETAIL_ENTRY_PAD) {
            at += entry;
            continue;
        }
        length = atf__load_le32(rec);
        ts = atf__load_le64(rec + 16);
        index_seq = atf__detail_record_seq(layout, rec);
        if (index_seq >= index_head) {
            if (!final) break; /* its index event is on its way */
            sl->detail_released++; /* it never came: the producer stopped mid-event */
            at += entry;
            moved++;
            continue;
        }
        persist = !(flags & ATF__DETAIL_ENTRY_UNLINKED) ||
                  atf__in_windows(sl->windows, sl->window_count, ts);
        if (!persist && !final && ts >= horizon && head - at <= cap / 2) break; /* pending */
        if (!persist) {
            sl->detail_released++;
        } else if (atf__slot_detail_closed(sl)) {
            f->lost++;
        } else if (s->keep_active ? !atf__slot_keep_detail(sl, rec, length)
                                  : !atf__slot_stage(s, sl, &st, rec, length, index_seq, ts,
                                                     !(flags & ATF__DETAIL_ENTRY_UNLINKED))) {
            if (!atf__slot_detail_closed(sl)) {
                atf__error_set(&sl->error, ATF_E_NOMEM, sl->index_file.path, 0, "detail staging");
                atf__slot_flush(s, sl, &st);
                sl->detail_stopped = 1;
            }
            f->lost++;
        }
        at += entry;
        moved++;
    }
    atf__slot_flush(s, sl, &st);
    r->pos = at;
    atf__store_release_u64(&r->shared->tail, at);
    return moved;
}

/* ---- 10.8 gaps and pauses ---------------------------------------------------- >>sidefiles */

/* Makes thread_<slot>/<leaf> holding `header` (under a temporary name, then renamed,
 * like the event files). */
ATF__PRIVATE void atf__slot_open_side(atf_session *s, atf__slot *sl, atf__side_file *f,
                                      const char *leaf, const uint8_t header[16]) {
    char path[1100], tmp[1110];
    f->state = 2;
    if (snprintf(path, sizeof path, "%s/thread_%u/%s", s->dir, sl->slot, leaf) >= (int)sizeof path) {
        atf__error_set(&sl->error, ATF_E_ARG, s->dir, 0, "path too long");
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f->fd = atf__fd_create(tmp);
    if (f->fd == ATF__FD_NONE) {
        atf__error_set_errno(&sl->error, ATF_E_IO, tmp, "create", atf__last_os_error());
    } else if (atf__fd_pwrite(f->fd, header, 16, 0, NULL) != 0 || atf__rename_replace(tmp, path) != 0) {
        atf__error_set_errno(&sl->error, ATF_E_IO, path, "create (header, rename)", atf__last_os_error());
        atf__fd_close(f->fd);
        atf__file_remove(tmp);
    } else {
        f->state = 1;
    }
}

/* Appends one 32-byte record to side file f (made at the first one, with `header`). A
 * failed write cuts the file back to its whole records and stops it; the manifest's counts
 * still say it all. 1 when the record was written. */
ATF__PRIVATE int atf__slot_append_side(atf_session *s, atf__slot *sl, atf__side_file *f,
                                       const char *leaf, const uint8_t header[16],
                                       const uint8_t rec[32]) {
    uint64_t at;
    char what[64];
    if (f->state == 0) atf__slot_open_side(s, sl, f, leaf, header);
    if (f->state != 1) return 0;
    at = 16 + f->written * 32;
    if (atf__fd_pwrite(f->fd, rec, 32, at, NULL) != 0) {
        snprintf(what, sizeof what, "write record (%s)", leaf);
        atf__error_set_errno(&sl->error, ATF_E_IO, sl->index_file.path, what, atf__last_os_error());
        atf__fd_truncate(f->fd, at);
        atf__fd_close(f->fd);
        f->state = 2;
        return 0;
    }
    f->written++;
    return 1;
}

/* At finalize: the side file synced (fsync_mode CLOSE) and closed. */
ATF__PRIVATE void atf__slot_close_side(atf__slot *sl, atf__side_file *f, int sync) {
    if (f->state != 1) return;
    if (sync && atf__fd_sync(f->fd) != 0)
        atf__error_set_errno(&sl->error, ATF_E_IO, sl->index_file.path, "fsync side file",
                             atf__last_os_error());
    atf__fd_close(f->fd);
    f->state = 2;
}

/* Appends one gap record to gaps.atf. */
ATF__PRIVATE void atf__slot_write_gap(atf_session *s, atf__slot *sl, const atf_gap *g) {
    uint8_t header[ATF_GAPS_HEADER_SIZE], rec[ATF_GAP_RECORD_SIZE];
    atf_gaps_header_encode(sl->thread_id, header);
    atf_gap_encode(g, rec);
    if (!atf__slot_append_side(s, sl, &sl->gaps, "gaps.atf", header, rec)) return;
    if (g->reason == ATF_GAP_SKIPPED) { /* left out by choice: no loss to account for */
        sl->skipped += g->index_lost;
        return;
    }
    if (g->reason == ATF_GAP_DISCARDED) {
        sl->discarded += g->index_lost;
        return;
    }
    sl->gaps_index_lost += g->index_lost;
    sl->gaps_detail_lost += g->detail_lost;
}

/* Appends one pause record to pauses.atf. */
ATF__PRIVATE void atf__slot_write_pause(atf_session *s, atf__slot *sl, const atf_pause *p) {
    uint8_t header[ATF_PAUSES_HEADER_SIZE], rec[ATF_PAUSE_RECORD_SIZE];
    atf_pauses_header_encode(sl->thread_id, header);
    atf_pause_encode(p, rec);
    atf__slot_append_side(s, sl, &sl->pauses, "pauses.atf", header, rec);
}

/* A producer stamp in the trace clock (ticks converted as the drain converts events). */
ATF__PRIVATE uint64_t atf__slot_stamp_ns(const atf_session *s, const atf__slot *sl, uint64_t stamp) {
    size_t hint = 0;
    return s->convert_ticks && stamp ? atf__tick_map_ns(&sl->ticks, stamp, 0, &hint) : stamp;
}

/* The oldest gap record the producer published and the drain has not taken, copied
 * out of the ring; 0 when none. A record that no producer can have written (shared
 * memory is only as trustworthy as the other process) is an error, and skipped. */
ATF__PRIVATE int atf__slot_peek_gap(atf_session *s, atf__slot *sl, atf_gap *g) {
    atf_ring_header *h = sl->index_c.shared;
    for (;;) {
        uint64_t head = atf__load_acquire_u64(&h->gap_head);
        const atf_ring_gap *rg = &h->gaps[sl->gap_tail % ATF_RING_GAPS];
        if (head == sl->gap_tail) return 0;
        if (head - sl->gap_tail > ATF_RING_GAPS) {
            atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, 0,
                                  "index ring gap queue", ATF_RING_GAPS, head - sl->gap_tail);
            sl->gap_tail = head;
            atf__store_release_u64(&h->gap_tail, head);
            return 0;
        }
        g->index_seq = rg->seq;
        g->index_lost = rg->index_lost;
        g->detail_lost = rg->detail_lost;
        g->reason = rg->reason;
        g->first_lost_ns = atf__slot_stamp_ns(s, sl, rg->first_lost_ns);
        if (g->index_seq >= sl->index_c.pos && g->index_lost)
            return 1;
        atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, 0,
                              "index ring gap record before the consumer", sl->index_c.pos,
                              g->index_seq);
        sl->gap_tail++;
        atf__store_release_u64(&h->gap_tail, sl->gap_tail);
    }
}

ATF__PRIVATE void atf__slot_keep_gap(atf__slot *sl, const atf_gap *g); /* (>>flightrecorder) */

/* Takes the gap record peeked, persisting it when index.atf holds exactly the events
 * before it; otherwise index.atf stopped, and the gap at the end accounts for it. */
ATF__PRIVATE void atf__slot_take_gap(atf_session *s, atf__slot *sl, const atf_gap *g) {
    atf__file_writer *ix = &sl->index_file;
    if (s->keep_active) atf__slot_keep_gap(sl, g);
    else if (ix->is_open && !ix->stopped && ix->count == g->index_seq)
        atf__slot_write_gap(s, sl, g);
    sl->gap_tail++;
    atf__store_release_u64(&sl->index_c.shared->gap_tail, sl->gap_tail);
}

/* At finalize: what the producer dropped after its last published gap record, what
 * index.atf could not take, and gap records it could not place, as one gap at the end. */
ATF__PRIVATE void atf__slot_end_gap(atf_session *s, atf__slot *sl) {
    uint64_t lost = sl->ring_dropped + sl->index_file.lost + sl->bound_lost;
    uint64_t detail = sl->ring_gap_detail_lost; /* as the last atf__slot_copy_counters read */
    atf_gap g;
    if (lost <= sl->gaps_index_lost || !sl->files_made) return;
    memset(&g, 0, sizeof g);
    g.index_seq = sl->index_file.count;
    g.index_lost = lost - sl->gaps_index_lost;
    g.detail_lost = detail > sl->gaps_detail_lost ? detail - sl->gaps_detail_lost : 0;
    if (sl->index_file.lost) {
        g.reason = ATF_GAP_IO;
    } else if (sl->bound_lost) {
        g.reason = ATF_GAP_STOPPED;
        g.first_lost_ns = sl->bound_first_ns;
    } else { /* only the open gap: its reason and first stamp are known */
        g.reason = sl->ring_gap_reason == ATF_GAP_TIMEOUT ? ATF_GAP_TIMEOUT : ATF_GAP_DROPPED;
        g.first_lost_ns = atf__slot_stamp_ns(s, sl, sl->ring_gap_first);
    }
    atf__slot_write_gap(s, sl, &g);
}

/* ---- 10.9 index events ----------------------------------------------------- >>indexevents */
/* Runs of index events appended to index.atf; in a bounded session those its bounds
 * grant, the rest counted as stopped (bound_lost). */

/* The bytes an index file takes on disk for its events (packed: blocks as written). */
ATF__PRIVATE uint64_t atf__file_writer_event_bytes(const atf__file_writer *f) {
    const atf__packer *k = f->pack;
    if (!k) return f->bytes;
    return k->at + (k->events ? ATF_PACKED_BLOCK_HEADER_SIZE + k->len : 0);
}

/* How many of the n events at `run` a bounded session writes now (0: none; they are
 * discarded): those stamped before the cut, in as many bytes as atf__bound_take grants,
 * a piece at a time so that the grant stays close to what packing takes. */
#define ATF__BOUND_PIECE 4096u
ATF__PRIVATE uint64_t atf__slot_bound_events(atf_session *s, const uint8_t *run, uint64_t n,
                                             uint64_t *granted) {
    uint64_t cut, lo, hi;
    if (atf__load_acquire_u32(&s->bound.duration_pending))
        atf__bound_first_event(s, atf__load_le64(run));
    cut = atf__bound_cut(s);
    if (n > ATF__BOUND_PIECE) n = ATF__BOUND_PIECE;
    for (;;) {
        if (atf__load_le64(run + ((n - 1) << 5)) >= cut) {
            for (lo = 0, hi = n - 1; lo < hi;) { /* the first event at or past the cut */
                uint64_t mid = lo + (hi - lo) / 2;
                if (atf__load_le64(run + (mid << 5)) >= cut) hi = mid;
                else lo = mid + 1;
            }
            if (lo == 0) {
                atf__session_lock(s);
                atf__bound_stop(s, ATF_STOP_DURATION, cut); /* when no other bound cut it */
                atf__session_unlock(s);
                return 0;
            }
            n = lo;
        }
        *granted = atf__bound_take(s, n * ATF_INDEX_EVENT_SIZE, ATF_INDEX_EVENT_SIZE,
                                   atf__load_le64(run), run, 0);
        if (*granted) return *granted / ATF_INDEX_EVENT_SIZE;
        /* refused: once more when that stopped recording at a later cut than these */
        if (atf__load_acquire_u32(&s->bound.full) || atf__bound_cut(s) == cut) return 0;
        cut = atf__bound_cut(s);
    }
}

/* Appends n events at `run` to index.atf; in a bounded session those past its bounds are
 * counted (bound_lost) instead. */
ATF__PRIVATE void atf__slot_append_run(atf_session *s, atf__slot *sl, const uint8_t *run,
                                       uint64_t n) {
    while (n) {
        uint64_t granted = 0, before = 0, take = n;
        if (s->bound.active) {
            take = sl->bound_lost ? 0 : atf__slot_bound_events(s, run, n, &granted);
            if (!take) {
                if (!sl->bound_lost) sl->bound_first_ns = atf__load_le64(run);
                sl->bound_lost += n;
                return;
            }
            before = atf__file_writer_event_bytes(&sl->index_file);
        }
        atf__file_writer_append(&sl->index_file, run, (size_t)(take << 5), take, 0, 0,
                                s->cfg.fsync_every_bytes, &sl->error);
        if (granted) { /* a failed write can take back more than this append coded */
            uint64_t after = atf__file_writer_event_bytes(&sl->index_file);
            uint64_t used = after > before ? after - before : 0;
            atf__bound_give(s, granted > used ? granted - used : 0);
        }
        run += take << 5;
        n -= take;
    }
}

/* ---- 10.10 flight recorder ---------------------------------------------- >>flightrecorder */
/* The flight recorder (keep_last_bytes, keep_last_ns). The drain moves each thread's
 * events out of its ring into chunks of memory instead of index.atf (and their detail
 * records into a buffer beside, instead of detail.atf); when the session
 * holds its budget, the chunk whose newest event is the oldest of all (this thread's, or
 * another's whose lock is free; an ended thread's too) is discarded and reused, so that
 * the session keeps its most recent events, whichever threads made them. What a thread
 * holds is written at close and after each atf_session_trigger: the ring's gaps that fell
 * before the held events, a gap of reason ATF_GAP_DISCARDED counting the events discarded
 * since the last write, then the held events with the ring's gaps and pauses among them
 * where they fell. Nothing else is written, so a crash loses what is held, never what
 * was written. */
#define ATF__KEEP_CHUNK_EVENTS 2048u
#define ATF__KEEP_CHUNK_BYTES ((uint64_t)ATF__KEEP_CHUNK_EVENTS * ATF_INDEX_EVENT_SIZE)
#define ATF__KEEP_DEFAULT_BYTES ((uint64_t)1 << 30)
ATF__PRIVATE int atf__slot_trylock(atf__slot *sl); /* (>>drainpass) */
ATF__PRIVATE void atf__slot_unlock(atf__slot *sl);

ATF__PRIVATE void atf__keep_open(atf_session *s) {
    s->keep_active = s->cfg.keep_last_bytes || s->cfg.keep_last_ns;
    if (s->keep_active && !s->cfg.keep_last_bytes) s->cfg.keep_last_bytes = ATF__KEEP_DEFAULT_BYTES;
}

ATF__PRIVATE uint8_t *atf__keep_chunk_at(const atf__slot *sl, size_t i) {
    return sl->keep[(sl->keep_first + i) % sl->keep_cap];
}

/* The stamp of the newest event of the slot's oldest chunk (it holds some). */
ATF__PRIVATE uint64_t atf__keep_oldest_end(const atf__slot *sl) {
    uint64_t held = sl->keep_hi - sl->keep_lo;
    uint64_t in_first = held < ATF__KEEP_CHUNK_EVENTS ? held : ATF__KEEP_CHUNK_EVENTS;
    return atf__load_le64(atf__keep_chunk_at(sl, 0) + ((in_first - 1) << 5));
}

/* Publishes, for the slots choosing whose chunk to discard, the stamp of the newest event
 * of this slot's oldest chunk when another slot may take it: a full chunk (one before
 * the newest), or a retired slot's last; UINT64_MAX otherwise. */
ATF__PRIVATE void atf__keep_note_oldest(atf__slot *sl) {
    int takeable = sl->keep_count > 1 || (sl->keep_count == 1 && sl->retired);
    uint64_t ns = takeable && sl->keep_hi > sl->keep_lo ? atf__keep_oldest_end(sl) : UINT64_MAX;
    atf__store_release_u64(&sl->keep_oldest_ns, ns);
}

/* Holds a detail record of an event held (or about to be: its index event is published),
 * as the ring has it. 0 when memory ran out. */
ATF__PRIVATE int atf__slot_keep_detail(atf__slot *sl, const uint8_t *rec, uint32_t length) {
    if (sl->keep_detail_len + length > sl->keep_detail_cap) {
        size_t live = sl->keep_detail_len - sl->keep_detail_head, cap;
        if (sl->keep_detail_head) /* the records let go make room first */
            memmove(sl->keep_detail, sl->keep_detail + sl->keep_detail_head, live);
        sl->keep_detail_head = 0;
        sl->keep_detail_len = live;
        cap = sl->keep_detail_cap ? sl->keep_detail_cap : 65536;
        while (cap < live + length) cap *= 2;
        if (cap > sl->keep_detail_cap) {
            uint8_t *p = (uint8_t *)ATF_REALLOC(sl->keep_detail, cap);
            if (!p) return 0;
            sl->keep_detail = p;
            sl->keep_detail_cap = cap;
        }
    }
    memcpy(sl->keep_detail + sl->keep_detail_len, rec, length);
    sl->keep_detail_len += length;
    return 1;
}

/* Lets the held detail records of events before ring number `seq` go (released: the
 * thread's detail_dropped). */
ATF__PRIVATE void atf__keep_detail_drop_before(atf__slot *sl, uint64_t seq) {
    while (sl->keep_detail_head < sl->keep_detail_len &&
           atf__detail_record_seq(sl->layout, sl->keep_detail + sl->keep_detail_head) < seq) {
        sl->keep_detail_head += atf__load_le32(sl->keep_detail + sl->keep_detail_head);
        sl->detail_released++;
    }
    if (sl->keep_detail_head == sl->keep_detail_len) sl->keep_detail_head = sl->keep_detail_len = 0;
}

/* Brings the session's count of held bytes up to this slot's detail records. */
ATF__PRIVATE void atf__keep_count_detail(atf_session *s, atf__slot *sl) {
    uint64_t bytes = sl->keep_detail_len - sl->keep_detail_head;
    if (bytes == sl->keep_detail_counted) return;
    atf__session_lock(s);
    s->keep_held = s->keep_held + bytes - sl->keep_detail_counted; /* (modulo 2^64: exact) */
    atf__session_unlock(s);
    sl->keep_detail_counted = bytes;
}

/* Drops the pauses and merges the gaps that now lie before the held events: at the next
 * write they all go before them, so one gap of each reason is as good (held gaps and
 * pauses stay as few as the held events). */
ATF__PRIVATE void atf__keep_prune(atf__slot *sl) {
    size_t i, n = 0, left = 0;
    atf__keep_detail_drop_before(sl, sl->keep_lo);
    for (i = 0; i < sl->keep_pause_count; i++)
        if (sl->keep_pauses[i].index_seq > sl->keep_lo)
            sl->keep_pauses[left++] = sl->keep_pauses[i];
    sl->keep_pause_count = left;
    for (i = 0; i < sl->keep_gap_count && sl->keep_gaps[i].index_seq <= sl->keep_lo; i++) {
        const atf_gap *g = &sl->keep_gaps[i];
        atf_gap *into;
        size_t k;
        for (k = 0; k < n && sl->keep_gaps[k].reason != g->reason; k++) {}
        if (k == n) {
            sl->keep_gaps[n++] = *g;
            continue;
        }
        into = &sl->keep_gaps[k];
        into->index_lost += g->index_lost;
        into->detail_lost += g->detail_lost;
        if (g->first_lost_ns && (!into->first_lost_ns || g->first_lost_ns < into->first_lost_ns))
            into->first_lost_ns = g->first_lost_ns;
    }
    if (i > n)
        memmove(sl->keep_gaps + n, sl->keep_gaps + i, (sl->keep_gap_count - i) * sizeof(atf_gap));
    sl->keep_gap_count -= i - n;
}

/* Discards the slot's oldest chunk, which is full (only the newest chunk is not), and
 * hands it back for reuse. */
ATF__PRIVATE uint8_t *atf__keep_evict(atf__slot *sl) {
    uint8_t *chunk = atf__keep_chunk_at(sl, 0);
    if (!sl->discard_pending) sl->discard_first_ns = atf__load_le64(chunk);
    sl->discard_pending += ATF__KEEP_CHUNK_EVENTS;
    sl->keep_lo += ATF__KEEP_CHUNK_EVENTS;
    sl->keep_first = (sl->keep_first + 1) % sl->keep_cap;
    sl->keep_count--;
    atf__keep_note_oldest(sl);
    atf__keep_prune(sl);
    return chunk;
}

/* Discards what a retired slot holds in its one chunk (partly filled: its newest). */
ATF__PRIVATE uint8_t *atf__keep_evict_last(atf__slot *sl) {
    uint8_t *chunk = atf__keep_chunk_at(sl, 0);
    uint64_t n = sl->keep_hi - sl->keep_lo;
    if (n && !sl->discard_pending) sl->discard_first_ns = atf__load_le64(chunk);
    sl->discard_pending += n;
    sl->keep_lo = sl->keep_hi;
    sl->keep_first = 0;
    sl->keep_count = 0;
    atf__keep_note_oldest(sl);
    atf__keep_prune(sl);
    return chunk;
}

ATF__PRIVATE void atf__keep_free(atf_session *s, uint8_t *chunk) {
    ATF_FREE(chunk);
    atf__session_lock(s);
    s->keep_held -= ATF__KEEP_CHUNK_BYTES;
    atf__session_unlock(s);
}

/* The oldest chunk of another slot, when it is older than this slot's oldest, full (not
 * the slot's only one, which it is filling) and that slot's lock is free (the caller
 * holds its own: trying only, never waiting, it cannot deadlock). */
ATF__PRIVATE uint8_t *atf__keep_take_oldest(atf_session *s, atf__slot *self) {
    uint64_t i, n = atf__load_acquire_u64(&s->slot_count);
    uint64_t oldest_ns = atf__load_acquire_u64(&self->keep_oldest_ns);
    atf__slot *victim = NULL;
    uint8_t *chunk = NULL;
    for (i = 0; i < n; i++) {
        uint64_t ns = atf__load_acquire_u64(&s->slots[i]->keep_oldest_ns);
        if (ns < oldest_ns) {
            oldest_ns = ns;
            victim = s->slots[i];
        }
    }
    if (!victim || !atf__slot_trylock(victim)) return NULL;
    if (victim->keep_count > 1 && !victim->finalized) chunk = atf__keep_evict(victim);
    else if (victim->keep_count == 1 && victim->retired) chunk = atf__keep_evict_last(victim);
    atf__slot_unlock(victim);
    return chunk;
}

/* A chunk for the slot's next events, the first of which is stamped first_ns: one that
 * fell out of keep_last_ns, else a new one within the budget, else the oldest of the
 * session's (above the budget only for a slot holding none). NULL: out of memory. */
ATF__PRIVATE uint8_t *atf__keep_chunk(atf_session *s, atf__slot *sl, uint64_t first_ns) {
    uint8_t *chunk = NULL;
    int within;
    while (s->cfg.keep_last_ns && sl->keep_count) {
        uint64_t oldest = atf__keep_oldest_end(sl); /* (every chunk is full here) */
        if (first_ns <= oldest || first_ns - oldest <= s->cfg.keep_last_ns) break;
        if (chunk) atf__keep_free(s, chunk);
        chunk = atf__keep_evict(sl);
    }
    if (chunk) return chunk;
    atf__keep_count_detail(s, sl);
    atf__session_lock(s);
    within = s->keep_held + ATF__KEEP_CHUNK_BYTES <= s->cfg.keep_last_bytes;
    if (within) s->keep_held += ATF__KEEP_CHUNK_BYTES; /* taken before another can */
    atf__session_unlock(s);
    if (!within) chunk = atf__keep_take_oldest(s, sl);
    if (!chunk && !within && sl->keep_count) chunk = atf__keep_evict(sl);
    if (chunk) return chunk;
    chunk = (uint8_t *)ATF_MALLOC(ATF__KEEP_CHUNK_BYTES);
    atf__session_lock(s);
    if (chunk && !within) s->keep_held += ATF__KEEP_CHUNK_BYTES; /* a slot holding none */
    if (!chunk && within) s->keep_held -= ATF__KEEP_CHUNK_BYTES;
    atf__session_unlock(s);
    return chunk;
}

/* Puts a chunk after the slot's newest (its ring of chunk pointers grown on demand). */
ATF__PRIVATE int atf__keep_push(atf__slot *sl, uint8_t *chunk) {
    if (sl->keep_count == sl->keep_cap) {
        size_t cap = sl->keep_cap ? sl->keep_cap * 2 : 16, i;
        uint8_t **p = (uint8_t **)ATF_MALLOC(cap * sizeof *p);
        if (!p) return 0;
        for (i = 0; i < sl->keep_count; i++) p[i] = atf__keep_chunk_at(sl, i);
        ATF_FREE(sl->keep);
        sl->keep = p;
        sl->keep_cap = cap;
        sl->keep_first = 0;
    }
    sl->keep[(sl->keep_first + sl->keep_count++) % sl->keep_cap] = chunk;
    atf__keep_note_oldest(sl);
    return 1;
}

/* Discards everything the slot holds (its memory out), and the n events after it. */
ATF__PRIVATE void atf__keep_discard_all(atf_session *s, atf__slot *sl, const uint8_t *run,
                                        uint64_t n) {
    uint64_t held = sl->keep_hi - sl->keep_lo;
    size_t i;
    if (!sl->discard_pending)
        sl->discard_first_ns = atf__load_le64(held ? atf__keep_chunk_at(sl, 0) : run);
    sl->discard_pending += held + n;
    for (i = 0; i < sl->keep_count; i++) atf__keep_free(s, atf__keep_chunk_at(sl, i));
    sl->keep_count = sl->keep_first = 0;
    sl->keep_lo = sl->keep_hi = sl->keep_hi + n;
    atf__keep_note_oldest(sl);
    atf__keep_prune(sl);
}

/* Holds the n events at `run`, the ring's next ones (from keep_hi on). Out of memory,
 * they go, and what the slot held with them (the held events are always the newest). */
ATF__PRIVATE void atf__slot_keep_events(atf_session *s, atf__slot *sl, const uint8_t *run,
                                        uint64_t n) {
    while (n) {
        uint64_t room = (uint64_t)sl->keep_count * ATF__KEEP_CHUNK_EVENTS -
                        (sl->keep_hi - sl->keep_lo), take, at;
        if (!room) {
            uint8_t *chunk = atf__keep_chunk(s, sl, atf__load_le64(run));
            if (chunk && !atf__keep_push(sl, chunk)) {
                atf__keep_free(s, chunk);
                chunk = NULL;
            }
            if (!chunk) {
                atf__keep_discard_all(s, sl, run, n);
                return;
            }
            continue;
        }
        take = n < room ? n : room;
        at = sl->keep_hi - sl->keep_lo;
        memcpy(atf__keep_chunk_at(sl, (size_t)(at / ATF__KEEP_CHUNK_EVENTS)) +
                   ((at % ATF__KEEP_CHUNK_EVENTS) << 5),
               run, (size_t)(take << 5));
        sl->keep_hi += take;
        run += take << 5;
        n -= take;
    }
}

/* The held event numbered `seq` by the ring. */
ATF__PRIVATE uint8_t *atf__keep_event(const atf__slot *sl, uint64_t seq) {
    uint64_t at = seq - sl->keep_lo;
    return atf__keep_chunk_at(sl, (size_t)(at / ATF__KEEP_CHUNK_EVENTS)) +
           ((at % ATF__KEEP_CHUNK_EVENTS) << 5);
}

/* Writes the held detail records of the events written next, from ring number `start` on
 * (the first at index.atf's position `base`): each renumbered as the files number its
 * event, staged (its link entry settles once the event is written), and its event pointed
 * at it; the links of the other events go. Before the events, as the drain always writes
 * detail first, so that a link on disk resolves. */
ATF__PRIVATE void atf__slot_keep_write_detail(atf_session *s, atf__slot *sl, uint64_t start,
                                              uint64_t base) {
    size_t width, field = atf__link_field(sl->layout, &width), at;
    uint64_t seq, none = width == 8 ? ATF_NO_DETAIL : ATF_NO_DETAIL_U32;
    atf__stage st;
    if (!sl->has_detail_ring) return;
    for (seq = start; seq < sl->keep_hi; seq++)
        atf__link_encode(atf__keep_event(sl, seq) + field, width, none);
    atf__keep_detail_drop_before(sl, start);
    memset(&st, 0, sizeof st);
    for (at = sl->keep_detail_head; at < sl->keep_detail_len;) {
        uint8_t *rec = sl->keep_detail + at;
        uint32_t length = atf__load_le32(rec);
        uint64_t event = atf__detail_record_seq(sl->layout, rec), pos = base + (event - start);
        uint64_t ts = atf__load_le64(rec + 16);
        at += length;
        if (sl->layout == ATF_LAYOUT_2) atf__store_le64(rec + 8, pos);
        else atf__store_le32(rec + 8, (uint32_t)pos);
        if (atf__slot_detail_closed(sl) || !atf__slot_stage(s, sl, &st, rec, length, pos, ts, 1)) {
            sl->detail_file.lost++;
            continue;
        }
        atf__link_encode(atf__keep_event(sl, event) + field, width,
                         sl->links[sl->link_head + sl->link_len - 1].detail_seq);
    }
    atf__slot_flush(s, sl, &st);
    if (atf__slot_detail_closed(sl)) /* a bound stopped detail.atf: links past it go */
        for (seq = start; seq < sl->keep_hi; seq++) {
            uint8_t *e = atf__keep_event(sl, seq) + field;
            uint64_t d = width == 8 ? atf__load_le64(e) : atf__load_le32(e);
            if (d != none && d >= sl->detail_file.count) atf__link_encode(e, width, none);
        }
    sl->keep_detail_head = sl->keep_detail_len = 0;
}

/* A gap record taken from the ring, kept until the events around it are written. */
ATF__PRIVATE void atf__slot_keep_gap(atf__slot *sl, const atf_gap *g) {
    void *items = sl->keep_gaps;
    int grown = atf__grow(&items, &sl->keep_gap_cap, sl->keep_gap_count, sizeof *g);
    sl->keep_gaps = (atf_gap *)items;
    if (grown) sl->keep_gaps[sl->keep_gap_count++] = *g; /* else the end gap counts them */
}

/* A pause kept until the events around it are written (when memory runs out, its time
 * stays in paused_ns, unplaced). */
ATF__PRIVATE void atf__slot_keep_pause(atf__slot *sl, const atf_pause *p) {
    void *items = sl->keep_pauses;
    int grown = atf__grow(&items, &sl->keep_pause_cap, sl->keep_pause_count, sizeof *p);
    sl->keep_pauses = (atf_pause *)items;
    if (grown) sl->keep_pauses[sl->keep_pause_count++] = *p;
}

/* Writes the kept pauses that lie among the events written from ring number `start` on
 * (the first of them now at index.atf's position `base`); those before them go (their
 * time is outside the trace, in paused_ns), those after the held events wait. */
ATF__PRIVATE void atf__slot_keep_put_pauses(atf_session *s, atf__slot *sl, uint64_t start,
                                            uint64_t base) {
    size_t i, left = 0;
    for (i = 0; i < sl->keep_pause_count; i++) {
        atf_pause p = sl->keep_pauses[i];
        if (p.index_seq > sl->keep_hi) {
            sl->keep_pauses[left++] = p;
        } else if (p.index_seq > start) {
            p.index_seq = base + (p.index_seq - start);
            atf__slot_write_pause(s, sl, &p);
        }
    }
    sl->keep_pause_count = left;
}

/* Writes a kept ring gap at index.atf's end, as atf__slot_take_gap would have. */
ATF__PRIVATE void atf__slot_keep_put_gap(atf_session *s, atf__slot *sl, const atf_gap *g) {
    atf__file_writer *ix = &sl->index_file;
    atf_gap at = *g;
    at.index_seq = ix->count;
    if (ix->is_open && !ix->stopped && !sl->bound_lost) atf__slot_write_gap(s, sl, &at);
}

/* Of the held events, how many at the start lie beyond keep_last_ns before the newest. */
ATF__PRIVATE uint64_t atf__keep_too_old(const atf_session *s, const atf__slot *sl) {
    uint64_t lo = 0, hi = sl->keep_hi - sl->keep_lo, newest, cutoff;
    if (!s->cfg.keep_last_ns || !hi) return 0;
    newest = atf__load_le64(atf__keep_chunk_at(sl, (size_t)((hi - 1) / ATF__KEEP_CHUNK_EVENTS)) +
                            (((hi - 1) % ATF__KEEP_CHUNK_EVENTS) << 5));
    if (newest < s->cfg.keep_last_ns) return 0;
    cutoff = newest - s->cfg.keep_last_ns;
    while (lo < hi) { /* the first event at or after the cutoff */
        uint64_t mid = lo + (hi - lo) / 2;
        const uint8_t *e = atf__keep_chunk_at(sl, (size_t)(mid / ATF__KEEP_CHUNK_EVENTS)) +
                           ((mid % ATF__KEEP_CHUNK_EVENTS) << 5);
        if (atf__load_le64(e) < cutoff) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Writes what the slot holds (see above) and lets its memory go. */
ATF__PRIVATE void atf__slot_keep_write(atf_session *s, atf__slot *sl) {
    uint64_t old = atf__keep_too_old(s, sl), seq = sl->keep_lo + old, start, base;
    size_t g = 0, i;
    if (old) {
        if (!sl->discard_pending) sl->discard_first_ns = atf__load_le64(atf__keep_chunk_at(sl, 0));
        sl->discard_pending += old;
    }
    while (g < sl->keep_gap_count && sl->keep_gaps[g].index_seq <= seq)
        atf__slot_keep_put_gap(s, sl, &sl->keep_gaps[g++]);
    if (sl->discard_pending && sl->index_file.is_open) {
        atf_gap d;
        memset(&d, 0, sizeof d);
        d.index_seq = sl->index_file.count;
        d.index_lost = sl->discard_pending;
        d.first_lost_ns = sl->discard_first_ns;
        d.reason = ATF_GAP_DISCARDED;
        atf__slot_write_gap(s, sl, &d);
        sl->discard_pending = 0;
    }
    start = seq;
    base = sl->index_file.count;
    atf__slot_keep_write_detail(s, sl, start, base);
    while (seq < sl->keep_hi) {
        uint64_t at = seq - sl->keep_lo, in_chunk = at % ATF__KEEP_CHUNK_EVENTS;
        uint64_t end = seq + (ATF__KEEP_CHUNK_EVENTS - in_chunk);
        if (end > sl->keep_hi) end = sl->keep_hi;
        if (g < sl->keep_gap_count && sl->keep_gaps[g].index_seq < end)
            end = sl->keep_gaps[g].index_seq;
        atf__slot_append_run(s, sl, atf__keep_chunk_at(sl, (size_t)(at / ATF__KEEP_CHUNK_EVENTS)) +
                                        (in_chunk << 5), end - seq);
        seq = end;
        while (g < sl->keep_gap_count && sl->keep_gaps[g].index_seq <= seq)
            atf__slot_keep_put_gap(s, sl, &sl->keep_gaps[g++]);
    }
    atf__slot_keep_put_pauses(s, sl, start, base);
    atf__slot_settle_links(sl, 0); /* the detail staged above: its events are written */
    atf__keep_count_detail(s, sl); /* none held now */
    for (i = 0; i < sl->keep_count; i++) atf__keep_free(s, atf__keep_chunk_at(sl, i));
    sl->keep_count = sl->keep_first = sl->keep_gap_count = 0;
    sl->keep_lo = sl->keep_hi;
    atf__keep_note_oldest(sl);
}

/* Frees the flight recorder's memory of a slot; returns the bytes of chunks it held. */
ATF__PRIVATE uint64_t atf__slot_keep_drop(atf__slot *sl) {
    uint64_t bytes = (uint64_t)sl->keep_count * ATF__KEEP_CHUNK_BYTES + sl->keep_detail_counted;
    size_t i;
    for (i = 0; i < sl->keep_count; i++) ATF_FREE(atf__keep_chunk_at(sl, i));
    ATF_FREE(sl->keep);
    ATF_FREE(sl->keep_gaps);
    ATF_FREE(sl->keep_pauses);
    ATF_FREE(sl->keep_detail);
    sl->keep_detail = NULL;
    sl->keep_detail_head = sl->keep_detail_len = sl->keep_detail_cap = 0;
    sl->keep = NULL;
    sl->keep_gaps = NULL;
    sl->keep_pauses = NULL;
    sl->keep_count = sl->keep_cap = sl->keep_gap_cap = sl->keep_gap_count = 0;
    sl->keep_pause_cap = sl->keep_pause_count = 0;
    sl->keep_detail_counted = 0;
    return bytes;
}

/* At a slot's finalize: what it held is written already, or given up. */
ATF__PRIVATE void atf__slot_keep_release(atf_session *s, atf__slot *sl) {
    uint64_t bytes = atf__slot_keep_drop(sl);
    atf__store_release_u64(&sl->keep_oldest_ns, UINT64_MAX);
    if (!bytes) return;
    atf__session_lock(s);
    s->keep_held -= bytes;
    atf__session_unlock(s);
}

/* ---- 10.11 a slot's pass ------------------------------------------------------ >>slotpass */
/* One slot's part of a drain pass: ATF_STAMP_TICKS stamps converted, detail before
 * index events (written, or held by the flight recorder), its files made at
 * the first visit, and the slot finalized once its producer closed (retired, in the
 * flight recorder, until a trigger or the close writes what it holds). */

ATF__PRIVATE void atf__slot_bracket(atf_session *s, atf__slot *sl, uint64_t newest);
ATF__PRIVATE void atf__slot_convert_stamps(atf__slot *sl, const uint8_t *src, uint8_t *dst,
                                           size_t n);

/* ATF_STAMP_TICKS, no detail ring: the n events at `run` converted to the trace clock into
 * the slot's piece buffer, which the writer then reads from the cache. The ring is only
 * read: its lines stay clean, so neither writing them back nor the producer's next store
 * to them has to fetch this core's copy. In place when the buffer cannot be had. */
ATF__PRIVATE const uint8_t *atf__slot_convert_piece(atf_session *s, atf__slot *sl,
                                                    uint8_t *run, size_t n) {
    uint8_t *to = run;
    if (!sl->piece) sl->piece = (uint8_t *)ATF_MALLOC(ATF__CONVERT_PIECE_EVENTS * ATF_INDEX_EVENT_SIZE);
    if (sl->piece) to = sl->piece;
    atf__slot_bracket(s, sl, atf__load_le64(run + (n - 1) * ATF_INDEX_EVENT_SIZE));
    atf__slot_convert_stamps(sl, run, to, n);
    return to;
}

/* Whether the calling thread is the slot's producer (a pump from the producing thread).
 * Walks the thread's entries without reordering them, unlike atf__tls_find. */
ATF__PRIVATE int atf__slot_is_mine(const atf__slot *sl) {
    const atf__tls_entry *e;
    for (e = atf__tls_list; e; e = e->next)
        if (e->writer == &sl->writer) return 1;
    return 0;
}

/* Appends the events in [tail, end) from the ring, or holds them for the flight
 * recorder, a piece at a time: stamped in ticks, each piece is converted to the trace
 * clock right before it is written (atf__slot_convert_piece), unless a detail ring had
 * them converted in the ring before its records. A packed index.atf takes the pieces
 * held, in one write at the end (more when its stage fills): measured on a 2-core VM, a
 * system call costs about 1 us, a write of 4 KiB 3-4 us and one of 64 KiB 12. */
ATF__PRIVATE void atf__slot_write_events(atf_session *s, atf__slot *sl, uint64_t end) {
    atf_ring *r = &sl->index_c;
    int own = sl->self_draining || atf__slot_is_mine(sl);
    if (sl->index_file.pack && !s->keep_active && atf__bound_far(s))
        atf__file_writer_hold(&sl->index_file);
    while (r->pos < end) {
        uint64_t first = r->pos & r->mask;
        uint64_t n = end - r->pos < r->mask + 1 - first ? end - r->pos : r->mask + 1 - first;
        uint8_t *in_ring = r->data + (first << 5);
        const uint8_t *run = in_ring;
        if (s->convert_ticks && !sl->has_detail_ring) {
            if (n > ATF__CONVERT_PIECE_EVENTS) n = ATF__CONVERT_PIECE_EVENTS;
            run = atf__slot_convert_piece(s, sl, in_ring, (size_t)n);
        }
        if (s->keep_active) atf__slot_keep_events(s, sl, run, n);
        else atf__slot_append_run(s, sl, run, n);
        /* read: the producer stores there next on another core (a producer draining its
         * own ring keeps them, in its own cache, as does a machine of one processor) */
        if (!own && s->cpus > 1) atf__mem_evict(in_ring, (size_t)(n << 5));
        r->pos += n;
    }
    atf__file_writer_release(&sl->index_file, s->cfg.fsync_every_bytes, &sl->error);
}

/* Writes the index events in [tail, head) and the gap records among them, each record
 * after the events before it, after giving pending links their detail numbers. Small
 * batches wait unless `all` (gap records at the tail go at once: the producer may be
 * waiting for their queue slots). */
ATF__PRIVATE uint64_t atf__slot_drain_index(atf_session *s, atf__slot *sl, uint64_t head, int all) {
    atf_ring *r = &sl->index_c;
    uint64_t start = r->pos, batch = (r->mask + 1) / 4 < ATF__INDEX_BATCH ? (r->mask + 1) / 4
                                                                          : ATF__INDEX_BATCH;
    atf_gap g;
    atf__slot_settle_links(sl, head);
    if (!all && head - start < batch) {
        while (atf__slot_peek_gap(s, sl, &g) && g.index_seq == r->pos) atf__slot_take_gap(s, sl, &g);
        return 0;
    }
    if (atf__slot_detail_closed(sl) && sl->has_detail_ring) {
        /* detail.atf stopped: links to records that never reached it go */
        size_t width, field = atf__link_field(r->shared->layout, &width);
        uint64_t seq, limit = sl->detail_file.count, none = width == 8 ? ATF_NO_DETAIL : ATF_NO_DETAIL_U32;
        for (seq = start; seq < head; seq++) {
            uint8_t *rec = r->data + ((seq & r->mask) << 5) + field;
            uint64_t d = width == 8 ? atf__load_le64(rec) : atf__load_le32(rec);
            if (d != none && d >= limit) atf__link_encode(rec, width, none);
        }
    }
    while (atf__slot_peek_gap(s, sl, &g) && g.index_seq <= head) {
        atf__slot_write_events(s, sl, g.index_seq);
        atf__slot_take_gap(s, sl, &g);
    }
    atf__slot_write_events(s, sl, head);
    atf__store_release_u64(&r->shared->tail, r->pos);
    atf__slot_settle_links(sl, head);
    return head - start;
}

/* Makes thread_<slot>/ and its index.atf at the drain's first visit of the slot, so that
 * attaching a thread does no file I/O. When that fails, the thread's events are counted
 * as lost (events_lost_io) and the slot's error says why. */
ATF__PRIVATE void atf__slot_make_files(atf_session *s, atf__slot *sl) {
    char dir[1100];
    if (sl->files_made) return;
    sl->files_made = 1;
    snprintf(dir, sizeof dir, "%s/thread_%u", s->dir, sl->slot);
    if (atf__mkdir(dir) < 0)
        atf__error_set_errno(&sl->error, ATF_E_IO, dir, "mkdir", atf__last_os_error());
    else
        atf__slot_open_file(s, sl, &sl->index_file, "index.atf", 0);
}

/* Copies the producer's counters out of the ring header (the ring memory goes at
 * finalize, the figures stay). */
ATF__PRIVATE void atf__slot_copy_counters(atf__slot *sl) {
    atf_ring_header *h = sl->index_c.shared;
    sl->ring_dropped = atf__load_acquire_u64(&h->dropped);
    sl->ring_pushed = atf__load_acquire_u64(&h->head);
    sl->ring_waits = atf__load_acquire_u64(&h->waits);
    sl->ring_timeouts = atf__load_acquire_u64(&h->timeouts);
    sl->ring_gap_detail_lost = atf__load_acquire_u64(&h->gap_detail_lost);
    sl->ring_gap_reason = atf__load_acquire_u32(&h->gap_reason);
    sl->ring_gap_first = atf__load_acquire_u64(&h->gap_first_ns);
    if (sl->has_detail_ring)
        sl->ring_detail_dropped = atf__load_acquire_u64(&sl->detail_c.shared->dropped);
}

ATF__PRIVATE void atf__slot_publish(atf_session *s, atf__slot *sl, int dirty);

ATF__PRIVATE void atf__slot_finalize(atf_session *s, atf__slot *sl) {
    int sync = s->cfg.fsync_mode == ATF_FSYNC_CLOSE;
    if (sl->finalized) return;
    atf__slot_make_files(s, sl);
    if (s->keep_active) atf__slot_keep_write(s, sl);
    atf__slot_keep_release(s, sl);
    if (!sl->retired) atf__slot_copy_counters(sl); /* (a retired slot's ring is gone) */
    atf__slot_settle_links(sl, sl->index_c.pos);
    if (sl->link_len) atf__slot_cut_detail(sl, &sl->links[sl->link_head]); /* never indexed */
    if (sl->detail_file.is_open && sl->detail_file.count == 0 && !sl->detail_file.dirty) {
        /* every record was cut (their events never reached index.atf): no detail.atf,
         * as when there never was one */
        atf__fd_close(sl->detail_file.fd);
        sl->detail_file.fd = ATF__FD_NONE;
        sl->detail_file.is_open = 0;
        atf__file_remove(sl->detail_file.path);
    }
    atf__file_writer_finalize(&sl->detail_file, 0, sync, &sl->error);
    atf__file_writer_finalize(&sl->index_file, sl->detail_file.count > 0, sync, &sl->error);
    atf__slot_end_gap(s, sl);
    atf__slot_close_side(sl, &sl->gaps, sync);
    atf__slot_close_side(sl, &sl->pauses, sync);
    if (sync) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/thread_%u", s->dir, sl->slot);
        atf__dir_sync(dir);
    }
    ATF_FREE(sl->links);
    sl->links = NULL;
    sl->link_len = sl->link_cap = sl->link_head = 0;
    ATF_FREE(sl->stage); /* a finished thread keeps no buffer until the session closes */
    sl->stage = NULL;
    sl->stage_cap = 0;
    ATF_FREE(sl->piece);
    sl->piece = NULL;
    ATF_FREE(sl->windows);
    sl->windows = NULL;
    sl->window_count = 0;
    sl->window_gen = 0;
    if (sl->index_raw) { /* the ring memory is ours: nobody produces into it any more */
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        sl->index_raw = sl->detail_raw = NULL;
    }
    sl->finalized = 1;
    atf__slot_publish(s, sl, 1);
}

/* Caller holds s->lock: a pair read now into the session's map, whose generation tells the
 * slots' copies (atf__slot_sync) that it changed. */
ATF__PRIVATE void atf__session_add_pair(atf_session *s) {
    atf__tick_map_add(&s->ticks, atf__tick_pair_read(&s->ticks.width));
    s->ticks_gen++;
}

/* The slot's copies of the session's tick map and trigger windows, brought up to date
 * (the slot's lock held). */
ATF__PRIVATE void atf__slot_sync(atf_session *s, atf__slot *sl) {
    atf__session_lock(s);
    if (s->convert_ticks && sl->ticks_gen != s->ticks_gen) {
        sl->ticks = s->ticks;
        sl->ticks_gen = s->ticks_gen;
    }
    if (sl->has_detail_ring && sl->window_gen != s->window_gen) {
        if (!sl->windows)
            sl->windows = (atf__window *)ATF_MALLOC((ATF__MAX_WINDOWS + 1) * sizeof(atf__window));
        if (!sl->windows) { /* triggers cannot be honoured: say so */
            atf__error_set(&s->error, ATF_E_NOMEM, s->dir, 0, "trigger windows");
        } else {
            memcpy(sl->windows, s->windows, s->window_count * sizeof *s->windows);
            sl->window_count = s->window_count;
            sl->window_gen = s->window_gen;
        }
    }
    atf__session_unlock(s);
}

/* A pair read now into the session's map, and the slot's copy brought up to date. */
ATF__PRIVATE void atf__slot_calibrate(atf_session *s, atf__slot *sl) {
    atf__session_lock(s);
    atf__session_add_pair(s);
    atf__session_unlock(s);
    atf__slot_sync(s, sl);
}

/* The segment of a tick map between pairs i and i + 1, in locals: the conversion loop
 * below stores through a byte pointer, which the compiler must assume may change the
 * map, so reading the map in the loop would reload it for every event. */
typedef struct atf__tick_segment {
    uint64_t lo, hi;             /* its ticks: [lo, hi) */
    uint64_t ns, hi_ns;          /* the trace time at lo, and at hi (never passed) */
    atf__tick_rate slope;
} atf__tick_segment;

/* The segment of pair i, or one that holds no tick when i has no right neighbour. */
ATF__PRIVATE atf__tick_segment atf__tick_segment_at(const atf__tick_map *m, size_t i) {
    atf__tick_segment g;
    memset(&g, 0, sizeof g);
    if (i + 1 < m->count) {
        g.lo = m->p[i].ticks;
        g.hi = m->p[i + 1].ticks;
        g.ns = m->p[i].ns;
        g.hi_ns = m->p[i + 1].ns;
        g.slope = m->slope[i];
    }
    return g;
}

/* The events [k, n) at src converted into dst while their stamps stay in segment g and
 * the conversion takes its narrow case (atf__tick_scale with no product that can
 * overflow, atf__tick_forward with no sum that can: checked once a run, not once an
 * event); returns where it stopped. The segment's values stay in registers, and each
 * event of the run costs a compare, two multiplies and two clamps (measured: two thirds
 * of the time of the general step's loop). */
ATF__PRIVATE size_t atf__convert_in_segment(const atf__tick_segment *seg, const uint8_t *src,
                                            uint8_t *dst, size_t k, size_t n, uint64_t *last) {
    const uint64_t lo = seg->lo, span = seg->hi - seg->lo, ns0 = seg->ns, hi_ns = seg->hi_ns;
    const uint64_t whole = seg->slope.whole, frac = seg->slope.frac;
    uint64_t prev = *last;
    int apart = src != dst;
    /* d < span < 2^32 and whole < 2^31: d * whole + (d * frac >> 32) < span * (whole + 1) */
    if (span >> 32 || whole >> 31 || ns0 > UINT64_MAX - span * (whole + 1)) return k;
    for (; k < n; k++) {
        const uint8_t *from = src + k * ATF_INDEX_EVENT_SIZE;
        uint8_t *to = dst + k * ATF_INDEX_EVENT_SIZE;
        uint64_t d = atf__load_le64(from) - lo, ns;
        if (d >= span) break; /* below lo too: the difference wraps */
        ns = ns0 + d * whole + ((d * frac) >> 32);
        ns = ns > hi_ns ? hi_ns : ns;
        ns = ns < prev ? prev : ns;
        prev = ns;
        if (apart) memcpy(to + 8, from + 8, ATF_INDEX_EVENT_SIZE - 8);
        atf__store_le64(to, ns);
    }
    *last = prev;
    return k;
}

/* The n events at src, their stamps converted to the trace clock (never below the
 * thread's previous time), into dst: src itself, or memory apart from it. Stamps mostly
 * stay in the segment of the previous event: runs of them go through
 * atf__convert_in_segment, any other event through atf__tick_map_ns. */
ATF__PRIVATE void atf__slot_convert_stamps(atf__slot *sl, const uint8_t *src, uint8_t *dst,
                                           size_t n) {
    const atf__tick_map *m = &sl->ticks;
    size_t i = sl->tick_hint, k = 0;
    atf__tick_segment g = atf__tick_segment_at(m, i);
    uint64_t last = sl->tick_last;
    while ((k = atf__convert_in_segment(&g, src, dst, k, n, &last)) < n) {
        const uint8_t *from = src + k * ATF_INDEX_EVENT_SIZE;
        uint8_t *to = dst + k * ATF_INDEX_EVENT_SIZE;
        uint64_t t = atf__load_le64(from), ns;
        if (g.lo <= t && t < g.hi) { /* a wide segment */
            ns = atf__tick_forward(g.ns, t - g.lo, g.slope);
            if (ns > g.hi_ns) ns = g.hi_ns;
        } else {
            ns = atf__tick_map_ns(m, t, 0, &i);
            g = atf__tick_segment_at(m, i);
        }
        if (ns < last) ns = last;
        last = ns;
        if (src != dst) memcpy(to + 8, from + 8, ATF_INDEX_EVENT_SIZE - 8);
        atf__store_le64(to, ns);
        k++;
    }
    sl->tick_hint = i;
    sl->tick_last = last;
}

/* Before stamps up to `newest` (ticks) are converted: an event younger than the newest
 * pair (stamped while this pass ran) gets a pair read now, after its publication, that
 * brackets it. */
ATF__PRIVATE void atf__slot_bracket(atf_session *s, atf__slot *sl, uint64_t newest) {
    if (newest >= sl->ticks.p[sl->ticks.count - 1].ticks) atf__slot_calibrate(s, sl);
}

/* ATF_STAMP_TICKS with a detail ring: rewrites the stamps of the index events in
 * [tick_index, head) to the trace clock, in the ring (the drain owns [tail, head)), never
 * below the thread's previous time; then gives each detail record whose index event is
 * published the time of that event, so that both always agree. Runs before anything
 * reads the stamps. (Without a detail ring, atf__slot_convert_piece converts each piece
 * as it is written.) */
ATF__PRIVATE void atf__slot_convert(atf_session *s, atf__slot *sl, uint64_t head) {
    atf_ring *r = &sl->index_c, *d = &sl->detail_c;
    uint64_t seq = sl->tick_index > r->pos ? sl->tick_index : r->pos, at, dhead, cap;
    uint32_t layout = r->shared->layout;
    if (seq < head) {
        atf__slot_bracket(s, sl, atf__load_le64(r->data + (((head - 1) & r->mask) << 5)));
        while (seq < head) { /* in place, a run up to the ring's end at a time */
            uint64_t first = seq & r->mask;
            uint64_t n = head - seq < r->mask + 1 - first ? head - seq : r->mask + 1 - first;
            uint8_t *run = r->data + (first << 5);
            atf__slot_convert_stamps(sl, run, run, (size_t)n);
            seq += n;
        }
        sl->tick_index = head;
    }
    if (!sl->has_detail_ring || sl->detail_stopped) return;
    at = sl->tick_detail > d->pos ? sl->tick_detail : d->pos;
    dhead = atf__load_acquire_u64(&d->shared->head);
    cap = d->mask + 1;
    if (dhead - at > cap || (dhead & 7u)) return; /* damaged: the detail drain says so */
    while (at < dhead) {
        uint8_t *e = d->data + (at & d->mask), *rec = e + ATF__DETAIL_ENTRY_HEADER;
        uint32_t entry = atf__load_le32(e), flags = atf__load_le32(e + 4), length;
        uint64_t index_seq, ts;
        if (entry < ATF__DETAIL_ENTRY_HEADER || (entry & 7u) || entry > dhead - at ||
            (at & d->mask) + entry > cap)
            break;
        if (!(flags & ATF__DETAIL_ENTRY_PAD)) {
            length = atf__load_le32(rec);
            if (length < ATF_DETAIL_EVENT_HEADER_SIZE || length > entry - ATF__DETAIL_ENTRY_HEADER)
                break;
            index_seq = atf__detail_record_seq(layout, rec);
            if (index_seq >= head) break; /* its index event is not published yet */
            if (index_seq >= r->pos) { /* still in the index ring, converted */
                ts = atf__load_le64(r->data + ((index_seq & r->mask) << 5));
            } else { /* cannot happen with a sane producer: convert on its own */
                size_t hint = 0;
                ts = atf__tick_map_ns(&sl->ticks, atf__load_le64(rec + 16), 0, &hint);
            }
            atf__store_le64(rec + 16, ts);
        }
        at += entry;
    }
    sl->tick_detail = at;
}

/* A flight-recorder thread that ended, its ring drained into what it holds: the ring's
 * figures copied and its memory let go, what it holds kept until a trigger or the close
 * writes it (meanwhile newer events of other threads may discard it, as the live ones'),
 * so that a thread's end writes nothing and the session keeps its most recent events,
 * whichever threads made them. */
ATF__PRIVATE void atf__slot_retire(atf_session *s, atf__slot *sl) {
    atf__slot_copy_counters(sl);
    if (sl->index_raw) {
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        sl->index_raw = sl->detail_raw = NULL;
    }
    ATF_FREE(sl->piece);
    sl->piece = NULL;
    sl->retired = 1;
    atf__keep_note_oldest(sl); /* its last chunk may be taken now */
    atf__slot_publish(s, sl, 1);
}

/* A retired slot's pass: it writes what it holds when a trigger asked. */
ATF__PRIVATE uint64_t atf__slot_drain_retired(atf_session *s, atf__slot *sl) {
    uint32_t gen = atf__load_acquire_u32(&s->persist_gen);
    if (gen == sl->keep_gen) return 0;
    sl->keep_gen = gen;
    atf__slot_keep_write(s, sl);
    atf__slot_publish(s, sl, 1);
    return 0;
}

/* Faults the first lap of a slot's own index ring in ahead of its producer, so that its
 * stores do not wait for the kernel inside the program's functions: the time goes to the
 * drain, or to the attach before the thread's first event. The attach faults in the first
 * ATF__POPULATE_FIRST slots; once the producer has used half of them, each pass keeps
 * ATF__POPULATE_AHEAD slots past the head (topped up when half of that is left), so a
 * thread that records little keeps little memory. When the system cannot (or fails
 * once), the pages fault in at the producer's first store to them. */
ATF__PRIVATE void atf__slot_populate(atf__slot *sl, uint64_t head) {
    atf_ring *r = &sl->index_c;
    uint64_t cap = r->mask + 1, used = head < sl->populated ? head : sl->populated, upto;
    uint64_t slack = sl->populated <= ATF__POPULATE_FIRST ? ATF__POPULATE_FIRST / 2
                                                          : ATF__POPULATE_AHEAD / 2;
    if (sl->populated >= cap || sl->populated - used > slack) return;
    upto = head >= cap || cap - head < ATF__POPULATE_AHEAD ? cap : head + ATF__POPULATE_AHEAD;
    if (atf__mem_populate(r->data + (sl->populated << 5), (size_t)((upto - sl->populated) << 5)) != 0)
        upto = cap; /* no more tries */
    sl->populated = upto;
}

/* The attach's part of atf__slot_populate: the first slots of a ring of its own. */
ATF__PRIVATE void atf__slot_populate_first(atf__slot *sl) {
    atf_ring *r = &sl->index_c;
    uint64_t cap = r->mask + 1, upto = cap < ATF__POPULATE_FIRST ? cap : ATF__POPULATE_FIRST;
    sl->populated = atf__mem_populate(r->data, (size_t)(upto << 5)) == 0 ? upto : cap;
}

/* One slot: detail first (up to the index head read now), then the index events. */
ATF__PRIVATE uint64_t atf__slot_drain(atf_session *s, atf__slot *sl, uint64_t horizon, int all,
                                      int final) {
    int closed;
    uint64_t head, moved = 0;
    if (sl->retired) return atf__slot_drain_retired(s, sl);
    closed = atf__load_acquire_u64(&sl->index_c.shared->closed) != 0;
    head = atf__load_acquire_u64(&sl->index_c.shared->head);
    if (!closed) atf__slot_populate(sl, head);
    atf__slot_sync(s, sl); /* the stamps of a gap at finalize need the map too */
    if (head - sl->index_c.pos > sl->index_c.mask + 1) { /* impossible from a sane producer */
        atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, 0,
                              "index ring head beyond capacity", sl->index_c.mask + 1,
                              head - sl->index_c.pos);
        atf__slot_finalize(s, sl);
        return 0;
    }
    final = final || closed; /* closed was read first: head is the last one */
    atf__slot_make_files(s, sl);
    /* detail records take their index events' converted stamps: those first */
    if (s->convert_ticks && sl->has_detail_ring) atf__slot_convert(s, sl, head);
    if (sl->has_detail_ring) moved += atf__slot_drain_detail(s, sl, head, horizon, final);
    if (s->keep_active) { /* a trigger asks for what is held: the ring's events too */
        uint32_t gen = atf__load_acquire_u32(&s->persist_gen);
        int write = gen != sl->keep_gen && !sl->self_draining;
        moved += atf__slot_drain_index(s, sl, head, all || final || write);
        if (write) {
            atf__slot_keep_write(s, sl);
            sl->keep_gen = gen;
        }
    } else {
        moved += atf__slot_drain_index(s, sl, head, all || final);
    }
    atf__slot_copy_counters(sl);
    if (closed && s->keep_active) atf__slot_retire(s, sl);
    else if (closed) atf__slot_finalize(s, sl);
    else atf__slot_publish(s, sl, 0);
    return moved;
}

/* ---- 10.12 drain passes ------------------------------------------------------ >>drainpass */
/* The drain lock and the slot locks, a pass over every slot (the drain thread's, a
 * pump's, the close's), a producer draining its own slot when its ring is full, and
 * the figures a slot hands over for the manifest. */

/* The drain lock, marking the thread as draining: a hook reached inside a pass neither
 * attaches nor drains its own ring again (that would take the lock twice). */
ATF__PRIVATE void atf__drain_lock(atf_session *s) {
    atf__tls_no_attach++;
    atf__tls_draining++;
    atf__mutex_lock(&s->drain_lock);
}
ATF__PRIVATE void atf__drain_unlock(atf_session *s) {
    atf__mutex_unlock(&s->drain_lock);
    atf__tls_draining--;
    atf__tls_no_attach--;
}

/* A slot's lock, marking the thread as draining like the drain lock. */
ATF__PRIVATE void atf__slot_lock(atf__slot *sl) {
    atf__tls_no_attach++;
    atf__tls_draining++;
    atf__mutex_lock(&sl->lock);
}
ATF__PRIVATE int atf__slot_trylock(atf__slot *sl) {
    if (!atf__mutex_trylock(&sl->lock)) return 0;
    atf__tls_no_attach++;
    atf__tls_draining++;
    return 1;
}
ATF__PRIVATE void atf__slot_unlock(atf__slot *sl) {
    atf__mutex_unlock(&sl->lock);
    atf__tls_draining--;
    atf__tls_no_attach--;
}

/* Hands a slot's first error to the session, once. */
ATF__PRIVATE void atf__slot_report(atf_session *s, atf__slot *sl) {
    if (sl->error.code != ATF_OK && !sl->error_reported) {
        atf__session_fail(s, &sl->error);
        sl->error_reported = 1;
    }
}

/* Before a pass: the release horizon of windowed detail, and a fresh tick pair. */
ATF__PRIVATE uint64_t atf__drain_prepare(atf_session *s) {
    uint64_t horizon;
    atf__session_lock(s);
    /* a trigger registered after this point names a time t >= now - slack, so it cannot
     * reach records older than now - slack - pre_roll: those can be released */
    horizon = atf_now_ns();
    horizon = horizon > s->cfg.pre_roll_ns && horizon - s->cfg.pre_roll_ns > ATF__TRIGGER_SLACK_NS
                  ? horizon - s->cfg.pre_roll_ns - ATF__TRIGGER_SLACK_NS : 0;
    if (s->convert_ticks) atf__session_add_pair(s);
    atf__session_unlock(s);
    return horizon;
}

/* One pass over every slot (the drain lock held by the caller), each under its own lock.
 * `wait` 0 (the drain thread): a slot whose lock is taken (its producer is draining it
 * itself) is passed over; else every slot is drained. Returns how many records moved. */
ATF__PRIVATE uint64_t atf__session_drain_slots(atf_session *s, int all, int final, int wait) {
    uint64_t horizon = atf__drain_prepare(s), moved = 0, count, i;
    count = atf__load_acquire_u64(&s->slot_count);
    for (i = 0; i < count; i++) {
        atf__slot *sl = s->slots[i];
        if (wait) atf__slot_lock(sl);
        else if (!atf__slot_trylock(sl)) continue;
        if (!sl->finalized) moved += atf__slot_drain(s, sl, horizon, all, final);
        atf__slot_report(s, sl);
        atf__slot_unlock(sl);
    }
    return moved;
}

ATF__PRIVATE uint64_t atf__session_drain(atf_session *s, int all, int final, int wait) {
    uint64_t moved;
    atf__drain_lock(s);
    moved = atf__session_drain_slots(s, all, final, wait);
    atf__drain_unlock(s);
    return moved;
}

/* ATF_OVERFLOW_BLOCK, the writer's ring full: the producer drains its own slot, under the
 * slot's lock alone, as a drain pass would, so its progress never waits for the drain
 * thread to get a core, nor for another thread writing its own files. The pause is
 * recorded (pauses.atf). 0 when this thread is draining already (a hook reached inside a
 * pass). */
ATF__PRIVATE int atf__session_self_drain(atf_session *s, atf_producer *w) {
    atf__slot *sl = s->slots[w->slot];
    uint64_t horizon, moved = 0;
    atf_pause p;
    if (atf__tls_draining) return 0;
    p.start_ns = atf_now_ns(); /* waiting for the lock is part of the pause */
    atf__slot_lock(sl);
    horizon = atf__drain_prepare(s);
    sl->self_draining = 1;
    if (!sl->finalized) moved = atf__slot_drain(s, sl, horizon, 1, 0);
    sl->self_draining = 0;
    p.end_ns = atf_now_ns();
    /* past a bound's cut the pause lies outside the trace: neither counted nor written */
    if (!sl->bound_lost) sl->paused_ns += p.end_ns - p.start_ns;
    if (!sl->finalized && !sl->bound_lost) { /* the pushed event was stamped before it */
        p.index_seq = w->index.pos + 1;
        p.reason = ATF_PAUSE_SELF_DRAIN;
        if (s->keep_active) atf__slot_keep_pause(sl, &p);
        else atf__slot_write_pause(s, sl, &p);
        atf__slot_publish(s, sl, 0);
    }
    atf__slot_report(s, sl);
    atf__slot_unlock(sl);
    atf__session_lock(s);
    s->self_drained += moved;
    atf__session_unlock(s);
    return 1;
}

ATF__PRIVATE void atf__slot_stats(const atf__slot *sl, atf_thread_stats *out) {
    memset(out, 0, sizeof *out);
    out->slot = sl->slot;
    out->thread_id = sl->thread_id;
    out->events_written = sl->index_file.count;
    out->events_dropped = sl->ring_dropped;
    out->detail_written = sl->detail_file.count;
    out->detail_dropped = sl->detail_released + sl->detail_file.lost + sl->ring_detail_dropped;
    out->events_lost_io = sl->index_file.lost;
    out->events_stopped = sl->bound_lost;
    out->events_skipped = sl->skipped;
    out->events_discarded = sl->discarded;
    out->events_pushed = sl->ring_pushed;
    out->events_queued = sl->ring_pushed - sl->index_c.pos;
    out->gaps = sl->gaps.written;
    out->waits = sl->ring_waits;
    out->timeouts = sl->ring_timeouts;
    out->finalized = sl->finalized;
    out->paused_ns = sl->paused_ns;
}

/* What the manifest says of the slot, from its drain state (the slot's lock held), handed
 * over under the session lock; `dirty`: the manifest must be rewritten for it. */
ATF__PRIVATE void atf__slot_publish(atf_session *s, atf__slot *sl, int dirty) {
    atf__manifest_thread m;
    atf__slot_stats(sl, &m.st);
    m.name = NULL;
    m.has_time = sl->index_file.count != 0;
    m.time_start = sl->index_file.time_start;
    m.time_end = sl->index_file.time_end;
    atf__session_lock(s);
    sl->shown = m;
    if (dirty) s->manifest_dirty = 1;
    atf__session_unlock(s);
}

/* ---- 10.13 manifest.json ------------------------------------------------------ >>manifest */

/* A growable text buffer; a failed allocation sticks and the text is then discarded. */
typedef struct atf__text { char *p; size_t len, cap; int failed; } atf__text;

ATF__PRIVATE void atf__text_add(atf__text *t, const char *s, size_t n) {
    if (t->failed) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        char *p;
        while (cap < t->len + n + 1) cap *= 2;
        p = (char *)ATF_REALLOC(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

ATF__PRIVATE void atf__text_str(atf__text *t, const char *s) { atf__text_add(t, s, strlen(s)); }

/* v in `base` (10 or 16, lowercase), digits written by hand: a manifest with thousands of
 * symbols is made of numbers, and snprintf is the slow part of writing it. */
ATF__PRIVATE void atf__text_digits(atf__text *t, uint64_t v, unsigned base, size_t min_digits) {
    static const char digits[] = "0123456789abcdef";
    char buf[24];
    size_t at = sizeof buf;
    do { /* constant divisors: the compiler multiplies and shifts instead of dividing */
        buf[--at] = digits[base == 16 ? v & 15 : v % 10];
        v = base == 16 ? v >> 4 : v / 10;
    } while (v || sizeof buf - at < min_digits);
    atf__text_add(t, buf + at, sizeof buf - at);
}

ATF__PRIVATE void atf__text_u64(atf__text *t, uint64_t v) { atf__text_digits(t, v, 10, 1); }

/* A JSON number for a double: shortest round-trip digits, "." whatever the locale, and
 * null for NaN and infinities (JSON has no spelling for them). */
ATF__PRIVATE void atf__text_double(atf__text *t, double v) {
    char buf[40], *c;
    if (v != v || v - v != 0) {
        atf__text_str(t, "null");
        return;
    }
    snprintf(buf, sizeof buf, "%.17g", v);
    for (c = buf; *c; c++)
        if (*c == ',') *c = '.';
    atf__text_str(t, buf);
}

/* A JSON string with everything escaped that needs it: quote, backslash, control
 * characters (\b \f \n \r \t or \u00XX) and DEL; well-formed UTF-8 passes through as is,
 * and a byte that is not part of it becomes U+FFFD, so the file is always valid JSON. */
ATF__PRIVATE void atf__text_json(atf__text *t, const char *str) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    atf__text_add(t, "\"", 1);
    while (*s) {
        unsigned char c = *s;
        size_t n = 0;
        char esc[6] = {'\\', 'u', '0', '0', 0, 0};
        while (s[n] >= 0x20 && s[n] < 0x7F && s[n] != '"' && s[n] != '\\') n++;
        if (n) { /* a run of plain ASCII at once: names and paths are mostly that */
            atf__text_add(t, (const char *)s, n);
            s += n;
            continue;
        }
        n = atf_utf8_sequence(s, 4); /* NUL-terminated: stops at the NUL */
        if (c == '"' || c == '\\') {
            esc[1] = (char)c;
            atf__text_add(t, esc, 2);
        } else if (c == '\b') {
            atf__text_add(t, "\\b", 2);
        } else if (c == '\f') {
            atf__text_add(t, "\\f", 2);
        } else if (c == '\n') {
            atf__text_add(t, "\\n", 2);
        } else if (c == '\r') {
            atf__text_add(t, "\\r", 2);
        } else if (c == '\t') {
            atf__text_add(t, "\\t", 2);
        } else if (c < 0x20 || c == 0x7F) {
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            atf__text_add(t, esc, 6);
        } else if (n == 0) {
            atf__text_add(t, "\\ufffd", 6);
            n = 1;
        } else {
            atf__text_add(t, (const char *)s, n);
        }
        s += n ? n : 1;
    }
    atf__text_add(t, "\"", 1);
}

/* "key": unsigned number, with a leading comma. */
ATF__PRIVATE void atf__text_key_u64(atf__text *t, const char *key, uint64_t v) {
    atf__text_str(t, ",\"");
    atf__text_str(t, key);
    atf__text_str(t, "\":");
    atf__text_u64(t, v);
}

ATF__PRIVATE void atf__text_key_str(atf__text *t, const char *key, const char *v) {
    atf__text_str(t, ",\"");
    atf__text_str(t, key);
    atf__text_str(t, "\":");
    atf__text_json(t, v);
}

/* One thread of the manifest: its figures, name, and the time range of its index file. */
/* What the manifest says of the process that recorded: the live session's own, or, when
 * recovery rewrites a manifest, the recorded one's. */
typedef struct atf__manifest_facts {
    const char *state;           /* "recording", "closed", "recovered" */
    uint64_t pid;
    uint32_t clock_type;
    const char *arch, *os;
    const char *error_line;      /* the first error, as one line; NULL when none */
    uint32_t error_errno;
} atf__manifest_facts;

/* "threads", and the session's time range and drop total over them. */
ATF__PRIVATE void atf__manifest_threads(atf__text *t, const atf__manifest_thread *th, size_t n,
                                        uint64_t *t0, uint64_t *t1, uint64_t *dropped_total) {
    size_t i;
    int have_time = 0;
    atf__text_str(t, ",\"threads\":[");
    for (i = 0; i < n; i++) {
        const atf_thread_stats *st = &th[i].st;
        if (th[i].has_time) {
            if (!have_time || th[i].time_start < *t0) *t0 = th[i].time_start;
            if (!have_time || th[i].time_end > *t1) *t1 = th[i].time_end;
            have_time = 1;
        }
        *dropped_total += st->events_dropped;
        atf__text_str(t, i ? ",{\"id\":" : "{\"id\":");
        atf__text_u64(t, st->slot);
        atf__text_str(t, st->detail_written ? ",\"has_detail\":true" : ",\"has_detail\":false");
        atf__text_key_u64(t, "os_thread_id", st->thread_id);
        atf__text_key_str(t, "name", th[i].name);
        atf__text_key_u64(t, "events_written", st->events_written);
        atf__text_key_u64(t, "events_dropped", st->events_dropped);
        atf__text_key_u64(t, "detail_written", st->detail_written);
        atf__text_key_u64(t, "detail_dropped", st->detail_dropped);
        atf__text_key_u64(t, "events_lost_io", st->events_lost_io);
        if (st->events_stopped) atf__text_key_u64(t, "events_stopped", st->events_stopped);
        if (st->events_skipped) atf__text_key_u64(t, "events_skipped", st->events_skipped);
        if (st->events_discarded)
            atf__text_key_u64(t, "events_discarded", st->events_discarded);
        atf__text_key_u64(t, "gaps", st->gaps);
        atf__text_key_u64(t, "waits", st->waits);
        atf__text_key_u64(t, "timeouts", st->timeouts);
        if (st->paused_ns) atf__text_key_u64(t, "paused_ns", st->paused_ns);
        atf__text_str(t, st->finalized ? ",\"finalized\":true}" : ",\"finalized\":false}");
    }
    atf__text_str(t, "]");
}

ATF__PRIVATE void atf__text_i64(atf__text *t, int64_t v) {
    if (v < 0) atf__text_add(t, "-", 1);
    /* the magnitude in unsigned arithmetic: -INT64_MIN has no int64 */
    atf__text_u64(t, v < 0 ? (uint64_t)-(v + 1) + 1 : (uint64_t)v);
}

/* "0x" and at least min_digits hex digits, quoted. */
ATF__PRIVATE void atf__text_hex(atf__text *t, uint64_t v, size_t min_digits) {
    atf__text_add(t, "\"0x", 3);
    atf__text_digits(t, v, 16, min_digits);
    atf__text_add(t, "\"", 1);
}

/* "key": "0x<hex>", with a leading comma (addresses and offsets, as the original tracer
 * wrote base_address). */
ATF__PRIVATE void atf__text_key_hex(atf__text *t, const char *key, uint64_t v) {
    atf__text_str(t, ",\"");
    atf__text_str(t, key);
    atf__text_str(t, "\":");
    atf__text_hex(t, v, 1);
}

ATF__PRIVATE void atf__manifest_modules(const atf_session *s, atf__text *t) {
    size_t i;
    atf__text_str(t, ",\"modules\":[");
    for (i = 0; i < s->module_count; i++) {
        const atf__module *m = &s->modules[i];
        atf__text_str(t, i ? ",{\"module_id\":" : "{\"module_id\":");
        atf__text_u64(t, m->module_id);
        atf__text_key_str(t, "path", m->path);
        atf__text_key_hex(t, "base_address", m->base);
        atf__text_key_u64(t, "size", m->size);
        if (m->build_id[0]) atf__text_key_str(t, "build_id", m->build_id);
        atf__text_str(t, "}");
    }
    atf__text_str(t, "]");
}

/* Symbols as the original readers expect them (function_id "0x%016x", module_id,
 * symbol_index, name), plus the location when known; "name" only when there is one. */
ATF__PRIVATE void atf__manifest_symbols(const atf_session *s, atf__text *t) {
    size_t i;
    atf__text_str(t, ",\"symbols\":[");
    for (i = 0; i < s->symbol_count; i++) {
        const atf__symbol *y = &s->symbols[i];
        atf__text_str(t, i ? ",{\"function_id\":" : "{\"function_id\":");
        atf__text_hex(t, y->function_id, 16);
        atf__text_key_u64(t, "module_id", y->has_offset ? y->module_id : y->function_id >> 32);
        atf__text_key_u64(t, "symbol_index", y->function_id & 0xFFFFFFFFu);
        if (y->has_offset) atf__text_key_hex(t, "offset", y->offset);
        if (y->name) atf__text_key_str(t, "name", y->name);
        atf__text_str(t, "}");
    }
    atf__text_str(t, "]");
}

/* Exact anchors as integers with their timescale (and "rate", the same number, which
 * older readers take); others as the doubles they were given. */
ATF__PRIVATE void atf__manifest_anchors(const atf_session *s, atf__text *t) {
    size_t i;
    atf__text_str(t, ",\"timing_anchors\":[");
    for (i = 0; i < s->anchor_count; i++) {
        const atf__anchor *a = &s->anchors[i];
        atf__text_str(t, i ? ",{\"name\":" : "{\"name\":");
        atf__text_json(t, a->name);
        atf__text_key_u64(t, "host_ns", a->host_ns);
        atf__text_str(t, ",\"value\":");
        if (a->timescale > 0) {
            atf__text_i64(t, a->value);
            atf__text_key_u64(t, "timescale", (uint64_t)a->timescale);
            atf__text_key_u64(t, "rate", (uint64_t)a->timescale);
        } else {
            atf__text_double(t, a->value_f);
            atf__text_str(t, ",\"rate\":");
            atf__text_double(t, a->rate);
        }
        atf__text_str(t, "}");
    }
    atf__text_str(t, "]");
}

/* The bounds given, the disk reserve kept, and which bound stopped recording, when. */
ATF__PRIVATE void atf__manifest_bounds(const atf_session *s, atf__text *t) {
    const atf__bound *b = &s->bound;
    if (s->cfg.max_bytes) atf__text_key_u64(t, "max_bytes", s->cfg.max_bytes);
    if (s->cfg.keep_last_bytes) atf__text_key_u64(t, "keep_last_bytes", s->cfg.keep_last_bytes);
    if (s->cfg.keep_last_ns) atf__text_key_u64(t, "keep_last_ns", s->cfg.keep_last_ns);
    if (s->cfg.max_duration_ns) atf__text_key_u64(t, "max_duration_ns", s->cfg.max_duration_ns);
    if (s->cfg.min_duration_ns) atf__text_key_u64(t, "min_duration_ns", s->cfg.min_duration_ns);
    if (b->reserve) atf__text_key_u64(t, "disk_reserve_bytes", b->reserve);
    if (!b->reason) return;
    atf__text_key_str(t, "stopped", atf_stop_reason_str(b->reason));
    atf__text_key_u64(t, "stopped_at_ns", b->stopped_ns);
}

ATF__PRIVATE void atf__manifest_metadata(const atf_session *s, atf__text *t) {
    atf__manifest_modules(s, t);
    atf__manifest_symbols(s, t);
    atf__manifest_anchors(s, t);
}

/* The manifest's text from the session's metadata (s: config, cmdline, modules, symbols,
 * anchors, attach failures), the facts and the threads: the one encoder of manifest.json,
 * for the live session and for recovery alike. 0 when memory ran out. */
ATF__PRIVATE int atf__manifest_encode(const atf_session *s, const atf__manifest_facts *f,
                                      const atf__manifest_thread *th, size_t n, atf__text *t) {
    uint64_t t0 = 0, t1 = 0, dropped = 0;
    atf__text_str(t, "{\"format_version\":2");
    atf__text_key_u64(t, "layout", s->cfg.layout);
    atf__text_key_u64(t, "clock_type", f->clock_type);
    atf__text_key_str(t, "clock", atf_clock_str(f->clock_type));
    atf__text_key_u64(t, "pid", f->pid);
    atf__text_key_str(t, "arch", f->arch);
    atf__text_key_str(t, "os", f->os);
    if (s->cmdline) atf__text_key_str(t, "cmdline", s->cmdline);
    atf__text_key_str(t, "state", f->state);
    atf__text_key_str(t, "overflow", s->cfg.overflow == ATF_OVERFLOW_DROP ? "drop" : "block");
    atf__manifest_bounds(s, t);
    atf__manifest_threads(t, th, n, &t0, &t1, &dropped);
    atf__text_key_u64(t, "time_start_ns", t0);
    atf__text_key_u64(t, "time_end_ns", t1);
    atf__text_key_u64(t, "events_dropped", dropped);
    atf__text_key_u64(t, "attach_failures", s->attach_failures);
    atf__manifest_metadata(s, t);
    if (f->error_line) {
        atf__text_key_str(t, "error", f->error_line);
        atf__text_key_u64(t, "error_errno", f->error_errno);
    }
    atf__text_str(t, "}\n");
    return !t->failed;
}

/* The live session's manifest text. Caller holds s->lock (or is alone). 0 when memory
 * ran out. A close after an error (a file that failed: a full disk) leaves the state
 * "recording", as a crash would: its files may not be whole, and recovery completes them
 * and the manifest. */
ATF__PRIVATE int atf__manifest_text(atf_session *s, int closed, atf__text *t) {
    char buf[1024]; /* the whole error line */
    uint64_t i, count = atf__load_acquire_u64(&s->slot_count);
    atf__manifest_thread *th = NULL;
    atf__manifest_facts f;
    int ok;
    if (count && !(th = (atf__manifest_thread *)ATF_MALLOC((size_t)count * sizeof *th))) return 0;
    for (i = 0; i < count; i++) {
        th[i] = s->slots[i]->shown; /* its thread may be draining it meanwhile */
        th[i].name = s->slots[i]->name;
    }
    memset(&f, 0, sizeof f);
    f.state = closed && s->error.code == ATF_OK ? "closed" : "recording";
    f.pid = atf__os_pid();
    f.clock_type = atf_clock_type();
    f.arch = atf_arch_str(ATF__ARCH_CODE);
    f.os = atf_os_str(ATF__OS_CODE);
    if (s->error.code != ATF_OK) {
        f.error_line = atf_error_format(&s->error, buf, sizeof buf);
        f.error_errno = (uint32_t)s->error.sys_errno;
    }
    ok = atf__manifest_encode(s, &f, th, (size_t)count, t);
    ATF_FREE(th);
    return ok;
}

/* Room for a full disk: while recording, manifest.json is its text followed by as many
 * spaces again (at least this many bytes; JSON allows space after the value). When the
 * file system fills up, the data files take what is left, a new manifest.json.tmp cannot
 * be written, and the manifest would stay what it was when the disk filled: often the
 * first one, before any module, function or thread name was known, so the tools could
 * name nothing. The next text then goes over the old file in place, into the blocks it
 * holds already, when it fits there. */
#define ATF__MANIFEST_ROOM 16384u

/* Writes the text at offset 0 of fd, then spaces and a newline up to `size` bytes (size
 * >= t->len + 1, or size == t->len for the text alone): 0, or -1 with the OS error pending. */
ATF__PRIVATE int atf__manifest_put(atf__fd fd, const atf__text *t, uint64_t size) {
    char pad[512];
    uint64_t at = t->len;
    if (atf__fd_pwrite(fd, t->p, t->len, 0, NULL) != 0) return -1;
    memset(pad, ' ', sizeof pad);
    while (at < size) {
        size_t n = size - at < sizeof pad ? (size_t)(size - at) : sizeof pad;
        if (at + n == size) pad[n - 1] = '\n';
        if (atf__fd_pwrite(fd, pad, n, at, NULL) != 0) return -1;
        at += n;
    }
    return 0;
}

/* Writes the text to manifest.json.tmp and renames it over manifest.json, so that readers
 * (and a crash) only ever see a whole manifest. With `room` (optional: the size of
 * manifest.json as last written, updated here), the text is followed by the room
 * ATF__MANIFEST_ROOM says when `pad`, and when the new file cannot be written (a full
 * disk) a text that fits in the old file is written over it in place instead, the rest
 * of it spaces: no new block is needed, at the price of a manifest that a crash in the
 * middle of that write leaves unreadable (the readers then scan the directory). File I/O
 * only: the caller holds the drain lock or is alone, which keeps two writers apart; no
 * session lock is needed. */
ATF__PRIVATE atf_result atf__manifest_store(const char *dir, const atf__text *t, int sync,
                                            int pad, uint64_t *room, atf_error *err) {
    char path[1100], tmp[1100];
    atf__fd fd;
    atf_result rc = ATF_OK;
    atf_error e;
    uint64_t size = t->len;
    memset(&e, 0, sizeof e);
    if (pad && room) size += t->len > ATF__MANIFEST_ROOM ? t->len : ATF__MANIFEST_ROOM;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    snprintf(tmp, sizeof tmp, "%s/manifest.json.tmp", dir);
    fd = atf__fd_create(tmp);
    if (fd == ATF__FD_NONE || atf__manifest_put(fd, t, size) != 0 ||
        (sync && atf__fd_sync(fd) != 0))
        rc = atf__error_set_errno(&e, ATF_E_IO, tmp, "write manifest", atf__last_os_error());
    if (fd != ATF__FD_NONE) atf__fd_close(fd);
    if (rc == ATF_OK && atf__rename_replace(tmp, path) != 0)
        rc = atf__error_set_errno(&e, ATF_E_IO, path, "rename manifest", atf__last_os_error());
    if (rc != ATF_OK && fd != ATF__FD_NONE) atf__file_remove(tmp); /* its blocks freed */
    if (rc == ATF_OK) {
        if (room) *room = size;
    } else if (room && *room > t->len && (fd = atf__fd_open_rw(path)) != ATF__FD_NONE) {
        if (atf__manifest_put(fd, t, *room) == 0 && (!sync || atf__fd_sync(fd) == 0)) rc = ATF_OK;
        atf__fd_close(fd);
    }
    if (rc == ATF_OK && sync) atf__dir_sync(dir);
    if (rc != ATF_OK) atf__error_adopt(err, &e);
    return rc;
}

/* Text and file at once, for a caller that is alone (open, close). */
ATF__PRIVATE atf_result atf__manifest_write(atf_session *s, int closed) {
    atf__text t = {NULL, 0, 0, 0};
    atf_result rc;
    if (!atf__manifest_text(s, closed, &t)) {
        ATF_FREE(t.p);
        return atf__error_set(&s->error, ATF_E_NOMEM, s->dir, 0, "manifest text");
    }
    rc = atf__manifest_store(s->dir, &t, closed && s->cfg.fsync_mode == ATF_FSYNC_CLOSE, !closed,
                             &s->manifest_room, &s->error);
    if (rc == ATF_OK) s->manifest_dirty = 0;
    ATF_FREE(t.p);
    return rc;
}

/* While recording (drain lock held): the text under the session lock, the file I/O
 * outside it, so that a thread attaching meanwhile never waits for the disk. Writes
 * when the manifest is dirty or `force`; returns whether it wrote. */
ATF__PRIVATE int atf__manifest_refresh(atf_session *s, int force) {
    atf__text t = {NULL, 0, 0, 0};
    atf_error e;
    int write, ok = 1;
    atf__session_lock(s);
    write = force || s->manifest_dirty;
    if (write) {
        ok = atf__manifest_text(s, 0, &t);
        if (!ok) atf__error_set(&s->error, ATF_E_NOMEM, s->dir, 0, "manifest text");
        s->manifest_dirty = !ok;
    }
    atf__session_unlock(s);
    memset(&e, 0, sizeof e);
    if (write && ok && atf__manifest_store(s->dir, &t, 0, 1, &s->manifest_room, &e) != ATF_OK) {
        atf__session_lock(s);
        atf__error_adopt(&s->error, &e);
        s->manifest_dirty = 1;
        atf__session_unlock(s);
    }
    ATF_FREE(t.p);
    return write;
}

/* ---- 10.14 session API: open and close -------------------------------------- >>sessionapi */
/* Opening a session: the config checked, its directories made, the start anchor and a
 * first manifest written, the drain thread started. Closing drains every ring and
 * finalizes every file; a forked child gives the session up, leaving its files to the
 * parent. */

#if !defined(ATF_NO_THREADS)
ATF__PRIVATE void atf__drain_main(void *arg) {
    atf_session *s = (atf_session *)arg;
    uint32_t sleep_us = 50, cycle = 0;
    uint64_t last_manifest = atf_now_ns(), moved_since = 0;
    atf__tls_no_attach = 1; /* the drain is never a traced thread */
    while (!atf__load_acquire_u64(&s->stop)) {
        uint64_t moved = atf__session_drain(s, (++cycle & 15u) == 0, 0, 0), now;
        /* lazy polling: drain again at once while there is a lot to move, sleep a little
         * while busy, back off to the configured interval when idle */
        if (moved >= ATF__DRAIN_BUSY) sleep_us = 0;
        else if (moved) sleep_us = 50;
        else sleep_us = sleep_us < 25 ? 50 : sleep_us * 2;
        if (sleep_us > s->cfg.drain_interval_us) sleep_us = s->cfg.drain_interval_us;
        moved_since += moved;
        now = atf_now_ns();
        /* the manifest follows new threads and finished ones within 100 ms, and the
         * per-thread counts (written, dropped) within a second */
        if (now - last_manifest > 100000000u) {
            atf__drain_lock(s);
            atf__session_lock(s);
            moved_since += s->self_drained; /* what the producers drained themselves */
            s->self_drained = 0;
            atf__session_unlock(s);
            if (atf__manifest_refresh(s, moved_since && now - last_manifest > 1000000000u)) {
                moved_since = 0;
                last_manifest = now;
            }
            atf__drain_unlock(s);
        }
        if (sleep_us) atf__sleep_us(sleep_us);
    }
}
#endif

ATF__PRIVATE void atf__session_free(atf_session *s) {
    size_t i;
    for (i = 0; i < s->slot_count; i++) {
        atf__slot *sl = s->slots[i];
        ATF_FREE(sl->links);
        atf__file_writer_pack_free(&sl->index_file);
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        ATF_FREE(sl->stage);
        ATF_FREE(sl->piece);
        ATF_FREE(sl->windows);
        atf__slot_keep_drop(sl);
        atf__mutex_destroy(&sl->lock);
        ATF_FREE(sl);
    }
    for (i = 0; i < s->module_count; i++) ATF_FREE(s->modules[i].path);
    for (i = 0; i < s->symbol_count; i++) ATF_FREE(s->symbols[i].name);
    ATF_FREE(s->modules);
    ATF_FREE(s->symbols);
    ATF_FREE(s->symbol_hash);
    ATF_FREE(s->cmdline);
    ATF_FREE(s->anchors);
    ATF_FREE(s->windows);
    ATF_FREE(s->slots);
    atf__mutex_destroy(&s->lock);
    atf__mutex_destroy(&s->drain_lock);
    ATF_FREE(s);
}

ATF__PRIVATE void atf__session_defaults(atf_session_config *c) {
    if (!c->layout) c->layout = ATF_LAYOUT_1;
    if (!c->index_ring_events) c->index_ring_events = 65536;
    if (!c->detail_ring_bytes) c->detail_ring_bytes = 1u << 20;
    if (!c->drain_interval_us) c->drain_interval_us = 1000;
    if (!c->max_threads) c->max_threads = 1024;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_dir_make(const char *root, char *name,
                                                         size_t cap, atf_error *error) {
    char base[64], dir[1100];
    atf_error e;
    unsigned k;
    memset(&e, 0, sizeof e);
    if (!root || !name || cap < 32) {
        atf__error_set(&e, ATF_E_ARG, root ? root : "", 0, "no root, or a name buffer under 32 bytes");
    } else if (atf__mkdir_all(root) != 0) {
        atf__error_set_errno(&e, ATF_E_IO, root, "mkdir root", atf__last_os_error());
    } else {
        atf__local_time_name(base, sizeof base);
        for (k = 0; k < 1000; k++) {
            int made;
            if (k) snprintf(name, cap, "%s_%u", base, k);
            else snprintf(name, cap, "%s", base);
            if (snprintf(dir, sizeof dir, "%s/%s", root, name) >= (int)sizeof dir) {
                atf__error_set(&e, ATF_E_ARG, root, 0, "session path too long");
                break;
            }
            if ((made = atf__mkdir(dir)) == 0) break; /* new */
            if (made < 0) {
                atf__error_set_errno(&e, ATF_E_IO, dir, "mkdir session", atf__last_os_error());
                break;
            }
        }
        if (k == 1000) atf__error_set(&e, ATF_E_IO, root, 0, "no free session directory name");
    }
    if (error) *error = e;
    return e.code;
}

/* Creates <root>/<name>/pid_<pid>; no file is ever overwritten. When that exists already:
 * with a default name (another session of this process in the same second), tries
 * <name>_1, <name>_2, ...; with a given name, which processes join, stays in it and tries
 * pid_<pid>_1, pid_<pid>_2, ... (the same pid recorded before an exec). */
ATF__PRIVATE atf_result atf__session_make_dirs(atf_session *s, const char *root, const char *name) {
    char base[256];
    unsigned k;
    if (name) atf__copy_str(base, sizeof base, name);
    else atf__local_time_name(base, sizeof base);
    if (atf__mkdir_all(root) != 0)
        return atf__error_set_errno(&s->error, ATF_E_IO, root, "mkdir root", atf__last_os_error());
    for (k = 0; k < 1000; k++) {
        int made, n = k && !name ? snprintf(s->dir, sizeof s->dir, "%s/%s_%u", root, base, k)
                                 : snprintf(s->dir, sizeof s->dir, "%s/%s", root, base);
        if (n < 0 || (size_t)n + 36 >= sizeof s->dir)
            return atf__error_set(&s->error, ATF_E_ARG, root, 0, "session path too long");
        if (atf__mkdir(s->dir) < 0)
            return atf__error_set_errno(&s->error, ATF_E_IO, s->dir, "mkdir session", atf__last_os_error());
        if (k && name) snprintf(s->dir + n, sizeof s->dir - (size_t)n, "/pid_%u_%u", atf__os_pid(), k);
        else snprintf(s->dir + n, sizeof s->dir - (size_t)n, "/pid_%u", atf__os_pid());
        made = atf__mkdir(s->dir);
        if (made == 0) return ATF_OK;
        if (made < 0)
            return atf__error_set_errno(&s->error, ATF_E_IO, s->dir, "mkdir pid", atf__last_os_error());
    }
    return atf__error_set(&s->error, ATF_E_IO, s->dir, 0, "no free session directory name");
}

/* The most thread slots a session has: the slot table's size stays far from overflow on
 * 32-bit hosts. */
#define ATF__MAX_THREADS (1u << 20)

/* The first config value atf_session_open refuses (ATF_E_ARG), or ATF_OK. */
ATF__PRIVATE atf_result atf__session_config_check(const char *root, const atf_session_config *c,
                                                  atf_error *e) {
    const char *bad = NULL;
    if (!root) bad = "no root directory";
    else if (!c) return ATF_OK;
    else if (c->layout > ATF_LAYOUT_PACKED) bad = "config: layout is not 0, 1, 2 or 3 (packed)";
    else if (c->layout == ATF_LAYOUT_PACKED && c->detail_mode == ATF_DETAIL_WINDOWED)
        bad = "config: windowed detail patches links into index.atf: layout 1 or 2, not packed";
    else if (c->detail_mode > ATF_DETAIL_WINDOWED) bad = "config: unknown detail_mode";
    else if (c->drain_mode > ATF_DRAIN_MANUAL) bad = "config: unknown drain_mode";
    else if (c->fsync_mode > ATF_FSYNC_CLOSE) bad = "config: unknown fsync_mode";
    else if (c->stamp_clock > ATF_STAMP_TICKS) bad = "config: unknown stamp_clock";
    else if (c->overflow > ATF_OVERFLOW_DROP) bad = "config: unknown overflow";
    else if (c->index_ring_events > ATF__RING_MAX_CAPACITY) bad = "config: index_ring_events too large";
    else if (c->index_ring_events_crowded > ATF__RING_MAX_CAPACITY)
        bad = "config: index_ring_events_crowded too large";
    else if (c->detail_ring_bytes > ATF__RING_MAX_CAPACITY) bad = "config: detail_ring_bytes too large";
    else if (c->max_threads > ATF__MAX_THREADS) bad = "config: max_threads above 1048576";
    return bad ? atf__error_set(e, ATF_E_ARG, root ? root : "", 0, bad) : ATF_OK;
}

/* The session's own start anchor: the wall clock (ns since 1970) read between two reads
 * of the trace clock, paired with their midpoint, so the pairing is off by at most half
 * the time between them. */
ATF__PRIVATE atf_result atf__session_wall_anchor(atf_session *s) {
    uint64_t before = atf_now_ns(), wall = atf_wall_ns(), after = atf_now_ns();
    /* ns since 1970 stay below 2^63 until the year 2262 */
    return atf_session_add_anchor_exact(s, "wall_clock_ns", before + (after - before) / 2,
                                        (int64_t)wall, 1000000000);
}

/* Copies a failed open's error out (when asked) and returns its code. */
ATF__PRIVATE atf_result atf__session_open_failed(atf_error *error_out, const atf_error *e,
                                                 atf_result rc) {
    if (error_out) {
        *error_out = *e;
        if (error_out->code == ATF_OK) error_out->code = rc;
    }
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_open(atf_session **out, const char *root,
                                                     const atf_session_config *cfg) {
    return atf_session_open_ex(out, root, cfg, NULL);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_open_ex(atf_session **out, const char *root,
                                                        const atf_session_config *cfg,
                                                        atf_error *error_out) {
    atf_session *s;
    atf_result rc;
    atf_error e;
    memset(&e, 0, sizeof e);
    if (!out) return atf__session_open_failed(error_out, &e, ATF_E_ARG);
    *out = NULL;
    rc = atf__session_config_check(root, cfg, &e);
    if (rc != ATF_OK) return atf__session_open_failed(error_out, &e, rc);
#if defined(ATF_NO_THREADS) /* refused before any directory is made */
    if (!cfg || cfg->drain_mode == ATF_DRAIN_THREAD) {
        atf__error_set(&e, ATF_E_UNSUPPORTED, root, 0, "drain thread in a build without threads");
        return atf__session_open_failed(error_out, &e, ATF_E_UNSUPPORTED);
    }
#endif
    s = (atf_session *)ATF_MALLOC(sizeof *s);
    if (!s) return atf__session_open_failed(error_out, &e, ATF_E_NOMEM);
    memset(s, 0, sizeof *s);
    if (cfg) s->cfg = *cfg;
    s->cfg.session_name = NULL; /* used only while opening */
    atf__session_defaults(&s->cfg);
    s->id = atf__next_session_id();
    s->convert_ticks = s->cfg.stamp_clock == ATF_STAMP_TICKS && !ATF_TICKS_ARE_NS;
    s->cpus = atf__cpu_count();
    atf__session_add_pair(s);
    atf__mutex_init(&s->lock);
    atf__mutex_init(&s->drain_lock);
    s->slots = (atf__slot **)ATF_MALLOC(s->cfg.max_threads * sizeof *s->slots);
    if (!s->slots) {
        atf__session_free(s);
        return atf__session_open_failed(error_out, &e, ATF_E_NOMEM);
    }
    rc = atf__session_make_dirs(s, root, cfg ? cfg->session_name : NULL);
    if (rc == ATF_OK) atf__bound_open(s);
    if (rc == ATF_OK) atf__keep_open(s);
    if (rc == ATF_OK)
        rc = atf__session_wall_anchor(s);
    if (rc == ATF_OK) rc = atf__manifest_write(s, 0);
    if (rc == ATF_OK) {
        atf__global_lock();
        s->live_next = atf__live_sessions;
        atf__live_sessions = s;
        atf__global_unlock();
    }
#if !defined(ATF_NO_THREADS)
    if (rc == ATF_OK && s->cfg.drain_mode == ATF_DRAIN_THREAD) {
        int err;
        s->drain_ctx.fn = atf__drain_main;
        s->drain_ctx.arg = s;
        err = atf__thread_start(&s->drain_thread, &s->drain_ctx);
        if (err != 0) {
            atf__error_set_errno(&e, ATF_E_IO, s->dir, "start the drain thread", err);
            atf_session_close(s);
            return atf__session_open_failed(error_out, &e, ATF_E_IO);
        }
        s->drain_running = 1;
    }
#endif
    if (rc != ATF_OK) {
        atf__session_open_failed(error_out, &s->error, rc);
        atf__session_free(s);
        return rc;
    }
    *out = s;
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_close_ex(atf_session *s, atf_error *error_out) {
    atf_session **link;
    uint64_t i, count;
    atf_result rc;
    if (!s) return ATF_E_ARG;
    /* thread-exit hooks leave this session alone from now on */
    atf__global_lock();
    for (link = &atf__live_sessions; *link; link = &(*link)->live_next) {
        if (*link == s) {
            *link = s->live_next;
            break;
        }
    }
    atf__global_unlock();
    atf__store_release_u64(&s->stop, 1);
#if !defined(ATF_NO_THREADS)
    if (s->drain_running) atf__thread_join(s->drain_thread);
#endif
    count = atf__load_acquire_u64(&s->slot_count);
    for (i = 0; i < count; i++)
        if (!s->slots[i]->finalized && !s->slots[i]->retired)
            atf__producer_close_rings(&s->slots[i]->writer);
    atf__session_drain(s, 1, 1, 1);
    for (i = 0; i < count; i++) {
        atf__slot *sl = s->slots[i];
        atf__slot_lock(sl);
        atf__slot_finalize(s, sl);
        atf__slot_unlock(sl);
        atf__error_adopt(&s->error, &sl->error);
    }
    atf__manifest_write(s, 1);
    if (error_out) *error_out = s->error;
    rc = s->error.code;
    atf__session_free(s);
    atf__tls_prune(); /* the calling thread's cache entry for this session goes too */
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_close(atf_session *s) {
    return atf_session_close_ex(s, NULL);
}

/* The child's copies of the descriptors of the slot's files (the parent's stay open). */
ATF__PRIVATE void atf__slot_forget_files(atf__slot *sl) {
    atf__file_writer_pack_free(&sl->index_file);
    if (sl->index_file.is_open) atf__fd_close(sl->index_file.fd);
    if (sl->detail_file.is_open) atf__fd_close(sl->detail_file.fd);
    if (sl->gaps.state == 1) atf__fd_close(sl->gaps.fd);
    if (sl->pauses.state == 1) atf__fd_close(sl->pauses.fd);
}

ATFDEF ATF_NO_INSTRUMENT void atf_session_abandon_after_fork(atf_session *s) {
    atf_session **link;
    uint64_t i;
    if (!s) return;
    /* the registry lock may have been held by a thread that the child does not have */
#if !defined(ATF_NO_THREADS) && !defined(ATF__OS_WINDOWS)
    pthread_mutex_init(&atf__global_mutex, NULL);
#endif
    atf__global_lock();
    for (link = &atf__live_sessions; *link; link = &(*link)->live_next) {
        if (*link == s) {
            *link = s->live_next;
            break;
        }
    }
    atf__global_unlock();
    atf__tls_prune(); /* the calling thread's writer of it */
    /* held locks: a drain pass or an attach was under way in another thread, and what
     * they guard may be half changed; untouched, it is only memory */
    if (!atf__mutex_trylock(&s->drain_lock)) return;
    for (i = 0; i < s->slot_count && atf__mutex_trylock(&s->slots[i]->lock); i++) {}
    if (i < s->slot_count || !atf__mutex_trylock(&s->lock)) {
        while (i > 0) atf__mutex_unlock(&s->slots[--i]->lock);
        atf__mutex_unlock(&s->drain_lock);
        return;
    }
    for (i = 0; i < s->slot_count; i++) {
        atf__slot_forget_files(s->slots[i]);
        atf__mutex_unlock(&s->slots[i]->lock);
    }
    atf__mutex_unlock(&s->lock);
    atf__mutex_unlock(&s->drain_lock);
    atf__session_free(s);
}

/* ---- 10.15 session API: threads ------------------------------------------------- >>attach */
/* A slot for each thread attached (its rings the session's, or the caller's), the
 * calling thread's producer found, the manual pump, triggers and the tick conversion
 * that names their time. */

/* The layout of the records in the session's rings: a packed session's are layout 1. */
ATF__PRIVATE uint32_t atf__ring_layout(const atf_session_config *c) {
    return c->layout == ATF_LAYOUT_PACKED ? ATF_LAYOUT_1 : c->layout;
}

/* A session writer's producer closed: its thread no longer counts as producing (once,
 * however many of the closing paths reach it). */
ATF__PRIVATE void atf__session_writer_closed(atf_producer *w) {
    atf_session *s = w->session;
    if (atf__atomic_take_u32(&s->slots[w->slot]->producing)) atf__atomic_add_u64(&s->producing, -1);
}

/* The index ring slots of a thread attaching now: index_ring_events, or
 * index_ring_events_crowded once as many threads (with rings of their own) as there are
 * processors produce. */
ATF__PRIVATE uint64_t atf__slot_ring_events(atf_session *s) {
    const atf_session_config *c = &s->cfg;
    if (c->index_ring_events_crowded && atf__load_acquire_u64(&s->producing) >= s->cpus)
        return c->index_ring_events_crowded;
    return c->index_ring_events;
}

/* Creates a slot: rings (owned, or the caller's) and consumer views, made before taking
 * s->lock (allocating a large ring can take long: other threads attach meanwhile), then
 * numbered and published under it, last, so the drain never sees a half-made slot. The
 * drain makes its directory and files. Caller does not hold s->lock. */

ATF__PRIVATE atf_result atf__session_add_slot(atf_session *s, void *index_mem, size_t index_size,
                                              void *detail_mem, size_t detail_size,
                                              const char *name, uint32_t thread_id,
                                              atf__slot **out) {
    atf__slot *sl;
    atf_result rc;
    uint64_t n;
    if (atf__load_acquire_u64(&s->slot_count) >= s->cfg.max_threads) return ATF_E_FULL;
    sl = (atf__slot *)ATF_MALLOC(sizeof *sl);
    if (!sl) return ATF_E_NOMEM;
    memset(sl, 0, sizeof *sl);
    sl->keep_oldest_ns = UINT64_MAX; /* holds none */
    sl->thread_id = thread_id;
    atf__copy_utf8(sl->name, sizeof sl->name, name);
    sl->name_given = name && *name;
    if (!index_mem) {
        uint64_t events = atf__slot_ring_events(s);
        index_size = atf_ring_memory_size(ATF_RING_INDEX, events);
        index_mem = atf__alloc_aligned(index_size, &sl->index_raw);
        if (index_mem) atf__mem_hugepages(index_mem, index_size); /* before any is faulted in */
        if (index_mem && s->cfg.detail_mode != ATF_DETAIL_OFF) {
            detail_size = atf_ring_memory_size(ATF_RING_DETAIL, s->cfg.detail_ring_bytes);
            detail_mem = atf__alloc_aligned(detail_size, &sl->detail_raw);
        }
        if (!index_mem || (s->cfg.detail_mode != ATF_DETAIL_OFF && !detail_mem)) {
            ATF_FREE(sl->index_raw);
            ATF_FREE(sl->detail_raw);
            ATF_FREE(sl);
            return ATF_E_NOMEM;
        }
        atf_ring_init(index_mem, index_size, ATF_RING_INDEX, events, atf__ring_layout(&s->cfg),
                      thread_id);
        if (detail_mem) {
            atf_ring_init(detail_mem, detail_size, ATF_RING_DETAIL, s->cfg.detail_ring_bytes,
                          atf__ring_layout(&s->cfg), thread_id);
            /* its first 4 MiB (all of the default 1 MiB) */
            atf__mem_populate(detail_mem, detail_size < ATF__POPULATE_FIRST * ATF_INDEX_EVENT_SIZE
                                              ? detail_size : ATF__POPULATE_FIRST * ATF_INDEX_EVENT_SIZE);
        }
    }
    rc = atf_producer_init(&sl->writer, index_mem, index_size, detail_mem, detail_size,
                         sl->index_raw ? s->cfg.detail_mode : (uint32_t)ATF_DETAIL_OFF);
    if (rc == ATF_OK) rc = atf_ring_attach(&sl->index_c, index_mem, index_size, 0);
    if (rc == ATF_OK && detail_mem) rc = atf_ring_attach(&sl->detail_c, detail_mem, detail_size, 0);
    if (rc == ATF_OK && !sl->index_raw &&
        (sl->index_c.pos != 0 || (detail_mem && sl->detail_c.pos != 0)))
        rc = ATF_E_STATE; /* positions would not match file positions */
    if (rc == ATF_OK) {
        if (!sl->index_raw) sl->thread_id = sl->index_c.shared->thread_id;
        sl->layout = sl->index_c.shared->layout;
        sl->has_detail_ring = detail_mem != NULL;
        sl->writer.session = s;
        sl->writer.overflow = s->cfg.overflow;
        /* our own ring's first pages, before its producer has it; caller memory is left
         * as the caller made it */
        if (sl->index_raw) atf__slot_populate_first(sl);
        else sl->populated = UINT64_MAX;
    }
    atf__session_lock(s);
    n = s->slot_count;
    if (rc == ATF_OK && n >= s->cfg.max_threads) rc = ATF_E_FULL;
    if (rc == ATF_OK) {
        sl->slot = sl->writer.slot = (uint32_t)n;
        atf__mutex_init(&sl->lock);
        atf__slot_stats(sl, &sl->shown.st);
        s->slots[n] = sl;
        if (sl->index_raw) { /* a ring of its own: attached rings close in their own memory */
            sl->producing = 1;
            atf__atomic_add_u64(&s->producing, 1);
        }
        atf__store_release_u64(&s->slot_count, n + 1);
        s->manifest_dirty = 1;
    }
    atf__session_unlock(s);
    if (rc != ATF_OK) {
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        ATF_FREE(sl);
        return rc;
    }
    *out = sl;
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_attach(atf_session *s, const char *name,
                                                       atf_producer **out) {
    atf__tls_entry *e;
    atf__slot *sl = NULL;
    atf_result rc;
    if (out) *out = NULL;
    if (!s) return ATF_E_ARG;
    e = atf__tls_find(s->id);
    if (e && e->writer) {
        if (out) *out = e->writer;
        return ATF_OK;
    }
    if (atf__tls_no_attach) return ATF_E_STATE; /* exiting, the drain, or inside the library */
    if (!e) {
        atf__tls_prune();
        e = (atf__tls_entry *)ATF_MALLOC(sizeof *e);
        if (!e) {
            atf__session_lock(s);
            s->attach_failures++;
            atf__session_unlock(s);
            return ATF_E_NOMEM;
        }
        e->session_id = s->id;
        e->writer = NULL;
        e->next = atf__tls_list;
        atf__tls_list = e;
        if (!atf__tls_armed) {
            atf__thread_exit_arm(&atf__tls_list);
            atf__tls_armed = 1;
        }
    }
    rc = atf__session_add_slot(s, NULL, 0, NULL, 0, name, atf__os_thread_id(), &sl);
    if (rc != ATF_OK) {
        atf__session_lock(s);
        s->attach_failures++;
        atf__session_unlock(s);
        return rc;
    }
    e->writer = &sl->writer;
    if (out) *out = e->writer;
    return ATF_OK;
}

ATF__PRIVATE atf_producer *atf__session_writer_slow(atf_session *s) {
    atf__tls_entry *e = atf__tls_find(s->id);
    atf_producer *w = NULL;
    if (e) return e->writer;
    if (atf__tls_no_attach) return NULL;
    atf_session_attach(s, NULL, &w); /* on failure the entry stays, with no writer */
    return w;
}

ATFDEF ATF_NO_INSTRUMENT atf_producer *atf_session_producer(atf_session *s) {
    atf__tls_entry *e = atf__tls_list;
    if (e && e->session_id == s->id) return e->writer;
    return atf__session_writer_slow(s);
}

ATFDEF ATF_NO_INSTRUMENT void atf_session_detach(atf_session *s) {
    atf__tls_entry *e = s ? atf__tls_find(s->id) : NULL;
    if (!e || !e->writer) return;
    atf__producer_close_rings(e->writer);
    e->writer = NULL;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_attach_rings(atf_session *s, void *index_mem,
                                                             size_t index_size, void *detail_mem,
                                                             size_t detail_size, const char *name,
                                                             uint32_t *slot_out) {
    atf__slot *sl = NULL;
    atf_result rc;
    if (!s || !index_mem) return ATF_E_ARG;
    rc = atf__session_add_slot(s, index_mem, index_size, detail_mem, detail_size, name, 0, &sl);
    if (rc == ATF_OK && slot_out) *slot_out = sl->slot;
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_pump(atf_session *s) {
    atf_result rc;
    if (!s) return ATF_E_ARG;
    atf__session_drain(s, 1, 0, 1); /* everything available: each slot waited for */
    atf__drain_lock(s);
    atf__manifest_refresh(s, 0);
    atf__session_lock(s);
    rc = s->error.code;
    atf__session_unlock(s);
    atf__drain_unlock(s);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT void atf_session_trigger(atf_session *s, uint64_t t_ns) {
    uint64_t lo = t_ns > s->cfg.pre_roll_ns ? t_ns - s->cfg.pre_roll_ns : 0;
    uint64_t hi = t_ns + s->cfg.post_roll_ns < t_ns ? UINT64_MAX : t_ns + s->cfg.post_roll_ns;
    size_t bytes = (ATF__MAX_WINDOWS + 1) * sizeof(atf__window);
    if (s->keep_active) { /* the drain writes what is held; windowed detail: a window too */
        atf__atomic_inc_u32(&s->persist_gen);
        if (s->cfg.detail_mode != ATF_DETAIL_WINDOWED) return;
    }
    atf__session_lock(s);
    if (!s->windows) {
        s->windows = (atf__window *)ATF_MALLOC(bytes);
        if (!s->windows) atf__error_set(&s->error, ATF_E_NOMEM, s->dir, 0, "trigger windows");
    }
    if (s->windows) {
        atf__windows_add(s->windows, &s->window_count, lo, hi);
        s->window_gen++;
    }
    atf__session_unlock(s);
}

ATFDEF ATF_NO_INSTRUMENT uint64_t atf_session_ticks_to_ns(atf_session *s, uint64_t ticks) {
    atf__tick_pair last, now;
    uint64_t width;
    size_t hint = 0;
    atf__tick_rate rate, r;
    if (ATF_TICKS_ARE_NS || !s) return ticks;
    atf__session_lock(s);
    last = s->ticks.p[s->ticks.count - 1];
    if (ticks < last.ticks && s->ticks.count >= 2) {
        uint64_t ns = atf__tick_map_ns(&s->ticks, ticks, 0, &hint);
        atf__session_unlock(s);
        return ns;
    }
    width = s->ticks.width;
    rate = s->ticks.rate;
    atf__session_unlock(s);
    /* younger than the newest pair (or the map has one pair): a pair read now */
    now = atf__tick_pair_read(&width);
    if (now.ticks <= last.ticks || now.ns < last.ns) return last.ns;
    r = atf__tick_rate_of(now.ns - last.ns, now.ticks - last.ticks);
    if (!rate.whole && !rate.frac) rate = r; /* one pair: no rate yet */
    if (ticks < last.ticks) return atf__tick_back(last.ns, last.ticks - ticks, rate);
    if (ticks >= now.ticks) return atf__tick_forward(now.ns, ticks - now.ticks, rate);
    return atf__tick_forward(last.ns, ticks - last.ticks, r);
}

/* ---- 10.16 session API: metadata and figures ---------------------------------- >>metadata */
/* What the manifest lists beside the threads (modules and their build ids, symbols,
 * the command line, thread names, timing anchors), and what a session says of itself
 * (its path, first error, each thread's figures, which bound stopped it). */

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_module(atf_session *s, uint32_t module_id,
                                                           const char *path, uint64_t base_address,
                                                           uint64_t size) {
    atf__module *m;
    char *copy = atf__strdup(path);
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
    if (copy && atf__grow((void **)&s->modules, &s->module_cap, s->module_count, sizeof *m)) {
        m = &s->modules[s->module_count++];
        memset(m, 0, sizeof *m);
        m->module_id = module_id;
        m->path = copy;
        m->base = base_address;
        m->size = size;
        s->manifest_dirty = 1;
        copy = NULL;
        rc = ATF_OK;
    }
    atf__session_unlock(s);
    ATF_FREE(copy);
    return rc;
}

/* Copies a build id of 1-64 hex digits into out[65], lowercase; 0 when it is not one. */
ATF__PRIVATE int atf__build_id_copy(char *out, const char *hex) {
    size_t i, n = hex ? strlen(hex) : 0;
    if (n == 0 || n > 64) return 0;
    for (i = 0; i < n; i++) {
        char c = hex[i];
        if (!atf__is_hex(c)) return 0;
        out[i] = c >= 'A' && c <= 'F' ? (char)(c - 'A' + 'a') : c;
    }
    out[n] = '\0';
    return 1;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_set_module_build_id(atf_session *s, uint32_t module_id,
                                                                    const char *build_id_hex) {
    char id[65];
    size_t i;
    atf_result rc = ATF_E_NOT_FOUND;
    if (!s || !atf__build_id_copy(id, build_id_hex)) return ATF_E_ARG;
    atf__session_lock(s);
    for (i = s->module_count; i-- > 0;) {
        if (s->modules[i].module_id != module_id) continue;
        memcpy(s->modules[i].build_id, id, sizeof id);
        s->manifest_dirty = 1;
        rc = ATF_OK;
        break;
    }
    atf__session_unlock(s);
    return rc;
}

/* The symbols' hash slot for function_id: a multiplicative hash, probed linearly. */
ATF__PRIVATE size_t atf__symbol_probe(const atf_session *s, uint64_t function_id) {
    size_t mask = s->symbol_hash_cap - 1;
    size_t h = (size_t)((function_id * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    while (s->symbol_hash[h] && s->symbols[s->symbol_hash[h] - 1].function_id != function_id)
        h = (h + 1) & mask;
    return h;
}

/* Makes room for one more symbol in the array and the hash (kept at most half full). */
ATF__PRIVATE int atf__symbols_reserve(atf_session *s) {
    size_t cap, i, *hash;
    if (!atf__grow((void **)&s->symbols, &s->symbol_cap, s->symbol_count, sizeof *s->symbols))
        return 0;
    if ((s->symbol_count + 1) * 2 <= s->symbol_hash_cap) return 1;
    cap = s->symbol_hash_cap ? s->symbol_hash_cap * 2 : 64;
    hash = (size_t *)ATF_MALLOC(cap * sizeof *hash);
    if (!hash) return 0;
    memset(hash, 0, cap * sizeof *hash);
    ATF_FREE(s->symbol_hash);
    s->symbol_hash = hash;
    s->symbol_hash_cap = cap;
    for (i = 0; i < s->symbol_count; i++) hash[atf__symbol_probe(s, s->symbols[i].function_id)] = i + 1;
    return 1;
}

/* The entry of function_id, made (with neither name nor location) when there is none;
 * NULL when memory ran out. One entry per id, so a name given at exit and a location
 * given at the first call end up together. Caller holds s->lock. */
ATF__PRIVATE atf__symbol *atf__symbol_entry(atf_session *s, uint64_t function_id) {
    size_t h;
    atf__symbol *y;
    if (s->symbol_hash_cap) {
        h = atf__symbol_probe(s, function_id);
        if (s->symbol_hash[h]) return &s->symbols[s->symbol_hash[h] - 1];
    }
    if (!atf__symbols_reserve(s)) return NULL;
    y = &s->symbols[s->symbol_count++];
    memset(y, 0, sizeof *y);
    y->function_id = function_id;
    s->symbol_hash[atf__symbol_probe(s, function_id)] = s->symbol_count;
    return y;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_symbol(atf_session *s, uint64_t function_id,
                                                           const char *name) {
    char *copy = atf__strdup(name);
    atf__symbol *y;
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
    if (copy && (y = atf__symbol_entry(s, function_id)) != NULL) {
        ATF_FREE(y->name);
        y->name = copy;
        s->manifest_dirty = 1;
        copy = NULL;
        rc = ATF_OK;
    }
    atf__session_unlock(s);
    ATF_FREE(copy);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_function(atf_session *s, uint64_t function_id,
                                                             uint32_t module_id, uint64_t offset) {
    atf__symbol *y;
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
    if ((y = atf__symbol_entry(s, function_id)) != NULL) {
        y->module_id = module_id;
        y->offset = offset;
        y->has_offset = 1;
        s->manifest_dirty = 1;
        rc = ATF_OK;
    }
    atf__session_unlock(s);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_set_cmdline(atf_session *s, const char *cmdline) {
    char *copy = atf__strdup(cmdline);
    if (!copy) return ATF_E_NOMEM;
    atf__session_lock(s);
    ATF_FREE(s->cmdline);
    s->cmdline = copy;
    s->manifest_dirty = 1;
    atf__session_unlock(s);
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_name_thread(atf_session *s, const char *name) {
    atf__tls_entry *e = s ? atf__tls_find(s->id) : NULL;
    atf__slot *sl;
    if (!e || !e->writer) return ATF_E_STATE;
    atf__session_lock(s);
    sl = s->slots[e->writer->slot];
    if (!sl->name_given) {
        atf__copy_utf8(sl->name, sizeof sl->name, name);
        s->manifest_dirty = 1;
    }
    atf__session_unlock(s);
    return ATF_OK;
}

/* Appends an anchor; ATF_E_NOMEM when the array cannot grow. */
ATF__PRIVATE atf_result atf__anchor_add(atf_session *s, const atf__anchor *a) {
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
    if (atf__grow((void **)&s->anchors, &s->anchor_cap, s->anchor_count, sizeof *s->anchors)) {
        s->anchors[s->anchor_count++] = *a;
        s->manifest_dirty = 1;
        rc = ATF_OK;
    }
    atf__session_unlock(s);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_anchor_exact(atf_session *s, const char *name,
                                                                 uint64_t host_ns, int64_t value,
                                                                 int32_t timescale) {
    atf__anchor a;
    if (!s || timescale <= 0) return ATF_E_ARG;
    memset(&a, 0, sizeof a);
    atf__copy_utf8(a.name, sizeof a.name, name);
    a.host_ns = host_ns;
    a.value = value;
    a.timescale = timescale;
    a.value_f = (double)value;
    a.rate = (double)timescale;
    return atf__anchor_add(s, &a);
}

/* Whether a double is an integer in int64 range (2^63 itself is not). */
ATF__PRIVATE int atf__double_is_i64(double v) {
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 && v == (double)(int64_t)v;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_anchor(atf_session *s, const char *name,
                                                           uint64_t host_ns, double value,
                                                           double rate) {
    atf__anchor a;
    if (atf__double_is_i64(value) && rate >= 1 && rate <= (double)INT32_MAX &&
        rate == (double)(int32_t)rate)
        return atf_session_add_anchor_exact(s, name, host_ns, (int64_t)value, (int32_t)rate);
    memset(&a, 0, sizeof a);
    atf__copy_utf8(a.name, sizeof a.name, name);
    a.host_ns = host_ns;
    a.value_f = value;
    a.rate = rate;
    return atf__anchor_add(s, &a);
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_session_path(const atf_session *s) { return s->dir; }
ATFDEF ATF_NO_INSTRUMENT const atf_error *atf_session_error(const atf_session *s) {
    return &s->error;
}
ATFDEF ATF_NO_INSTRUMENT uint32_t atf_session_thread_count(const atf_session *s) {
    return (uint32_t)atf__load_acquire_u64(&s->slot_count);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_thread_stats(atf_session *s, uint32_t slot,
                                                             atf_thread_stats *out) {
    atf__slot *sl;
    if (slot >= atf_session_thread_count(s)) return ATF_E_RANGE;
    sl = s->slots[slot];
    atf__slot_lock(sl);
    if (!sl->finalized && !sl->retired) atf__slot_copy_counters(sl); /* live */
    atf__slot_stats(sl, out);
    atf__slot_unlock(sl);
    return ATF_OK;
}

ATFDEF ATF_NO_INSTRUMENT uint32_t atf_session_stopped(atf_session *s, uint64_t *at_ns) {
    uint32_t reason;
    atf__session_lock(s);
    reason = s->bound.reason;
    if (at_ns) *at_ns = reason ? s->bound.stopped_ns : 0;
    atf__session_unlock(s);
    return reason;
}

ATFDEF ATF_NO_INSTRUMENT const char *atf_stop_reason_str(uint32_t reason) {
    switch (reason) {
    case ATF_STOP_NONE: return "";
    case ATF_STOP_MAX_SIZE: return "max size";
    case ATF_STOP_DURATION: return "duration";
    case ATF_STOP_DISK_RESERVE: return "disk reserve";
    default: return "unknown";
    }
}


/* ==== 11. readers =============================================================== >>readers */
/* Index, detail and thread readers. Opening validates the header, picks the
 * event count by the recovery rules (authoritative footer, else file size / record walk),
 * and, for detail files, builds the record offset table; after that every access is O(1)
 * and bounds-checked against the count, never against the bytes again. */
ATFDEF const char *atf_count_source_str(atf_count_source r) {
    switch (r) {
    case ATF_COUNT_FINALIZED: return "finalized";
    case ATF_COUNT_FOOTER_AT_END: return "footer at end (placeholder header)";
    case ATF_COUNT_FROM_SIZE: return "recovered (no footer)";
    case ATF_COUNT_FOOTER_MISMATCH: return "footer disagrees with file";
    default: return "unknown";
    }
}

ATFDEF const char *atf_crc_state_str(atf_crc_state s) {
    switch (s) {
    case ATF_CRC_NO_FOOTER: return "no usable footer";
    case ATF_CRC_NOT_COMPUTED: return "not computed (0)";
    case ATF_CRC_UNCHECKED: return "present, not verified";
    case ATF_CRC_OK: return "ok";
    case ATF_CRC_MISMATCH: return "mismatch";
    default: return "unknown";
    }
}

/* Loads the file (or borrows the caller's bytes) into r's image. */
ATF__PRIVATE atf_result atf__image_load(atf__file_image *img, const char *path, const void *data,
                                        size_t size, const atf_reader_options *opt,
                                        atf_error *err) {
    if (path) return atf__file_map(img, path, opt ? opt->no_mmap : 0, err);
    memset(img, 0, sizeof *img);
    if (!data && size) return atf__error_set(err, ATF_E_ARG, "", 0, "NULL data");
    img->data = (const uint8_t *)data;
    img->size = size;
    img->kind = ATF__IMAGE_BORROWED;
    return ATF_OK;
}

/* The header checks common to both file kinds: size, identity, events_offset. */
ATF__PRIVATE atf_result atf__check_header(atf_error *err, const char *name, uint64_t size,
                                          const char *versions, atf_result identity,
                                          const uint8_t *bytes,
                                          uint64_t events_offset, uint64_t events_offset_at) {
    if (identity == ATF_E_MAGIC)
        return atf__error_set(err, ATF_E_MAGIC, name, 0, "magic");
    if (identity == ATF_E_ENDIAN)
        return atf__error_set_values(err, ATF_E_ENDIAN, name, 4, "endian byte", 1, bytes[4]);
    if (identity == ATF_E_VERSION)
        return atf__error_set_values(err, ATF_E_VERSION, name, 5, versions, 2,
                                     bytes[5]);
    if (events_offset < ATF_HEADER_SIZE)
        return atf__error_set_values(err, ATF_E_CORRUPT, name, events_offset_at, "events_offset below header",
                                     ATF_HEADER_SIZE, events_offset);
    if (events_offset > size)
        return atf__error_set_values(err, ATF_E_TRUNCATED, name, events_offset_at, "events_offset beyond end",
                                     size, events_offset);
    return ATF_OK;
}

/* Where a footer might be: first the header's word, then the last 64 bytes. Returns the
 * offset of the first candidate carrying `magic`, or UINT64_MAX; *via_header tells which. */
ATF__PRIVATE uint64_t atf__find_footer(const atf__file_image *img, uint64_t events_offset,
                                       uint64_t hinted, const char *magic, int *via_header) {
    *via_header = 0;
    if (hinted >= events_offset && hinted <= img->size && img->size - hinted >= ATF_FOOTER_SIZE &&
        memcmp(img->data + hinted, magic, 4) == 0) {
        *via_header = 1;
        return hinted;
    }
    if (img->size >= events_offset + ATF_FOOTER_SIZE &&
        memcmp(img->data + img->size - ATF_FOOTER_SIZE, magic, 4) == 0)
        return img->size - ATF_FOOTER_SIZE;
    return UINT64_MAX;
}

ATF__PRIVATE atf_crc_state atf__crc_state_of(uint32_t checksum) {
    return checksum ? ATF_CRC_UNCHECKED : ATF_CRC_NOT_COMPUTED;
}

/* Compares a computed CRC with the footer's and records the outcome. */
ATF__PRIVATE atf_result atf__crc_settle(atf_crc_state *state, uint32_t *found_out, uint32_t want,
                                        uint32_t found, atf_error *err, const char *name,
                                        uint64_t offset) {
    *found_out = found;
    if (found == want) {
        *state = ATF_CRC_OK;
        return ATF_OK;
    }
    *state = ATF_CRC_MISMATCH;
    return atf__error_set_values(err, ATF_E_CRC, name, offset, "CRC32-C of events section",
                                 want, found);
}

/* A packed file's blocks as a reader walks them: where it stands, what it found. */
typedef struct atf__packed_walk {
    const uint8_t *data;
    uint64_t at, limit;          /* next block header; where blocks must end */
    uint32_t block_events;
    uint64_t count;              /* events in the blocks found */
    uint64_t *block_at;          /* their offsets (owned) */
    size_t blocks, cap;
    int short_seen;              /* a block held fewer than block_events: the last one */
    int bad_crc;                 /* the walk stopped at a whole block whose CRC fails */
    int nomem;                   /* the walk stopped for want of memory, not of blocks */
} atf__packed_walk;

/* Takes the block at w->at when it is whole (its header fits, 1 <= events <=
 * block_events, the payload fits, reserved bytes 0, the payload's CRC matches) and no
 * block before it was short; 0 (nothing changed) otherwise, or when memory runs out
 * (w->nomem). Its payload is decoded when read. */
ATF__PRIVATE int atf__packed_walk_block(atf__packed_walk *w) {
    const uint8_t *h = w->data + w->at;
    uint32_t n, len;
    if (w->short_seen || w->limit - w->at < ATF_PACKED_BLOCK_HEADER_SIZE) return 0;
    n = atf__load_le32(h);
    len = atf__load_le32(h + 4);
    if (n == 0 || n > w->block_events || len > w->limit - w->at - ATF_PACKED_BLOCK_HEADER_SIZE ||
        len < 2u * n || atf__load_le32(h + 12) != 0)
        return 0;
    if (atf_crc32c(h + ATF_PACKED_BLOCK_HEADER_SIZE, len) != atf__load_le32(h + 8)) {
        w->bad_crc = 1;
        return 0;
    }
    if (!atf__grow((void **)&w->block_at, &w->cap, w->blocks, sizeof *w->block_at)) {
        w->nomem = 1;
        return 0;
    }
    w->block_at[w->blocks++] = w->at;
    w->short_seen = n < w->block_events;
    w->count += n;
    w->at += ATF_PACKED_BLOCK_HEADER_SIZE + len;
    return 1;
}

/* Whether the block table of a finalized file sits between the last block and the
 * footer, naming every block the walk found. */
ATF__PRIVATE int atf__packed_table_agrees(const atf__packed_walk *w, uint64_t footer_pos) {
    size_t k;
    if (footer_pos - w->at != (uint64_t)w->blocks * 8) return 0;
    for (k = 0; k < w->blocks; k++)
        if (atf__load_le64(w->data + w->at + k * 8) != w->block_at[k]) return 0;
    return 1;
}

/* An empty cache of decoded blocks for r; NULL when memory ran out. */
ATF__PRIVATE atf__packed_cache *atf__packed_cache_new(const atf_index_reader *r) {
    size_t i, bytes = (size_t)ATF__PACKED_SLOTS * r->block_events * ATF_INDEX_EVENT_SIZE;
    atf__packed_cache *c = (atf__packed_cache *)ATF_MALLOC(sizeof *c);
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->slots = (uint8_t *)ATF_MALLOC(bytes);
    if (!c->slots) {
        ATF_FREE(c);
        return NULL;
    }
    for (i = 0; i < ATF__PACKED_SLOTS; i++) c->block[i] = UINT64_MAX;
    c->data = c->slots;
    return c;
}

ATF__PRIVATE void atf__packed_cache_free(atf__packed_cache *c) {
    if (c) ATF_FREE(c->slots);
    ATF_FREE(c);
}

ATF__PRIVATE int atf__packed_cache_make(atf_index_reader *r) {
    return (r->cache = atf__packed_cache_new(r)) != NULL;
}

/* Events of block k. */
ATF__PRIVATE uint32_t atf__packed_block_events(const atf_index_reader *r, uint64_t k) {
    return atf__load_le32(r->image.data + r->block_at[k]);
}

ATFDEF const uint8_t *atf__packed_record(const atf_index_reader *r, atf__packed_cache *c,
                                         uint64_t seq) {
    uint64_t k = seq / r->block_events;
    uint8_t *slot;
    const uint8_t *h;
    unsigned i;
    for (i = 0; i < ATF__PACKED_SLOTS && c->block[i] != k; i++) {}
    if (i == ATF__PACKED_SLOTS) { /* decode it into the next slot in turn */
        i = c->next;
        c->next = (c->next + 1) % ATF__PACKED_SLOTS;
        slot = c->slots + (size_t)i * r->block_events * ATF_INDEX_EVENT_SIZE;
        h = r->image.data + r->block_at[k];
        c->block[i] = k;
        if (atf_packed_decode(h + ATF_PACKED_BLOCK_HEADER_SIZE, atf__load_le32(h + 4),
                              atf__load_le32(h), r->header.thread_id, slot) != ATF_OK) {
            /* its CRC matched, so no crash made it: damage, said by c->damaged and a CRC
             * that cannot match; zeros keep every reader in bounds */
            memset(slot, 0, (size_t)atf__load_le32(h) * ATF_INDEX_EVENT_SIZE);
            c->damaged = 1;
        }
    }
    c->first = k * r->block_events;
    c->count = atf__packed_block_events(r, k);
    c->data = c->slots + (size_t)i * r->block_events * ATF_INDEX_EVENT_SIZE;
    return c->data + (seq - c->first) * ATF_INDEX_EVENT_SIZE;
}

/* The blocks of a packed index file, found by the recovery rules: a footer (through the
 * header, else at the end) whose count and table agree with the blocks is authoritative;
 * otherwise the whole blocks from the start are counted, and what follows the last of
 * them is torn. */
ATF__PRIVATE atf_result atf__packed_reader_setup(atf_index_reader *r, const char *name) {
    const atf__file_image *img = &r->image;
    uint64_t lane = r->header.events_offset, first = lane + ATF_PACKED_LANE_SIZE, footer_pos;
    atf__packed_walk w;
    int via_header;
    memset(&w, 0, sizeof w);
    r->layout = ATF_LAYOUT_1;
    r->packed = 1;
    r->counted = ATF_COUNT_FROM_SIZE;
    r->crc_state = ATF_CRC_NO_FOOTER;
    r->events = img->data + lane;
    r->block_events = ATF_PACKED_BLOCK_EVENTS;
    if (img->size - lane < ATF_PACKED_LANE_SIZE) { /* a crash right after the header */
        r->torn_bytes = img->size - lane;
        r->packed_end = lane;
        return atf__packed_cache_make(r) ? ATF_OK
                                         : atf__error_set(&r->error, ATF_E_NOMEM, name, 0, "block cache");
    }
    if (memcmp(img->data + lane, ATF_PACKED_LANE_MAGIC, 4) != 0)
        return atf__error_set(&r->error, ATF_E_CORRUPT, name, lane, "packed lane magic");
    w.data = img->data;
    w.at = first;
    w.limit = img->size;
    w.block_events = atf__load_le32(img->data + lane + 4);
    if (w.block_events == 0 || w.block_events > ATF_PACKED_BLOCK_EVENTS_MAX)
        return atf__error_set_values(&r->error, ATF_E_CORRUPT, name, lane + 4, "block_events",
                                     ATF_PACKED_BLOCK_EVENTS, w.block_events);
    r->block_events = w.block_events;
    footer_pos = atf__find_footer(img, first, r->header.footer_offset, ATF_INDEX_FOOTER_MAGIC,
                                  &via_header);
    if (footer_pos != UINT64_MAX) {
        atf_index_footer_decode(img->data + footer_pos, &r->footer);
        r->has_footer = 1;
        w.limit = footer_pos;
    }
    while (atf__packed_walk_block(&w)) {}
    r->block_at = w.block_at;
    r->block_count = w.blocks;
    if (w.nomem) /* not a torn file: say so rather than count fewer events */
        return atf__error_set(&r->error, ATF_E_NOMEM, name, w.at, "block offsets");
    r->packed_end = w.at;
    if (r->has_footer) {
        if (r->footer.event_count == w.count && r->footer.bytes_written == w.count * ATF_INDEX_EVENT_SIZE &&
            atf__packed_table_agrees(&w, footer_pos)) {
            r->counted = via_header ? ATF_COUNT_FINALIZED : ATF_COUNT_FOOTER_AT_END;
            r->crc_state = atf__crc_state_of(r->footer.checksum);
            w.at = footer_pos;
        } else {
            r->counted = ATF_COUNT_FOOTER_MISMATCH;
            /* a finalized file's blocks were all whole before its footer was: one whose
             * CRC fails is damage (as a CRC mismatch is in layout 1), not a crash's */
            if (via_header && w.bad_crc) {
                r->crc_state = ATF_CRC_MISMATCH;
                atf__error_set(&r->error, ATF_E_CRC, name, w.at, "CRC32-C of a block of a finalized file");
            }
        }
    }
    r->torn_bytes = w.limit - w.at;
    r->event_count = w.count;
    if (!atf__packed_cache_make(r))
        return atf__error_set(&r->error, ATF_E_NOMEM, name, 0, "block cache");
    return ATF_OK;
}

/* CRC32-C of r's records [from, to), continuing crc: read in place, or block by block. */
ATF__PRIVATE uint32_t atf__index_crc(const atf_index_reader *r, uint32_t crc, uint64_t from,
                                     uint64_t to) {
    if (!r->packed) return atf_crc32c_update(crc, r->events + from * ATF_INDEX_EVENT_SIZE,
                                             (size_t)((to - from) * ATF_INDEX_EVENT_SIZE));
    while (from < to) {
        const uint8_t *rec = atf__index_record(r, from);
        uint64_t n = r->cache->first + r->cache->count - from;
        if (n > to - from) n = to - from;
        crc = atf_crc32c_update(crc, rec, (size_t)(n * ATF_INDEX_EVENT_SIZE));
        from += n;
    }
    return crc;
}

ATF__PRIVATE atf_result atf__index_reader_setup(atf_index_reader *r, const char *name,
                                                const atf_reader_options *opt) {
    const atf__file_image *img = &r->image;
    uint64_t footer_pos, span;
    int via_header;
    atf_result rc;
    if (img->size < ATF_HEADER_SIZE)
        return atf__error_set_values(&r->error, ATF_E_TRUNCATED, name, 0, "file shorter than header",
                                     ATF_HEADER_SIZE, img->size);
    rc = atf_index_header_decode(img->data, &r->header);
    rc = atf__check_header(&r->error, name, img->size, "version byte (1, 2 or 3)", rc, img->data,
                          r->header.events_offset, 32);
    if (rc != ATF_OK) return rc;
    if (r->header.event_size != ATF_INDEX_EVENT_SIZE)
        return atf__error_set_values(&r->error, ATF_E_CORRUPT, name, r->header.version == 2 ? 20 : 24,
                                     "event_size", ATF_INDEX_EVENT_SIZE, r->header.event_size);
    if (r->header.version == ATF_LAYOUT_PACKED) {
        rc = atf__packed_reader_setup(r, name);
        if (rc == ATF_OK && opt && opt->verify_crc) rc = atf_index_reader_verify_crc(r);
        return rc;
    }
    r->layout = r->header.version;
    r->events = img->data + r->header.events_offset;
    footer_pos = atf__find_footer(img, r->header.events_offset, r->header.footer_offset,
                                  ATF_INDEX_FOOTER_MAGIC, &via_header);
    span = img->size - r->header.events_offset;
    r->counted = ATF_COUNT_FROM_SIZE;
    r->crc_state = ATF_CRC_NO_FOOTER;
    if (footer_pos != UINT64_MAX) {
        atf_index_footer_decode(img->data + footer_pos, &r->footer);
        r->has_footer = 1;
        span = footer_pos - r->header.events_offset;
        if (r->footer.bytes_written == span && r->footer.event_count <= span / ATF_INDEX_EVENT_SIZE &&
            r->footer.event_count * ATF_INDEX_EVENT_SIZE == span) {
            r->counted = via_header ? ATF_COUNT_FINALIZED : ATF_COUNT_FOOTER_AT_END;
            r->crc_state = atf__crc_state_of(r->footer.checksum);
        } else {
            r->counted = ATF_COUNT_FOOTER_MISMATCH;
        }
    }
    r->event_count = span / ATF_INDEX_EVENT_SIZE;
    r->torn_bytes = span % ATF_INDEX_EVENT_SIZE;
    /* A crash while the footer was being written can leave 32..63 of its bytes: do not
     * read its first half as an event. */
    if (footer_pos == UINT64_MAX && r->event_count && r->torn_bytes < ATF_FOOTER_SIZE - 32 &&
        memcmp(r->events + (r->event_count - 1) * ATF_INDEX_EVENT_SIZE, ATF_INDEX_FOOTER_MAGIC, 4) == 0) {
        r->event_count--;
        r->torn_bytes += ATF_INDEX_EVENT_SIZE;
    }
    if (opt && opt->verify_crc) return atf_index_reader_verify_crc(r);
    return ATF_OK;
}

ATF__PRIVATE atf_result atf__index_reader_open(atf_index_reader *r, const char *path,
                                               const void *data, size_t size, const char *name,
                                               const atf_reader_options *opt) {
    atf_result rc;
    ATF_ASSERT(r);
    memset(r, 0, sizeof *r);
    atf__copy_str(r->path, sizeof r->path, name);
    rc = atf__image_load(&r->image, path, data, size, opt, &r->error);
    if (rc == ATF_OK) rc = atf__index_reader_setup(r, r->path, opt);
    if (rc != ATF_OK) {
        atf_error keep = r->error;
        atf_index_reader_close(r);
        r->error = keep;
    }
    return rc;
}

ATFDEF atf_result atf_index_reader_open(atf_index_reader *r, const char *path,
                                        const atf_reader_options *opt) {
    if (!path) return ATF_E_ARG;
    return atf__index_reader_open(r, path, NULL, 0, path, opt);
}

ATFDEF atf_result atf_index_reader_open_memory(atf_index_reader *r, const void *data, size_t size,
                                               const char *name, const atf_reader_options *opt) {
    return atf__index_reader_open(r, NULL, data, size, name ? name : "<memory>", opt);
}

ATFDEF void atf_index_reader_close(atf_index_reader *r) {
    if (!r) return;
    ATF_FREE(r->block_at);
    atf__packed_cache_free(r->cache);
    atf__file_unmap(&r->image);
    memset(r, 0, sizeof *r);
}

ATFDEF const uint8_t *atf_index_reader_raw(const atf_index_reader *r, uint64_t seq) {
    return seq < r->event_count ? atf__index_record(r, seq) : NULL;
}

ATFDEF atf_result atf_index_reader_get(const atf_index_reader *r, uint64_t seq,
                                       atf_index_event *out) {
    if (seq >= r->event_count) return ATF_E_RANGE;
    atf_index_event_decode(r->layout, atf__index_record(r, seq), out);
    return ATF_OK;
}

ATFDEF atf_result atf_index_reader_verify_crc(atf_index_reader *r) {
    uint32_t crc;
    int no_check = r->crc_state == ATF_CRC_NOT_COMPUTED || r->crc_state == ATF_CRC_NO_FOOTER;
    if (r->crc_state == ATF_CRC_MISMATCH) return ATF_E_CRC;
    if (r->crc_state == ATF_CRC_OK || (no_check && !r->packed)) return ATF_OK;
    crc = atf__index_crc(r, 0, 0, r->event_count);
    if (r->packed && r->cache->damaged) {
        r->crc_state = ATF_CRC_MISMATCH;
        return atf__error_set(&r->error, ATF_E_CRC, r->path, r->header.events_offset,
                              "a packed block whose CRC matches does not decode");
    }
    if (no_check) return ATF_OK;
    return atf__crc_settle(&r->crc_state, &r->crc_found, r->footer.checksum, crc, &r->error,
                           r->path, r->header.events_offset);
}

/* Walks the records of [start, end): counts them (and stores their offsets when
 * `offsets` is given). Stops at a torn record; a total_length below the record header
 * size is corruption. *stop receives where the walk ended. */
ATF__PRIVATE atf_result atf__detail_walk(const atf__file_image *img, uint64_t start, uint64_t end,
                                         uint64_t *offsets, uint64_t *count, uint64_t *stop,
                                         atf_error *err, const char *name) {
    uint64_t at = start, n = 0;
    while (end - at >= ATF_DETAIL_EVENT_HEADER_SIZE) {
        uint32_t length = atf__load_le32(img->data + at);
        if (length < ATF_DETAIL_EVENT_HEADER_SIZE)
            return atf__error_set_values(err, ATF_E_CORRUPT, name, at, "detail total_length",
                                         ATF_DETAIL_EVENT_HEADER_SIZE, length);
        if (length > end - at) break;
        if (offsets) offsets[n] = at;
        n++;
        at += length;
    }
    *count = n;
    *stop = at;
    return ATF_OK;
}

ATF__PRIVATE atf_result atf__detail_reader_setup(atf_detail_reader *r, const char *name,
                                                 const atf_reader_options *opt) {
    const atf__file_image *img = &r->image;
    uint64_t start, end, hinted, footer_pos, count, stop;
    int via_header;
    atf_result rc;
    if (img->size < ATF_HEADER_SIZE)
        return atf__error_set_values(&r->error, ATF_E_TRUNCATED, name, 0, "file shorter than header",
                                     ATF_HEADER_SIZE, img->size);
    rc = atf_detail_header_decode(img->data, &r->header);
    rc = atf__check_header(&r->error, name, img->size, "version byte (1 or 2)", rc, img->data,
                          r->header.events_offset, 20);
    if (rc != ATF_OK) return rc;
    r->layout = r->header.version;
    start = r->header.events_offset;
    /* A finalized header says where the footer is; a placeholder (all zero) says nothing. */
    hinted = UINT64_MAX;
    if ((r->header.event_count || r->header.bytes_length) &&
        r->header.bytes_length <= img->size - start)
        hinted = start + r->header.bytes_length;
    footer_pos = atf__find_footer(img, start, hinted, ATF_DETAIL_FOOTER_MAGIC, &via_header);
    end = footer_pos != UINT64_MAX ? footer_pos : img->size;
    rc = atf__detail_walk(img, start, end, NULL, &count, &stop, &r->error, name);
    if (rc != ATF_OK) return rc;
    r->counted = ATF_COUNT_FROM_SIZE;
    r->crc_state = ATF_CRC_NO_FOOTER;
    if (footer_pos != UINT64_MAX) {
        atf_detail_footer_decode(img->data + footer_pos, &r->footer);
        r->has_footer = 1;
        if (r->footer.bytes_length == end - start && stop == end && r->footer.event_count == count) {
            r->counted = via_header ? ATF_COUNT_FINALIZED : ATF_COUNT_FOOTER_AT_END;
            r->crc_state = atf__crc_state_of(r->footer.checksum);
        } else {
            r->counted = ATF_COUNT_FOOTER_MISMATCH;
        }
    }
    r->event_count = count;
    r->bytes_length = stop - start;
    r->torn_bytes = end - stop;
    if (count) {
        /* count <= file size / 24, so the table is bounded by a third of the file */
        r->offsets = (uint64_t *)ATF_MALLOC((size_t)count * sizeof(uint64_t));
        if (!r->offsets) return atf__error_set(&r->error, ATF_E_NOMEM, name, 0, "detail offset table");
        atf__detail_walk(img, start, stop, r->offsets, &count, &stop, &r->error, name);
    }
    if (opt && opt->verify_crc) return atf_detail_reader_verify_crc(r);
    return ATF_OK;
}

ATF__PRIVATE atf_result atf__detail_reader_open(atf_detail_reader *r, const char *path,
                                                const void *data, size_t size, const char *name,
                                                const atf_reader_options *opt) {
    atf_result rc;
    ATF_ASSERT(r);
    memset(r, 0, sizeof *r);
    atf__copy_str(r->path, sizeof r->path, name);
    rc = atf__image_load(&r->image, path, data, size, opt, &r->error);
    if (rc == ATF_OK) rc = atf__detail_reader_setup(r, r->path, opt);
    if (rc != ATF_OK) {
        atf_error keep = r->error;
        atf_detail_reader_close(r);
        r->error = keep;
    }
    return rc;
}

ATFDEF atf_result atf_detail_reader_open(atf_detail_reader *r, const char *path,
                                         const atf_reader_options *opt) {
    if (!path) return ATF_E_ARG;
    return atf__detail_reader_open(r, path, NULL, 0, path, opt);
}

ATFDEF atf_result atf_detail_reader_open_memory(atf_detail_reader *r, const void *data,
                                                size_t size, const char *name,
                                                const atf_reader_options *opt) {
    return atf__detail_reader_open(r, NULL, data, size, name ? name : "<memory>", opt);
}

ATFDEF void atf_detail_reader_close(atf_detail_reader *r) {
    if (!r) return;
    ATF_FREE(r->offsets);
    atf__file_unmap(&r->image);
    memset(r, 0, sizeof *r);
}

ATFDEF atf_result atf_detail_reader_get(const atf_detail_reader *r, uint64_t seq,
                                        atf_detail_event *out) {
    const uint8_t *p;
    if (seq >= r->event_count) return ATF_E_RANGE;
    p = r->image.data + r->offsets[seq];
    atf_detail_event_header_decode(r->layout, p, &out->header);
    out->payload = p + ATF_DETAIL_EVENT_HEADER_SIZE;
    out->payload_len = out->header.total_length - ATF_DETAIL_EVENT_HEADER_SIZE;
    out->offset = r->offsets[seq];
    return ATF_OK;
}

ATFDEF atf_result atf_detail_reader_verify_crc(atf_detail_reader *r) {
    uint32_t crc;
    if (r->crc_state == ATF_CRC_OK || r->crc_state == ATF_CRC_NOT_COMPUTED ||
        r->crc_state == ATF_CRC_NO_FOOTER)
        return ATF_OK;
    if (r->crc_state == ATF_CRC_MISMATCH) return ATF_E_CRC;
    crc = atf_crc32c(r->image.data + r->header.events_offset, (size_t)r->bytes_length);
    return atf__crc_settle(&r->crc_state, &r->crc_found, r->footer.checksum, crc, &r->error,
                           r->path, r->header.events_offset);
}

/* Maps side file `path` (gaps.atf, pauses.atf) of a thread, its header checked by
 * `decode`, and allocates *table for its whole records (*n of `size` bytes each). 0 when
 * it is absent, damaged or memory ran out (the error, but absence, in t->error). */
ATF__PRIVATE int atf__thread_reader_side(atf_thread_reader *t, const char *path,
                                         atf_result (*decode)(const uint8_t *, uint32_t *),
                                         size_t size, const atf_reader_options *opt,
                                         atf__file_image *img, void **table, uint64_t *n) {
    atf_error e;
    atf_result rc;
    memset(&e, 0, sizeof e);
    *n = 0;
    if (atf__file_map(img, path, opt && opt->no_mmap, &e) != ATF_OK) {
        if (e.code != ATF_E_NOT_FOUND) atf__error_adopt(&t->error, &e);
        return 0;
    }
    if (img->size < 16) {
        atf__error_set_values(&t->error, ATF_E_TRUNCATED, path, 0, "header", 16, img->size);
    } else if ((rc = decode(img->data, NULL)) != ATF_OK) {
        atf__error_set(&t->error, rc, path, 0, "header");
    } else if ((*n = (img->size - 16) / 32) > 0 && (*table = ATF_MALLOC((size_t)*n * size)) == NULL) {
        atf__error_set(&t->error, ATF_E_NOMEM, path, 0, "record table");
    } else {
        return 1;
    }
    atf__file_unmap(img);
    return 0;
}

/* Loads gaps.atf when present. Records must come in index_seq order and say they lost
 * index events; one past the event count is a gap at the end (a crash kept the record,
 * not the events before it). A damaged file keeps the gaps before the damage and its
 * error in t->error (the events themselves are readable either way). */
ATF__PRIVATE void atf__thread_reader_gaps(atf_thread_reader *t, const char *path,
                                          const atf_reader_options *opt) {
    atf__file_image img;
    void *table = NULL;
    uint64_t i, n;
    if (!atf__thread_reader_side(t, path, atf_gaps_header_decode, sizeof(atf_gap), opt, &img,
                                 &table, &n))
        return;
    t->gaps = (atf_gap *)table;
    for (i = 0; i < n; i++) {
        atf_gap *g = &t->gaps[i];
        atf_gap_decode(img.data + ATF_GAPS_HEADER_SIZE + i * ATF_GAP_RECORD_SIZE, g);
        if ((i && g->index_seq < t->gaps[i - 1].index_seq) || g->index_lost == 0 ||
            g->index_lost > UINT64_MAX - t->events_lost) {
            atf__error_set_values(&t->error, ATF_E_CORRUPT, path,
                                  ATF_GAPS_HEADER_SIZE + i * ATF_GAP_RECORD_SIZE,
                                  "gap record out of order or empty",
                                  i ? t->gaps[i - 1].index_seq : 0, g->index_seq);
            break;
        }
        t->events_lost += g->index_lost;
        t->gap_count++;
    }
    atf__file_unmap(&img);
}

/* Loads pauses.atf when present. Records must come in index_seq order, each ending no
 * earlier than it starts. A damaged file keeps the pauses before the damage and its error
 * in t->error. */
ATF__PRIVATE void atf__thread_reader_pauses(atf_thread_reader *t, const char *path,
                                            const atf_reader_options *opt) {
    atf__file_image img;
    void *table = NULL;
    uint64_t i, n;
    if (!atf__thread_reader_side(t, path, atf_pauses_header_decode, sizeof(atf_pause), opt, &img,
                                 &table, &n))
        return;
    t->pauses = (atf_pause *)table;
    for (i = 0; i < n; i++) {
        atf_pause *p = &t->pauses[i];
        atf_pause_decode(img.data + ATF_PAUSES_HEADER_SIZE + i * ATF_PAUSE_RECORD_SIZE, p);
        if ((i && p->index_seq < t->pauses[i - 1].index_seq) || p->end_ns < p->start_ns ||
            p->end_ns - p->start_ns > UINT64_MAX - t->paused_ns) {
            atf__error_set_values(&t->error, ATF_E_CORRUPT, path,
                                  ATF_PAUSES_HEADER_SIZE + i * ATF_PAUSE_RECORD_SIZE,
                                  "pause record out of order or ending before it starts",
                                  p->start_ns, p->end_ns);
            break;
        }
        t->paused_ns += p->end_ns - p->start_ns;
        t->pause_count++;
    }
    atf__file_unmap(&img);
}

ATFDEF const atf_gap *atf_thread_reader_gap_before(const atf_thread_reader *t,
                                                   uint64_t index_seq) {
    size_t lo = 0, hi = t->gap_count;
    while (lo < hi) { /* first gap with index_seq >= the one asked for */
        size_t mid = lo + (hi - lo) / 2;
        if (t->gaps[mid].index_seq < index_seq) lo = mid + 1;
        else hi = mid;
    }
    if (lo < t->gap_count && index_seq >= t->index.event_count) return &t->gaps[lo]; /* at the end */
    return lo < t->gap_count && t->gaps[lo].index_seq == index_seq ? &t->gaps[lo] : NULL;
}

ATFDEF atf_result atf_thread_reader_open(atf_thread_reader *t, const char *dir,
                                         const atf_reader_options *opt) {
    char path[1024];
    atf_result rc;
    ATF_ASSERT(t);
    memset(t, 0, sizeof *t);
    if (!dir || atf__path_join(path, sizeof path, dir, "index.atf") != ATF_OK)
        return atf__error_set(&t->error, ATF_E_ARG, dir ? dir : "", 0, "directory path too long");
    rc = atf_index_reader_open(&t->index, path, opt);
    if (rc != ATF_OK) {
        atf__error_adopt(&t->error, &t->index.error);
        return rc;
    }
    atf__path_join(path, sizeof path, dir, "detail.atf");
    rc = atf_detail_reader_open(&t->detail, path, opt);
    if (rc == ATF_OK) {
        t->has_detail = 1;
    } else if (rc == ATF_E_NOT_FOUND) {
        rc = ATF_OK;
    } else {
        atf__error_adopt(&t->error, &t->detail.error);
        atf_index_reader_close(&t->index);
    }
    if (rc == ATF_OK && atf__path_join(path, sizeof path, dir, "gaps.atf") == ATF_OK)
        atf__thread_reader_gaps(t, path, opt);
    if (rc == ATF_OK && atf__path_join(path, sizeof path, dir, "pauses.atf") == ATF_OK)
        atf__thread_reader_pauses(t, path, opt);
    return rc;
}

ATFDEF void atf_thread_reader_close(atf_thread_reader *t) {
    if (!t) return;
    atf_index_reader_close(&t->index);
    atf_detail_reader_close(&t->detail);
    ATF_FREE(t->gaps);
    t->gaps = NULL;
    t->gap_count = 0;
    t->events_lost = 0;
    ATF_FREE(t->pauses);
    t->pauses = NULL;
    t->pause_count = 0;
    t->paused_ns = 0;
    t->has_detail = 0;
}

/* Index event seq of t, read without the reader's cache when the file is packed (the
 * block decoded up to it on the stack): the links are followed from merges that may run
 * at once over one reader. */
ATF__PRIVATE atf_result atf__thread_index_get(const atf_thread_reader *t, uint64_t seq,
                                              atf_index_event *out) {
    const atf_index_reader *r = &t->index;
    const uint8_t *h, *p, *end;
    uint8_t rec[ATF_INDEX_EVENT_SIZE];
    atf__pack_state st;
    uint64_t i, k;
    if (!r->packed) return atf_index_reader_get(r, seq, out);
    if (seq >= r->event_count) return ATF_E_RANGE;
    k = seq / r->block_events;
    h = r->image.data + r->block_at[k];
    p = h + ATF_PACKED_BLOCK_HEADER_SIZE;
    end = p + atf__load_le32(h + 4);
    atf__pack_state_init(&st, r->header.thread_id);
    for (i = k * r->block_events; i <= seq; i++)
        if (p == end || (p = atf__unpack_event(&st, p, end, rec)) == NULL) return ATF_E_CORRUPT;
    atf_index_event_decode(ATF_LAYOUT_1, rec, out);
    return ATF_OK;
}

/* The detail record that index event `ev` (number index_seq) names, checked back. */
ATF__PRIVATE atf_result atf__thread_detail_named(const atf_thread_reader *t, uint64_t index_seq,
                                                 const atf_index_event *ev, atf_detail_event *out) {
    if (ev->detail_seq == ATF_NO_DETAIL) return ATF_E_NO_DETAIL;
    if (!t->has_detail || atf_detail_reader_get(&t->detail, ev->detail_seq, out) != ATF_OK)
        return ATF_E_CORRUPT;
    return out->header.index_seq == index_seq ? ATF_OK : ATF_E_CORRUPT;
}

ATFDEF atf_result atf_thread_reader_detail_of(const atf_thread_reader *t, uint64_t index_seq,
                                              atf_detail_event *out) {
    atf_index_event ev;
    atf_result rc = atf__thread_index_get(t, index_seq, &ev);
    return rc != ATF_OK ? rc : atf__thread_detail_named(t, index_seq, &ev, out);
}

/* The index event that detail record d (number detail_seq) names, checked back: read
 * through the reader's cache when `cached` (one thread), else without it. */
ATF__PRIVATE atf_result atf__thread_index_named(const atf_thread_reader *t, uint64_t detail_seq,
                                                const atf_detail_event *d, atf_index_event *out,
                                                int cached) {
    atf_result rc = cached ? atf_index_reader_get(&t->index, d->header.index_seq, out)
                           : atf__thread_index_get(t, d->header.index_seq, out);
    if (rc != ATF_OK) return ATF_E_CORRUPT;
    return out->detail_seq == detail_seq ? ATF_OK : ATF_E_CORRUPT;
}

ATFDEF atf_result atf_thread_reader_index_of(const atf_thread_reader *t, uint64_t detail_seq,
                                             atf_index_event *out) {
    atf_detail_event d;
    atf_result rc = atf_detail_reader_get(&t->detail, detail_seq, &d);
    return rc != ATF_OK ? rc : atf__thread_index_named(t, detail_seq, &d, out, 0);
}

ATFDEF atf_result atf_thread_reader_verify_links(atf_thread_reader *t) {
    uint64_t i;
    atf_index_event ev;
    atf_detail_event d;
    for (i = 0; i < t->index.event_count; i++) {
        atf_result rc;
        atf_index_reader_get(&t->index, i, &ev); /* in order: through the cache */
        if (ev.detail_seq == ATF_NO_DETAIL) continue;
        rc = atf__thread_detail_named(t, i, &ev, &d);
        if (rc == ATF_OK) continue;
        if (!t->has_detail || ev.detail_seq >= t->detail.event_count)
            return atf__error_set_values(&t->error, rc, t->index.path,
                                         t->index.header.events_offset + i * ATF_INDEX_EVENT_SIZE,
                                         "detail_seq names no detail record (expected: count)",
                                         t->has_detail ? t->detail.event_count : 0, ev.detail_seq);
        return atf__error_set_values(&t->error, rc, t->index.path,
                                     t->index.header.events_offset + i * ATF_INDEX_EVENT_SIZE,
                                     "its detail record names another index event",
                                     i, d.header.index_seq);
    }
    /* Every forward link checked above is also a backward one; what is left are detail
     * records that no index event names. */
    for (i = 0; t->has_detail && i < t->detail.event_count; i++) {
        atf_result rc = atf_detail_reader_get(&t->detail, i, &d);
        if (rc == ATF_OK) rc = atf__thread_index_named(t, i, &d, &ev, 1);
        if (rc != ATF_OK) {
            return atf__error_set_values(&t->error, rc, t->detail.path, d.offset,
                                         "index event named by this record does not name it back",
                                         i, d.header.index_seq < t->index.event_count
                                                ? (atf_index_reader_get(&t->index, d.header.index_seq, &ev),
                                                   ev.detail_seq)
                                                : d.header.index_seq);
        }
    }
    return ATF_OK;
}


/* ---- 11.1 recovery ------------------------------------------------------------ >>recovery */
/* Finalizing in place what a crash left, as the writer's close would have. A
 * plan is made from what the readers counted while their images are open (records kept,
 * links to repair, the CRC over the kept bytes with the repairs laid over them, footer and
 * header bytes through the writer's encoders); it is carried out after they are closed
 * (a mapped file cannot be cut on every OS): cut, links, footer, header, sync. */

ATFDEF const char *atf_recover_action_str(atf_recover_action a) {
    switch (a) {
    case ATF_RECOVER_NOTHING: return "nothing to do";
    case ATF_RECOVER_FINALIZE: return "finalize";
    case ATF_RECOVER_FILL_CRC: return "fill crc";
    case ATF_RECOVER_CUT: return "cut";
    case ATF_RECOVER_REMOVE: return "remove";
    case ATF_RECOVER_FAIL: return "fail";
    default: return "unknown";
    }
}

ATFDEF const char *atf_recover_kind_str(atf_recover_kind k) {
    switch (k) {
    case ATF_RECOVER_INDEX: return "index";
    case ATF_RECOVER_DETAIL: return "detail";
    case ATF_RECOVER_GAPS: return "gaps";
    case ATF_RECOVER_TMP: return "tmp";
    case ATF_RECOVER_UNBORN_DIR: return "unborn thread directory";
    case ATF_RECOVER_MANIFEST: return "manifest";
    case ATF_RECOVER_PAUSES: return "pauses";
    default: return "unknown";
    }
}

ATFDEF void atf_recover_report_deinit(atf_recover_report *r) {
    if (!r) return;
    ATF_FREE(r->items);
    memset(r, 0, sizeof *r);
}

/* A link to write into index event `seq`: a detail_seq, or ATF_NO_DETAIL to clear it. */
typedef struct atf__recover_patch { uint64_t seq, detail_seq; } atf__recover_patch;

/* What will be done to one file. Planned while its reader is open (`events` points into
 * the reader's image), carried out after. */
typedef struct atf__recover_plan {
    atf_recover_item item;
    int finalized;               /* found finalized by the readers */
    int remove;                  /* detail: no record left, the file goes */
    const uint8_t *image;        /* the reader's image of the file */
    const uint8_t *events;       /* its events section (detail) */
    const atf_index_reader *index;   /* index: the reader, open while the plan is made */
    uint64_t file_size;
    atf__final fin;              /* records kept: fin.count, fin.bytes, ranges */
    atf_index_header index_header;
    atf_detail_header detail_header;
    atf_index_footer index_footer;   /* finalized files: the footer found */
    atf_detail_footer detail_footer;
    atf__recover_patch *patches; /* index: sorted by seq */
    size_t patch_count, patch_cap;
    uint8_t footer[ATF_FOOTER_SIZE], header[ATF_HEADER_SIZE];
    int packed;                  /* a packed index file: */
    uint32_t block_events;
    uint64_t packed_end;         /*   where its whole blocks end */
    uint64_t lane_at;            /*   finalize: the file is cut here, then gets `lane` */
    uint8_t *lane;               /*   the blocks re-coded from lane_at on, and the table */
    size_t lane_len;
} atf__recover_plan;

ATF__PRIVATE void atf__recover_plan_free(atf__recover_plan *p) {
    ATF_FREE(p->patches);
    ATF_FREE(p->lane);
    p->lane = NULL;
    p->patches = NULL;
    p->patch_count = p->patch_cap = 0;
}

ATF__PRIVATE atf_result atf__recover_patch_add(atf__recover_plan *p, uint64_t seq,
                                               uint64_t detail_seq, atf_error *e) {
    if (!atf__grow((void **)&p->patches, &p->patch_cap, p->patch_count, sizeof *p->patches))
        return atf__error_set(e, ATF_E_NOMEM, p->item.path, 0, "link repair list");
    p->patches[p->patch_count].seq = seq;
    p->patches[p->patch_count++].detail_seq = detail_seq;
    return ATF_OK;
}

ATF__PRIVATE int atf__recover_patch_cmp(const void *a, const void *b) {
    uint64_t x = ((const atf__recover_patch *)a)->seq, y = ((const atf__recover_patch *)b)->seq;
    return x < y ? -1 : x > y;
}

ATF__PRIVATE void atf__recover_plan_index(atf__recover_plan *p, const atf_index_reader *r) {
    atf_index_event ev;
    memset(p, 0, sizeof *p);
    atf__copy_str(p->item.path, sizeof p->item.path, r->path);
    p->item.kind = ATF_RECOVER_INDEX;
    p->item.found = r->counted;
    p->item.layout = r->layout;
    p->finalized = r->counted == ATF_COUNT_FINALIZED;
    p->image = r->image.data;
    p->index = r;
    p->file_size = r->image.size;
    p->index_header = r->header;
    p->index_footer = r->footer;
    p->fin.events_offset = r->header.events_offset;
    p->fin.count = r->event_count;
    p->fin.bytes = r->event_count * ATF_INDEX_EVENT_SIZE;
    p->packed = r->packed;
    p->block_events = r->block_events;
    p->packed_end = r->packed_end;
    if (r->event_count) {
        atf_index_reader_get(r, 0, &ev);
        p->fin.time_start = ev.timestamp_ns;
        atf_index_reader_get(r, r->event_count - 1, &ev);
        p->fin.time_end = ev.timestamp_ns;
    }
}

/* Keeps the first `keep` records of the detail file. */
ATF__PRIVATE void atf__recover_detail_keep(atf__recover_plan *p, const atf_detail_reader *r,
                                           uint64_t keep) {
    atf_detail_event d;
    memset(&d, 0, sizeof d);
    p->item.records_cut = r->event_count - keep;
    p->fin.count = keep;
    p->fin.bytes = p->fin.time_start = p->fin.time_end = p->fin.seq_first = p->fin.seq_last = 0;
    if (keep) {
        atf_detail_reader_get(r, keep - 1, &d);
        p->fin.bytes = d.offset + d.header.total_length - r->header.events_offset;
        p->fin.time_end = d.header.timestamp_ns;
        p->fin.seq_last = d.header.index_seq;
        atf_detail_reader_get(r, 0, &d);
        p->fin.time_start = d.header.timestamp_ns;
        p->fin.seq_first = d.header.index_seq;
    }
}

ATF__PRIVATE void atf__recover_plan_detail(atf__recover_plan *p, const atf_detail_reader *r) {
    memset(p, 0, sizeof *p);
    atf__copy_str(p->item.path, sizeof p->item.path, r->path);
    p->item.kind = ATF_RECOVER_DETAIL;
    p->item.found = r->counted;
    p->item.layout = r->layout;
    p->finalized = r->counted == ATF_COUNT_FINALIZED;
    p->image = r->image.data;
    p->events = r->image.data + r->header.events_offset;
    p->file_size = r->image.size;
    p->detail_header = r->header;
    p->detail_footer = r->footer;
    p->fin.events_offset = r->header.events_offset;
    atf__recover_detail_keep(p, r, r->event_count);
}

/* A footer's checksum is checked before its file is rewritten: a mismatch is damage, not
 * a crash, and recovering would hide it. */
ATF__PRIVATE atf_result atf__recover_check_index(atf_index_reader *r, atf_error *e) {
    if (r->packed) { /* every block decodes; a finalized file's blocks are all whole */
        atf__index_crc(r, 0, 0, r->event_count);
        if (r->crc_state == ATF_CRC_MISMATCH || r->cache->damaged) {
            if (r->error.code == ATF_OK)
                atf__error_set(&r->error, ATF_E_CRC, r->path, r->header.events_offset,
                               "a packed block whose CRC matches does not decode");
            atf__error_adopt(e, &r->error);
            return e->code;
        }
    }
    if (!r->has_footer || r->counted == ATF_COUNT_FOOTER_MISMATCH) return ATF_OK;
    if (atf_index_reader_verify_crc(r) == ATF_OK) return ATF_OK;
    atf__error_adopt(e, &r->error);
    return e->code;
}

ATF__PRIVATE atf_result atf__recover_check_detail(atf_detail_reader *r, atf_error *e) {
    if (!r->has_footer || r->counted == ATF_COUNT_FOOTER_MISMATCH) return ATF_OK;
    if (atf_detail_reader_verify_crc(r) == ATF_OK) return ATF_OK;
    atf__error_adopt(e, &r->error);
    return e->code;
}

/* Plans the link repairs of a thread: trailing detail records whose index event is not in
 * index.atf are cut; index events naming a detail record not in detail.atf lose the link;
 * a detail record whose index event has no link (a windowed link not patched in yet) gets
 * it back when their timestamps agree. Anything else is damage. */
ATF__PRIVATE atf_result atf__recover_plan_links(atf__recover_plan *ip, const atf_index_reader *ir,
                                                atf__recover_plan *dp, const atf_detail_reader *dr,
                                                atf_error *e) {
    uint64_t n_index = ir->event_count, n_detail = dr ? dr->event_count : 0, i;
    atf_index_event ev;
    atf_detail_event d;
    while (n_detail > 0) {
        atf_detail_reader_get(dr, n_detail - 1, &d);
        if (d.header.index_seq < n_index) break;
        n_detail--;
    }
    if (dr && n_detail != dr->event_count) atf__recover_detail_keep(dp, dr, n_detail);
    for (i = 0; i < n_index; i++) {
        atf_index_reader_get(ir, i, &ev);
        if (ev.detail_seq == ATF_NO_DETAIL) continue;
        if (ev.detail_seq >= n_detail) {
            if (atf__recover_patch_add(ip, i, ATF_NO_DETAIL, e) != ATF_OK) return e->code;
            ip->item.links_cleared++;
            continue;
        }
        atf_detail_reader_get(dr, ev.detail_seq, &d);
        if (d.header.index_seq != i)
            return atf__error_set_values(e, ATF_E_CORRUPT, ir->path,
                                         ir->header.events_offset + i * ATF_INDEX_EVENT_SIZE,
                                         "its detail record names another index event", i,
                                         d.header.index_seq);
    }
    for (i = 0; i < n_detail; i++) {
        uint64_t s;
        atf_detail_reader_get(dr, i, &d);
        s = d.header.index_seq;
        if (s >= n_index)
            return atf__error_set_values(e, ATF_E_CORRUPT, dr->path, d.offset,
                                         "detail record before the last names an index event "
                                         "past the end (expected: count)", n_index, s);
        atf_index_reader_get(ir, s, &ev);
        if (ev.detail_seq == i) continue;
        if (ev.detail_seq != ATF_NO_DETAIL)
            return atf__error_set_values(e, ATF_E_CORRUPT, dr->path, d.offset,
                                         "index event named by this record names another "
                                         "record", i, ev.detail_seq);
        if (ev.timestamp_ns != d.header.timestamp_ns)
            return atf__error_set_values(e, ATF_E_CORRUPT, dr->path, d.offset,
                                         "record and the unlinked index event it names differ "
                                         "in timestamp", ev.timestamp_ns, d.header.timestamp_ns);
        if (atf__recover_patch_add(ip, s, i, e) != ATF_OK) return e->code;
        ip->item.links_restored++;
    }
    if (ip->patch_count)
        qsort(ip->patches, ip->patch_count, sizeof *ip->patches, atf__recover_patch_cmp);
    return ATF_OK;
}

/* CRC32-C of bytes [at, to) of r's records (a packed file's as layout 1), continuing crc. */
ATF__PRIVATE uint32_t atf__index_crc_bytes(const atf_index_reader *r, uint32_t crc, uint64_t at,
                                           uint64_t to) {
    while (at < to) {
        uint64_t seq = at / ATF_INDEX_EVENT_SIZE, off = at % ATF_INDEX_EVENT_SIZE, n;
        if (off == 0 && to - at >= ATF_INDEX_EVENT_SIZE) { /* whole records */
            n = (to - at) / ATF_INDEX_EVENT_SIZE;
            crc = atf__index_crc(r, crc, seq, seq + n);
            at += n * ATF_INDEX_EVENT_SIZE;
        } else { /* the rest of one record */
            n = ATF_INDEX_EVENT_SIZE - off < to - at ? ATF_INDEX_EVENT_SIZE - off : to - at;
            crc = atf_crc32c_update(crc, atf__index_record(r, seq) + off, (size_t)n);
            at += n;
        }
    }
    return crc;
}

/* CRC32-C of the kept events section with the planned links laid over it: what the file
 * holds once they are written (a dry run computes the same figure). */
ATF__PRIVATE uint32_t atf__recover_crc(const atf__recover_plan *p) {
    size_t width, field = atf__link_field((uint32_t)p->item.layout, &width), i;
    uint64_t at = 0;
    uint32_t crc = 0;
    for (i = 0; i < p->patch_count; i++) {
        uint64_t to = p->patches[i].seq * ATF_INDEX_EVENT_SIZE + field;
        uint8_t link[8];
        atf__link_encode(link, width, p->patches[i].detail_seq);
        crc = atf__index_crc_bytes(p->index, crc, at, to);
        crc = atf_crc32c_update(crc, link, width);
        at = to + width;
    }
    if (p->index) return atf__index_crc_bytes(p->index, crc, at, p->fin.bytes);
    return atf_crc32c_update(crc, p->events + at, (size_t)(p->fin.bytes - at));
}

/* The events of block k of a packed plan, links repaired, into `out`: its event count. */
ATF__PRIVATE uint32_t atf__recover_block_events(const atf__recover_plan *p, uint64_t k,
                                                uint8_t *out, size_t *patch) {
    uint64_t first = k * p->block_events, left = p->fin.count - first;
    uint32_t n = left < p->block_events ? (uint32_t)left : p->block_events;
    size_t width, field = atf__link_field(ATF_LAYOUT_1, &width);
    memcpy(out, atf__index_record(p->index, first), (size_t)n * ATF_INDEX_EVENT_SIZE); /* a block */
    for (; *patch < p->patch_count && p->patches[*patch].seq < first + n; ++*patch)
        atf__link_encode(out + (p->patches[*patch].seq - first) * ATF_INDEX_EVENT_SIZE + field,
                         width, p->patches[*patch].detail_seq);
    return n;
}

/* What finalizing a packed file writes from lane_at on: the whole blocks stay where they
 * are up to the first one holding a repaired link; from there the blocks are coded again
 * (as the writer codes them), then the table follows (and, when a crash came before the
 * lane header, the lane header first). *end receives the footer's offset. 0 when memory
 * ran out. */
ATF__PRIVATE int atf__recover_pack_lane(atf__recover_plan *p, uint64_t *end) {
    uint64_t B = p->block_events, blocks = (p->fin.count + B - 1) / B, keep, k, at;
    uint64_t first = p->fin.events_offset + ATF_PACKED_LANE_SIZE;
    size_t len = 0, patch = 0, cap;
    uint8_t *events = NULL;
    keep = p->patch_count ? p->patches[0].seq / B : blocks;
    /* after the kept blocks (where the reader found the next), or the lane header */
    p->lane_at = keep < blocks ? p->index->block_at[keep] : p->packed_end;
    if (p->packed_end < first) p->lane_at = p->fin.events_offset;
    if ((blocks - keep) > (SIZE_MAX / 2) / (ATF_PACKED_BLOCK_HEADER_SIZE + B * ATF_PACKED_EVENT_MAX) ||
        blocks > (SIZE_MAX / 4) / 8)
        return 0; /* more than this machine can hold */
    cap = (size_t)(ATF_PACKED_LANE_SIZE + (blocks - keep) * (ATF_PACKED_BLOCK_HEADER_SIZE +
                                                            B * ATF_PACKED_EVENT_MAX) + blocks * 8);
    p->lane = (uint8_t *)ATF_MALLOC(cap);
    events = (uint8_t *)ATF_MALLOC((size_t)B * ATF_INDEX_EVENT_SIZE);
    if (!p->lane || !events) {
        ATF_FREE(events);
        return 0;
    }
    if (p->lane_at == p->fin.events_offset) {
        atf__packed_lane_encode(p->lane, (uint32_t)B);
        len = ATF_PACKED_LANE_SIZE;
    }
    while (patch < p->patch_count && p->patches[patch].seq < keep * B) patch++;
    for (k = keep; k < blocks; k++) {
        uint8_t *h = p->lane + len;
        uint32_t n = atf__recover_block_events(p, k, events, &patch);
        size_t plen = atf_packed_encode(events, n, p->index_header.thread_id,
                                        h + ATF_PACKED_BLOCK_HEADER_SIZE);
        atf__packed_block_header(h, n, (uint32_t)plen, atf_crc32c(h + ATF_PACKED_BLOCK_HEADER_SIZE, plen));
        len += ATF_PACKED_BLOCK_HEADER_SIZE + plen;
    }
    for (k = 0, at = first; k < blocks; k++) { /* the table: every block, kept or re-coded */
        const uint8_t *h = k < keep ? p->image + at : p->lane + (at - p->lane_at);
        atf__store_le64(p->lane + len + k * 8, at);
        at += ATF_PACKED_BLOCK_HEADER_SIZE + atf__load_le32(h + 4);
    }
    len += (size_t)blocks * 8;
    p->lane_len = len;
    *end = p->lane_at + len;
    ATF_FREE(events);
    return 1;
}

/* Decides the action and, while the reader's image is still open, computes the CRC and
 * the footer and header bytes. */
ATF__PRIVATE void atf__recover_prepare(atf__recover_plan *p) {
    int is_detail = p->item.kind == ATF_RECOVER_DETAIL;
    atf_recover_item *it = &p->item;
    uint64_t end = p->fin.events_offset + p->fin.bytes;
    if (p->packed) end = p->finalized ? p->index_header.footer_offset : p->packed_end;
    it->records = p->fin.count;
    it->footer_offset = end;
    if (p->remove) {
        it->action = ATF_RECOVER_REMOVE;
        return;
    }
    if (p->finalized && !p->patch_count && !it->records_cut) {
        uint32_t stored = is_detail ? p->detail_footer.checksum : p->index_footer.checksum;
        it->crc = stored;
        it->action = ATF_RECOVER_NOTHING;
        if (stored != 0 || p->fin.bytes == 0) return;
        it->action = ATF_RECOVER_FILL_CRC;
        it->crc = atf__recover_crc(p);
        if (is_detail) {
            atf_detail_footer f = p->detail_footer;
            f.checksum = it->crc;
            atf_detail_footer_encode(&f, p->footer);
        } else {
            atf_index_footer f = p->index_footer;
            f.checksum = it->crc;
            atf_index_footer_encode(&f, p->footer);
        }
        return;
    }
    it->action = ATF_RECOVER_FINALIZE;
    if (p->packed && !atf__recover_pack_lane(p, &end)) {
        it->action = ATF_RECOVER_FAIL;
        return;
    }
    it->footer_offset = p->fin.footer_offset = end;
    it->bytes_cut = p->file_size > end ? p->file_size - end : 0;
    if (p->packed) /* what followed the last whole block (a table and footer come anew) */
        it->bytes_cut = p->file_size > p->packed_end ? p->file_size - p->packed_end : 0;
    p->fin.crc = it->crc = atf__recover_crc(p);
    if (is_detail) atf__detail_final_encode(p->detail_header, &p->fin, p->footer, p->header);
    else atf__index_final_encode(p->index_header, &p->fin, p->footer, p->header);
    /* Already what finalizing writes, though the readers do not call it finalized: an
     * empty detail file, whose final header is all zero counts like the placeholder. */
    if (!p->patch_count && !it->records_cut && p->file_size == end + ATF_FOOTER_SIZE &&
        memcmp(p->image, p->header, ATF_HEADER_SIZE) == 0 &&
        memcmp(p->image + end, p->footer, ATF_FOOTER_SIZE) == 0) {
        it->action = ATF_RECOVER_NOTHING;
        it->bytes_cut = 0;
    }
}

ATF__PRIVATE atf_result atf__recover_io_error(atf_error *e, const char *path, uint64_t offset,
                                              const char *what) {
    int code = atf__last_os_error();
    if (e->code != ATF_OK) return e->code;
    atf__error_set_errno(e, ATF_E_IO, path, what, code);
    e->offset = offset;
    return ATF_E_IO;
}

/* Removes a file; ATF_OK when it is gone. */
ATF__PRIVATE atf_result atf__recover_remove(const char *path, atf_error *e) {
    atf__file_remove(path);
    if (!atf__path_exists(path)) return ATF_OK;
    return atf__recover_io_error(e, path, 0, "remove");
}

/* Carries out a prepared plan, in the writer's order: cut, links, footer, header, sync. */
ATF__PRIVATE atf_result atf__recover_apply(const atf__recover_plan *p, const atf_recover_options *opt,
                                           atf_error *e) {
    const atf_recover_item *it = &p->item;
    atf_result rc = ATF_OK;
    size_t width, field = atf__link_field((uint32_t)it->layout, &width), i;
    atf__fd fd;
    if (it->action == ATF_RECOVER_FAIL) /* planned: memory ran out */
        return atf__error_set(e, ATF_E_NOMEM, it->path, 0, "packed blocks to write");
    if (opt->dry_run || it->action == ATF_RECOVER_NOTHING) return ATF_OK;
    if (it->action == ATF_RECOVER_REMOVE) return atf__recover_remove(it->path, e);
    fd = atf__fd_open_rw(it->path);
    if (fd == ATF__FD_NONE) return atf__recover_io_error(e, it->path, 0, "open for writing");
    if (it->action == ATF_RECOVER_FILL_CRC) {
        if (atf__fd_pwrite(fd, p->footer, ATF_FOOTER_SIZE, it->footer_offset, NULL) != 0)
            rc = atf__recover_io_error(e, it->path, it->footer_offset, "write footer");
    } else if (p->packed) {
        if (atf__fd_truncate(fd, p->lane_at) != 0)
            rc = atf__recover_io_error(e, it->path, p->lane_at, "cut after the last whole block");
        else if (atf__fd_pwrite(fd, p->lane, p->lane_len, p->lane_at, NULL) != 0)
            rc = atf__recover_io_error(e, it->path, p->lane_at, "write blocks and table");
        if (rc == ATF_OK) {
            int failed = atf__final_write(fd, p->footer, it->footer_offset, p->header);
            if (failed)
                rc = atf__recover_io_error(e, it->path, failed == 1 ? it->footer_offset : 0,
                                           failed == 1 ? "write footer" : "rewrite header");
        }
    } else {
        if (atf__fd_truncate(fd, it->footer_offset) != 0)
            rc = atf__recover_io_error(e, it->path, it->footer_offset, "cut after the last record");
        for (i = 0; rc == ATF_OK && i < p->patch_count; i++) {
            uint8_t link[8];
            uint64_t at = p->fin.events_offset + p->patches[i].seq * ATF_INDEX_EVENT_SIZE + field;
            atf__link_encode(link, width, p->patches[i].detail_seq);
            if (atf__fd_pwrite(fd, link, width, at, NULL) != 0)
                rc = atf__recover_io_error(e, it->path, at, "write link");
        }
        if (rc == ATF_OK) {
            int failed = atf__final_write(fd, p->footer, it->footer_offset, p->header);
            if (failed)
                rc = atf__recover_io_error(e, it->path, failed == 1 ? it->footer_offset : 0,
                                           failed == 1 ? "write footer" : "rewrite header");
        }
    }
    if (rc == ATF_OK && !opt->no_sync && atf__fd_sync(fd) != 0)
        rc = atf__recover_io_error(e, it->path, 0, "fsync");
    atf__fd_close(fd);
    return rc;
}

/* Appends a copy of `item` to the report; a failed item's error becomes the report's
 * first error when it has none. */
ATF__PRIVATE atf_result atf__recover_report_add(atf_recover_report *r, const atf_recover_item *item) {
    if (!atf__grow((void **)&r->items, &r->item_cap, r->item_count, sizeof *r->items))
        return atf__error_set(&r->error, ATF_E_NOMEM, item->path, 0, "recovery report");
    r->items[r->item_count++] = *item;
    if (item->action == ATF_RECOVER_FAIL) {
        r->failed++;
        atf__error_adopt(&r->error, &item->error);
    } else if (item->action != ATF_RECOVER_NOTHING) {
        r->changed++;
    }
    return ATF_OK;
}

/* Records that `path` (of `kind`) could not be recovered, and why. */
ATF__PRIVATE void atf__recover_report_fail(atf_recover_report *r, const char *path,
                                           atf_recover_kind kind, const atf_error *e) {
    atf_recover_item it;
    memset(&it, 0, sizeof it);
    atf__copy_str(it.path, sizeof it.path, path);
    it.kind = kind;
    it.action = ATF_RECOVER_FAIL;
    it.error = *e;
    if (it.error.code == ATF_OK) it.error.code = ATF_E_IO;
    atf__recover_report_add(r, &it);
}

/* Carries out a plan and reports it; ATF_OK or the failure (also in the report). */
ATF__PRIVATE atf_result atf__recover_run(atf_recover_report *r, atf__recover_plan *p,
                                         const atf_recover_options *opt) {
    atf_error e;
    memset(&e, 0, sizeof e);
    if (atf__recover_apply(p, opt, &e) != ATF_OK) {
        atf__recover_report_fail(r, p->item.path, p->item.kind, &e);
        return e.code;
    }
    return atf__recover_report_add(r, &p->item);
}

/* ---- 11.2 recovery: threads and files ------------------------------------- >>recoverfiles */
/* A thread directory recovered as a whole (detail, then index with its links, the side
 * files' torn records, files left under a temporary name), a file given alone (told
 * apart by its magic), and a thread directory that never got its first file. */

/* A side file of a thread, gaps.atf or pauses.atf (`kind`), validated by the thread reader
 * `t`, which loaded its `records` whole records: its torn last record, if any, is cut; gap
 * records past the event count stay (readers place them at the end, as the writer's
 * finalize does). 0 when the file does not exist. */
ATF__PRIVATE int atf__recover_plan_side(atf__recover_plan *p, const char *path,
                                        atf_recover_kind kind, uint64_t records,
                                        const atf_thread_reader *t, atf_error *e) {
    atf__file_image img;
    atf_error map_error;
    memset(p, 0, sizeof *p);
    memset(&map_error, 0, sizeof map_error);
    atf__copy_str(p->item.path, sizeof p->item.path, path);
    p->item.kind = kind;
    if (atf__file_map(&img, path, 1, &map_error) != ATF_OK) {
        if (map_error.code == ATF_E_NOT_FOUND) return 0;
        atf__error_adopt(e, &map_error);
        return 1;
    }
    p->file_size = img.size;
    atf__file_unmap(&img);
    /* the only errors an opened thread keeps are its side files' (damaged) */
    if (t->error.code != ATF_OK && strcmp(t->error.path, path) == 0) {
        atf__error_adopt(e, &t->error);
        return 1;
    }
    p->item.records = records;
    p->item.footer_offset = 16 + records * 32;
    p->item.bytes_cut = p->file_size > p->item.footer_offset ? p->file_size - p->item.footer_offset : 0;
    p->item.action = p->item.bytes_cut ? ATF_RECOVER_CUT : ATF_RECOVER_NOTHING;
    return 1;
}

ATF__PRIVATE atf_result atf__recover_side_apply(const atf__recover_plan *p,
                                                const atf_recover_options *opt, atf_error *e) {
    atf__fd fd;
    atf_result rc = ATF_OK;
    if (opt->dry_run || p->item.action != ATF_RECOVER_CUT) return ATF_OK;
    fd = atf__fd_open_rw(p->item.path);
    if (fd == ATF__FD_NONE) return atf__recover_io_error(e, p->item.path, 0, "open for writing");
    if (atf__fd_truncate(fd, p->item.footer_offset) != 0)
        rc = atf__recover_io_error(e, p->item.path, p->item.footer_offset, "cut torn record");
    else if (!opt->no_sync && atf__fd_sync(fd) != 0)
        rc = atf__recover_io_error(e, p->item.path, 0, "fsync");
    atf__fd_close(fd);
    return rc;
}

/* Files the writer makes under a temporary name and renames once their header is whole:
 * left behind, they hold no record. */
static const char *const atf__recover_tmp_names[] = { "index.atf.tmp", "detail.atf.tmp",
                                                      "gaps.atf.tmp", "pauses.atf.tmp" };

ATF__PRIVATE void atf__recover_tmp_leftovers(atf_recover_report *r, const char *dir,
                                             const atf_recover_options *opt) {
    size_t i;
    for (i = 0; i < sizeof atf__recover_tmp_names / sizeof atf__recover_tmp_names[0]; i++) {
        atf__recover_plan p;
        memset(&p, 0, sizeof p);
        if (atf__path_join(p.item.path, sizeof p.item.path, dir, atf__recover_tmp_names[i]) != ATF_OK ||
            !atf__path_exists(p.item.path))
            continue;
        p.item.kind = ATF_RECOVER_TMP;
        p.item.action = ATF_RECOVER_REMOVE;
        atf__recover_run(r, &p, opt);
    }
}

ATF__PRIVATE atf_recover_options atf__recover_opts(const atf_recover_options *opt) {
    atf_recover_options o;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    return o;
}

/* The plans of one thread directory, made with its readers open. */
typedef struct atf__recover_thread {
    atf__recover_plan index, detail, gaps, pauses;
    int has_detail, has_gaps, has_pauses;
} atf__recover_thread;

ATF__PRIVATE atf_result atf__recover_thread_plan(atf__recover_thread *th, atf_thread_reader *t,
                                                 const char *gaps_path, const char *pauses_path,
                                                 atf_error *e) {
    atf__recover_plan *ip = &th->index, *dp = &th->detail;
    th->has_detail = t->has_detail;
    atf__recover_plan_index(ip, &t->index);
    if (th->has_detail) atf__recover_plan_detail(dp, &t->detail);
    if (atf__recover_check_index(&t->index, e) != ATF_OK) return e->code;
    if (th->has_detail && atf__recover_check_detail(&t->detail, e) != ATF_OK) return e->code;
    th->has_gaps = atf__recover_plan_side(&th->gaps, gaps_path, ATF_RECOVER_GAPS, t->gap_count, t, e);
    if (e->code != ATF_OK) return e->code;
    th->has_pauses = atf__recover_plan_side(&th->pauses, pauses_path, ATF_RECOVER_PAUSES,
                                            t->pause_count, t, e);
    if (e->code != ATF_OK) return e->code;
    if (atf__recover_plan_links(ip, &t->index, dp, th->has_detail ? &t->detail : NULL, e) != ATF_OK)
        return e->code;
    if (ip->finalized && ip->patch_count)
        return atf__error_set_values(e, ATF_E_CORRUPT, ip->item.path,
                                     ip->fin.events_offset + ip->patches[0].seq * ATF_INDEX_EVENT_SIZE,
                                     "finalized index.atf has broken links: not a crash, not "
                                     "changed (links to repair)", 0, ip->patch_count);
    if (th->has_detail && dp->finalized && dp->item.records_cut)
        return atf__error_set_values(e, ATF_E_CORRUPT, dp->item.path,
                                     dp->fin.events_offset + dp->fin.bytes,
                                     "finalized detail.atf has records past the last index "
                                     "event: not a crash, not changed (records)", 0,
                                     dp->item.records_cut);
    dp->remove = th->has_detail && dp->fin.count == 0 && !dp->finalized;
    if (!ip->finalized) {
        ip->index_header.flags &= ~ATF_INDEX_FLAG_HAS_DETAIL_FILE;
        if (th->has_detail && dp->fin.count) ip->index_header.flags |= ATF_INDEX_FLAG_HAS_DETAIL_FILE;
    }
    atf__recover_prepare(ip);
    if (th->has_detail) atf__recover_prepare(dp);
    return ATF_OK;
}

/* Kind of the file of a thread directory that `e` names (for the failure's item). */
ATF__PRIVATE atf_recover_kind atf__recover_kind_of(const atf_error *e, const char *detail_path,
                                                   const char *gaps_path, const char *pauses_path) {
    if (strcmp(e->path, detail_path) == 0) return ATF_RECOVER_DETAIL;
    if (strcmp(e->path, gaps_path) == 0) return ATF_RECOVER_GAPS;
    if (strcmp(e->path, pauses_path) == 0) return ATF_RECOVER_PAUSES;
    return ATF_RECOVER_INDEX;
}

/* Cuts a side file's torn last record as planned, and says so in the report. */
ATF__PRIVATE atf_result atf__recover_side_run(atf_recover_report *r, atf__recover_plan *p,
                                              const atf_recover_options *opt) {
    atf_error e;
    memset(&e, 0, sizeof e);
    if (atf__recover_side_apply(p, opt, &e) != ATF_OK) {
        atf__recover_report_fail(r, p->item.path, p->item.kind, &e);
        return e.code;
    }
    return atf__recover_report_add(r, &p->item);
}

ATF__PRIVATE atf_result atf__recover_thread_dir(atf_recover_report *r, const char *dir,
                                                const atf_recover_options *opt) {
    char ipath[1024], dpath[1024], gpath[1024], ppath[1024];
    atf__recover_thread th;
    atf_thread_reader t;
    atf_error e;
    atf_result rc;
    memset(&th, 0, sizeof th);
    memset(&e, 0, sizeof e);
    if (atf__path_join(ipath, sizeof ipath, dir, "index.atf") != ATF_OK ||
        atf__path_join(dpath, sizeof dpath, dir, "detail.atf") != ATF_OK ||
        atf__path_join(gpath, sizeof gpath, dir, "gaps.atf") != ATF_OK ||
        atf__path_join(ppath, sizeof ppath, dir, "pauses.atf") != ATF_OK) {
        atf__error_set(&e, ATF_E_ARG, dir, 0, "directory path too long");
        atf__recover_report_fail(r, dir, ATF_RECOVER_INDEX, &e);
        return e.code;
    }
    rc = atf_thread_reader_open(&t, dir, NULL);
    if (rc != ATF_OK) {
        atf__error_adopt(&e, &t.error);
        atf__recover_report_fail(r, e.path[0] ? e.path : ipath,
                                 atf__recover_kind_of(&e, dpath, gpath, ppath), &e);
        return e.code;
    }
    rc = atf__recover_thread_plan(&th, &t, gpath, ppath, &e);
    atf_thread_reader_close(&t);
    if (rc != ATF_OK) {
        atf__recover_report_fail(r, e.path, atf__recover_kind_of(&e, dpath, gpath, ppath), &e);
    } else {
        /* detail first: a crash during recovery leaves a state recovery accepts again */
        if (th.has_detail) rc = atf__recover_run(r, &th.detail, opt);
        if (rc == ATF_OK) rc = atf__recover_run(r, &th.index, opt);
        if (rc == ATF_OK && th.has_gaps) rc = atf__recover_side_run(r, &th.gaps, opt);
        if (rc == ATF_OK && th.has_pauses) rc = atf__recover_side_run(r, &th.pauses, opt);
        if (rc == ATF_OK) atf__recover_tmp_leftovers(r, dir, opt);
    }
    atf__recover_plan_free(&th.index);
    atf__recover_plan_free(&th.detail);
    return rc != ATF_OK ? rc : r->error.code;
}

ATFDEF atf_result atf_recover_thread_dir(const char *dir, const atf_recover_options *opt,
                                         atf_recover_report *out) {
    atf_recover_options o = atf__recover_opts(opt);
    ATF_ASSERT(out);
    memset(out, 0, sizeof *out);
    if (!dir) return atf__error_set(&out->error, ATF_E_ARG, "", 0, "NULL directory");
    atf__recover_thread_dir(out, dir, &o);
    return out->error.code;
}

/* Whether the sibling detail.atf of an index file exists. */
ATF__PRIVATE int atf__recover_has_sibling_detail(const char *index_path) {
    char path[1024];
    const char *slash = strrchr(index_path, '/'), *back = strrchr(index_path, '\\');
    size_t dir_len;
    if (back && (!slash || back > slash)) slash = back;
    dir_len = slash ? (size_t)(slash - index_path) + 1 : 0;
    if (dir_len + sizeof "detail.atf" > sizeof path) return 0;
    memcpy(path, index_path, dir_len);
    memcpy(path + dir_len, "detail.atf", sizeof "detail.atf");
    return atf__path_exists(path);
}

ATF__PRIVATE void atf__recover_lone_index(atf_recover_report *r, const char *path,
                                          const atf_recover_options *opt) {
    atf__recover_plan p;
    atf_index_reader ir;
    atf_error e;
    memset(&e, 0, sizeof e);
    if (atf_index_reader_open(&ir, path, NULL) != ATF_OK) {
        atf__recover_report_fail(r, path, ATF_RECOVER_INDEX, &ir.error);
        return;
    }
    atf__recover_plan_index(&p, &ir);
    if (atf__recover_check_index(&ir, &e) != ATF_OK) {
        atf_index_reader_close(&ir);
        atf__recover_report_fail(r, path, ATF_RECOVER_INDEX, &e);
        return;
    }
    if (!p.finalized && atf__recover_has_sibling_detail(path))
        p.index_header.flags |= ATF_INDEX_FLAG_HAS_DETAIL_FILE;
    atf__recover_prepare(&p);
    atf_index_reader_close(&ir);
    atf__recover_run(r, &p, opt);
    atf__recover_plan_free(&p);
}

ATF__PRIVATE void atf__recover_lone_detail(atf_recover_report *r, const char *path,
                                           const atf_recover_options *opt) {
    atf__recover_plan p;
    atf_detail_reader dr;
    atf_error e;
    memset(&e, 0, sizeof e);
    if (atf_detail_reader_open(&dr, path, NULL) != ATF_OK) {
        atf__recover_report_fail(r, path, ATF_RECOVER_DETAIL, &dr.error);
        return;
    }
    atf__recover_plan_detail(&p, &dr);
    if (atf__recover_check_detail(&dr, &e) != ATF_OK) {
        atf_detail_reader_close(&dr);
        atf__recover_report_fail(r, path, ATF_RECOVER_DETAIL, &e);
        return;
    }
    atf__recover_prepare(&p);
    atf_detail_reader_close(&dr);
    atf__recover_run(r, &p, opt);
}

/* A side file given alone (gaps.atf or pauses.atf, `kind`). */
ATF__PRIVATE void atf__recover_lone_side(atf_recover_report *r, const char *path,
                                         atf_recover_kind kind, const atf_recover_options *opt) {
    atf__recover_plan p;
    atf_thread_reader t;
    atf_error e;
    memset(&t, 0, sizeof t);
    memset(&e, 0, sizeof e);
    if (kind == ATF_RECOVER_GAPS) atf__thread_reader_gaps(&t, path, NULL);
    else atf__thread_reader_pauses(&t, path, NULL);
    atf__recover_plan_side(&p, path, kind, kind == ATF_RECOVER_GAPS ? t.gap_count : t.pause_count,
                           &t, &e);
    atf_thread_reader_close(&t);
    if (e.code != ATF_OK) atf__recover_report_fail(r, path, kind, &e);
    else atf__recover_side_run(r, &p, opt);
}

ATFDEF atf_result atf_recover_file(const char *path, const atf_recover_options *opt,
                                   atf_recover_report *out) {
    atf_recover_options o = atf__recover_opts(opt);
    atf__file_image img;
    atf_error e;
    int kind = 0;
    ATF_ASSERT(out);
    memset(out, 0, sizeof *out);
    memset(&e, 0, sizeof e);
    if (!path) return atf__error_set(&out->error, ATF_E_ARG, "", 0, "NULL path");
    if (atf__file_map(&img, path, 0, &e) != ATF_OK) {
        atf__recover_report_fail(out, path, ATF_RECOVER_INDEX, &e);
        return out->error.code;
    }
    if (img.size >= 4) { /* which file it is, by its magic */
        if (memcmp(img.data, ATF_INDEX_MAGIC, 4) == 0) kind = ATF_RECOVER_INDEX;
        else if (memcmp(img.data, ATF_DETAIL_MAGIC, 4) == 0) kind = ATF_RECOVER_DETAIL;
        else if (memcmp(img.data, ATF_GAPS_MAGIC, 4) == 0) kind = ATF_RECOVER_GAPS;
        else if (memcmp(img.data, ATF_PAUSES_MAGIC, 4) == 0) kind = ATF_RECOVER_PAUSES;
    }
    atf__file_unmap(&img);
    if (kind == ATF_RECOVER_DETAIL) atf__recover_lone_detail(out, path, &o);
    else if (kind == ATF_RECOVER_GAPS || kind == ATF_RECOVER_PAUSES)
        atf__recover_lone_side(out, path, (atf_recover_kind)kind, &o);
    else atf__recover_lone_index(out, path, &o); /* the index reader says what is wrong */
    return out->error.code;
}

/* A thread directory without index.atf: the writer was stopped between making the
 * directory and renaming its first file into place (index.atf.tmp, then rename), so no
 * event of that thread can be anywhere. When it holds nothing else, it goes; 0 when it
 * holds anything else (recovering it as a thread then says what is wrong). */
ATF__PRIVATE int atf__recover_unborn_dir(atf_recover_report *r, const char *dir,
                                         const atf_recover_options *opt) {
    atf__recover_plan p;
    atf_error e;
    int has_tmp = 0;
    if (atf__dir_holds_only(dir, "index.atf.tmp", &has_tmp) != 1) return 0;
    if (has_tmp) atf__recover_tmp_leftovers(r, dir, opt); /* its item comes first */
    memset(&p, 0, sizeof p);
    memset(&e, 0, sizeof e);
    atf__copy_str(p.item.path, sizeof p.item.path, dir);
    p.item.kind = ATF_RECOVER_UNBORN_DIR;
    p.item.action = ATF_RECOVER_REMOVE;
    if (!opt->dry_run && atf__dir_remove(dir) != 0) atf__recover_io_error(&e, dir, 0, "remove");
    if (e.code != ATF_OK) atf__recover_report_fail(r, dir, ATF_RECOVER_UNBORN_DIR, &e);
    else atf__recover_report_add(r, &p.item);
    return 1;
}

typedef struct atf__recover_slots {
    uint32_t *slots;
    size_t count, cap;
    int failed;
} atf__recover_slots;

ATF__PRIVATE void atf__recover_slot_found(void *ctx, uint32_t slot) {
    atf__recover_slots *l = (atf__recover_slots *)ctx;
    if (!atf__grow((void **)&l->slots, &l->cap, l->count, sizeof *l->slots)) {
        l->failed = 1;
        return;
    }
    l->slots[l->count++] = slot;
}

ATF__PRIVATE int atf__recover_slot_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- 11.3 recovered manifest ----------------------------------------- >>recoveredmanifest */
/* A manifest left "recording" is rewritten by the session writer's own encoder: the
 * session reader reads it, its metadata goes through the writer's calls into a session
 * that records nothing, and the threads' figures come from the recovered files. */

/* The ATF_STOP_* that atf_stop_reason_str names `str`; ATF_STOP_NONE for any other. */
ATF__PRIVATE uint32_t atf__stop_reason_code(const char *str) {
    uint32_t r;
    for (r = ATF_STOP_MAX_SIZE; r <= ATF_STOP_DISK_RESERVE; r++)
        if (strcmp(str, atf_stop_reason_str(r)) == 0) return r;
    return ATF_STOP_NONE;
}

/* A session holding the metadata a manifest gave (no directory made, no drain); NULL when
 * memory ran out. Free with atf__session_free. */
ATF__PRIVATE atf_session *atf__session_from_manifest(const atf_session_reader *r) {
    atf_session *s = (atf_session *)ATF_MALLOC(sizeof *s);
    atf_result rc = ATF_OK;
    size_t i;
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    atf__mutex_init(&s->lock);
    atf__mutex_init(&s->drain_lock);
    s->cfg.layout = r->layout;
    s->cfg.overflow = strcmp(r->overflow, "drop") == 0 ? ATF_OVERFLOW_DROP : ATF_OVERFLOW_BLOCK;
    s->attach_failures = r->attach_failures;
    s->cfg.max_bytes = r->max_bytes;
    s->cfg.keep_last_bytes = r->keep_last_bytes;
    s->cfg.keep_last_ns = r->keep_last_ns;
    s->cfg.max_duration_ns = r->max_duration_ns;
    s->cfg.min_duration_ns = r->min_duration_ns;
    s->bound.reserve = r->disk_reserve_bytes;
    s->bound.reason = atf__stop_reason_code(r->stopped);
    s->bound.stopped_ns = r->stopped_at_ns;
    if (r->cmdline) rc = atf_session_set_cmdline(s, r->cmdline);
    for (i = 0; rc == ATF_OK && i < r->module_count; i++) {
        const atf_session_module *m = &r->modules[i];
        rc = atf_session_add_module(s, (uint32_t)m->module_id, m->path, m->base_address, m->size);
        if (rc == ATF_OK && m->build_id[0])
            rc = atf_session_set_module_build_id(s, (uint32_t)m->module_id, m->build_id);
    }
    for (i = 0; rc == ATF_OK && i < r->symbol_count; i++) {
        const atf_session_symbol *y = &r->symbols[i];
        if (y->name) rc = atf_session_add_symbol(s, y->function_id, y->name);
        if (rc == ATF_OK && y->has_offset)
            rc = atf_session_add_function(s, y->function_id, y->module_id, y->offset);
    }
    for (i = 0; rc == ATF_OK && i < r->anchor_count; i++) {
        const atf_session_anchor *a = &r->anchors[i];
        rc = a->timescale > 0
                 ? atf_session_add_anchor_exact(s, a->name, a->host_ns, a->value, a->timescale)
                 : atf_session_add_anchor(s, a->name, a->host_ns, a->value_f, a->rate);
    }
    if (rc == ATF_OK) return s;
    atf__session_free(s);
    return NULL;
}

/* The events a thread's gaps of one reason account for. */
ATF__PRIVATE uint64_t atf__gaps_lost(const atf_thread_reader *tr, uint32_t reason) {
    uint64_t n = 0;
    size_t i;
    for (i = 0; i < tr->gap_count; i++)
        if (tr->gaps[i].reason == reason) n += tr->gaps[i].index_lost;
    return n;
}

/* A thread as the manifest is to list it: the counts of its files when they opened (what
 * recovery left), the manifest's own figures for everything the files cannot tell. The
 * events left out by choice before events that were written are in gaps.atf before them:
 * counted from there. */
ATF__PRIVATE void atf__recover_manifest_thread(const atf_session_thread *t, atf__manifest_thread *m) {
    atf_thread_stats *st = &m->st;
    memset(m, 0, sizeof *m);
    st->slot = t->slot;
    st->thread_id = t->os_thread_id;
    st->events_written = t->events_written;
    st->events_dropped = t->events_dropped;
    st->detail_written = t->detail_written;
    st->detail_dropped = t->detail_dropped;
    st->events_lost_io = t->events_lost_io;
    st->events_stopped = t->events_stopped;
    st->events_skipped = t->events_skipped;
    st->events_discarded = t->events_discarded;
    st->gaps = t->gaps;
    st->waits = t->waits;
    st->timeouts = t->timeouts;
    st->paused_ns = t->paused_ns;
    st->finalized = t->manifest_finalized;
    m->name = t->name;
    if (t->open_result != ATF_OK) return;
    st->events_written = t->reader.index.event_count;
    st->detail_written = t->reader.has_detail ? t->reader.detail.event_count : 0;
    st->gaps = t->reader.gap_count;
    st->events_skipped = atf__gaps_lost(&t->reader, ATF_GAP_SKIPPED);
    st->events_discarded = atf__gaps_lost(&t->reader, ATF_GAP_DISCARDED);
    st->finalized = t->reader.index.counted == ATF_COUNT_FINALIZED &&
                    (!t->reader.has_detail || t->reader.detail.counted == ATF_COUNT_FINALIZED);
    m->has_time = st->events_written != 0;
    m->time_start = t->time_min_ns;
    m->time_end = t->time_max_ns;
}

/* The rewritten manifest's text; 0 when memory ran out. */
ATF__PRIVATE int atf__recover_manifest_text(atf_session_reader *r, atf__text *t) {
    atf_session *s = atf__session_from_manifest(r);
    atf__manifest_thread *th = NULL;
    atf__manifest_facts f;
    size_t i, n = 0;
    int ok = 0;
    atf_session_reader_check_order(r, NULL); /* each thread's smallest and largest time */
    if (s && (!r->thread_count ||
              (th = (atf__manifest_thread *)ATF_MALLOC(r->thread_count * sizeof *th)) != NULL)) {
        for (i = 0; i < r->thread_count; i++) {
            const atf_session_thread *x = &r->threads[i];
            /* listed, but with no directory and no event written: its first file never
             * reached the disk (removed just now as unborn, or never made: a full disk) */
            if (x->missing && x->in_manifest && x->events_written == 0) continue;
            atf__recover_manifest_thread(x, &th[n++]);
        }
        memset(&f, 0, sizeof f);
        f.state = "recovered";
        f.pid = r->pid;
        f.clock_type = r->clock_type;
        f.arch = r->arch;
        f.os = r->os;
        f.error_line = r->recording_error;
        f.error_errno = (uint32_t)r->recording_errno;
        ok = atf__manifest_encode(s, &f, th, n, t);
    }
    ATF_FREE(th);
    if (s) atf__session_free(s);
    return ok;
}

/* Rewrites dir/manifest.json when a crash (or a close after an error) left it "recording"
 * (after the threads were recovered, so the files it counts are final). */
ATF__PRIVATE void atf__recover_manifest(atf_recover_report *out, const char *dir,
                                        const atf_recover_options *opt) {
    char path[1100];
    atf_session_reader r;
    atf__text t = {NULL, 0, 0, 0};
    atf_error e;
    if (atf_session_reader_open(&r, dir, NULL) != ATF_OK) return; /* the items say why */
    if ((r.manifest == ATF_MANIFEST_OK || r.manifest == ATF_MANIFEST_INCOMPLETE) &&
        strcmp(r.state, "recording") == 0) {
        memset(&e, 0, sizeof e);
        snprintf(path, sizeof path, "%s/manifest.json", dir);
        if (opt->dry_run) {
            out->manifest_rewritten = 1;
        } else if (!atf__recover_manifest_text(&r, &t)) {
            atf__error_set(&e, ATF_E_NOMEM, path, 0, "manifest text");
        } else if (atf__manifest_store(dir, &t, !opt->no_sync, 0, NULL, &e) == ATF_OK) {
            out->manifest_rewritten = 1;
        }
        if (e.code != ATF_OK) atf__recover_report_fail(out, path, ATF_RECOVER_MANIFEST, &e);
    }
    ATF_FREE(t.p);
    atf_session_reader_close(&r);
}

ATFDEF atf_result atf_recover_session_dir(const char *dir, const atf_recover_options *opt,
                                          atf_recover_report *out) {
    atf_recover_options o = atf__recover_opts(opt);
    atf__recover_slots l;
    atf_error e;
    size_t i;
    int scan;
    ATF_ASSERT(out);
    memset(out, 0, sizeof *out);
    memset(&l, 0, sizeof l);
    memset(&e, 0, sizeof e);
    if (!dir) return atf__error_set(&out->error, ATF_E_ARG, "", 0, "NULL directory");
    scan = atf_session_scan_threads(dir, atf__recover_slot_found, &l);
    if (scan != 0 || l.failed) {
        if (l.failed) atf__error_set(&e, ATF_E_NOMEM, dir, 0, "thread list");
        else atf__error_set_errno(&e, atf__path_exists(dir) ? ATF_E_IO : ATF_E_NOT_FOUND, dir,
                                  "read directory", scan);
        ATF_FREE(l.slots);
        atf__recover_report_fail(out, dir, ATF_RECOVER_INDEX, &e);
        return out->error.code;
    }
    if (l.count) qsort(l.slots, l.count, sizeof *l.slots, atf__recover_slot_cmp);
    for (i = 0; i < l.count; i++) {
        char tdir[1024], ipath[1040];
        snprintf(tdir, sizeof tdir, "%s/thread_%u", dir, l.slots[i]);
        snprintf(ipath, sizeof ipath, "%s/index.atf", tdir);
        if (!atf__path_exists(ipath) && atf__recover_unborn_dir(out, tdir, &o)) continue;
        atf__recover_thread_dir(out, tdir, &o);
    }
    ATF_FREE(l.slots);
    atf__recover_manifest(out, dir, &o);
    return out->error.code;
}

/* ---- 11.4 packing -------------------------------------------------------------- >>packing */

/* A converted file on its way: written in order under <path>.tmp. */
typedef struct atf__convert_out {
    atf__fd fd;
    uint64_t at;                 /* where the next bytes go */
    char path[1024], tmp[1040];
    atf_error *err;
} atf__convert_out;

ATF__PRIVATE atf_result atf__convert_open(atf__convert_out *o, const char *path, atf_error *err) {
    o->err = err;
    o->fd = ATF__FD_NONE;
    o->at = ATF_HEADER_SIZE; /* the header goes last, once its fields are known */
    if (strlen(path) >= sizeof o->path ||
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp", path) >= (int)sizeof o->tmp)
        return atf__error_set(err, ATF_E_ARG, path, 0, "path too long");
    atf__copy_str(o->path, sizeof o->path, path);
    o->fd = atf__fd_create(o->tmp);
    if (o->fd == ATF__FD_NONE)
        return atf__error_set_errno(err, ATF_E_IO, o->tmp, "create", atf__last_os_error());
    return ATF_OK;
}

ATF__PRIVATE atf_result atf__convert_put(atf__convert_out *o, const void *p, size_t n) {
    if (atf__fd_pwrite(o->fd, p, n, o->at, NULL) != 0)
        return atf__error_set_errno(o->err, ATF_E_IO, o->tmp, "write", atf__last_os_error());
    o->at += n;
    return ATF_OK;
}

/* Writes the header, syncs and renames the file into place; on `rc` != ATF_OK (or a
 * failure here) the temporary file goes instead. */
ATF__PRIVATE atf_result atf__convert_close(atf__convert_out *o, const atf_index_header *h,
                                           atf_result rc) {
    uint8_t header[ATF_HEADER_SIZE];
    atf_index_header_encode(h, header);
    if (rc == ATF_OK && (atf__fd_pwrite(o->fd, header, sizeof header, 0, NULL) != 0 ||
                         atf__fd_sync(o->fd) != 0))
        rc = atf__error_set_errno(o->err, ATF_E_IO, o->tmp, "write header, sync", atf__last_os_error());
    atf__fd_close(o->fd);
    if (rc == ATF_OK && atf__rename_replace(o->tmp, o->path) != 0)
        rc = atf__error_set_errno(o->err, ATF_E_IO, o->path, "rename", atf__last_os_error());
    if (rc != ATF_OK) atf__file_remove(o->tmp);
    return rc;
}

/* Opens `path` for a conversion from packed (`from_packed`) or layout 1: finalized, its
 * header and footer exactly what their encoders give, nothing after the footer. */
ATF__PRIVATE atf_result atf__convert_source(atf_index_reader *r, const char *path, int from_packed,
                                            atf_error *err) {
    atf_reader_options opt;
    uint8_t header[ATF_HEADER_SIZE], footer[ATF_FOOTER_SIZE];
    const char *why = NULL;
    atf_result rc;
    memset(&opt, 0, sizeof opt);
    opt.verify_crc = 1;
    rc = atf_index_reader_open(r, path, &opt);
    if (rc != ATF_OK) {
        if (err) *err = r->error;
        return rc;
    }
    if (r->packed != from_packed || r->header.version == ATF_LAYOUT_2) {
        atf__error_set_values(err, ATF_E_VERSION, path, 5, "version byte",
                              from_packed ? ATF_LAYOUT_PACKED : ATF_LAYOUT_1, r->header.version);
        atf_index_reader_close(r);
        return ATF_E_VERSION;
    }
    atf_index_header_encode(&r->header, header);
    if (r->counted != ATF_COUNT_FINALIZED || r->torn_bytes)
        why = "not finalized (recover it first)";
    else if (r->header.events_offset != ATF_HEADER_SIZE)
        why = "events_offset is not 64";
    else if (r->image.size != r->header.footer_offset + ATF_FOOTER_SIZE)
        why = "bytes after the footer";
    else if (memcmp(header, r->image.data, sizeof header) != 0)
        why = "reserved header bytes are not zero";
    else if (atf_index_footer_encode(&r->footer, footer),
             memcmp(footer, r->image.data + r->header.footer_offset, sizeof footer) != 0)
        why = "reserved footer bytes are not zero";
    if (!why) return ATF_OK;
    atf__error_set(err, ATF_E_ARG, path, 0, why);
    atf_index_reader_close(r);
    return ATF_E_ARG;
}

/* The blocks and the table of r's events. */
ATF__PRIVATE atf_result atf__pack_blocks(atf__convert_out *o, const atf_index_reader *r) {
    uint64_t blocks = (r->event_count + ATF_PACKED_BLOCK_EVENTS - 1) / ATF_PACKED_BLOCK_EVENTS, k;
    size_t cap = ATF_PACKED_BLOCK_HEADER_SIZE + ATF_PACKED_BLOCK_EVENTS * ATF_PACKED_EVENT_MAX;
    uint8_t *buf = (uint8_t *)ATF_MALLOC(cap), *table = NULL;
    atf_result rc = ATF_OK;
    if (blocks && blocks <= SIZE_MAX / 8) table = (uint8_t *)ATF_MALLOC((size_t)blocks * 8);
    if (!buf || (blocks && !table)) rc = atf__error_set(o->err, ATF_E_NOMEM, o->path, 0, "block buffer");
    for (k = 0; rc == ATF_OK && k < blocks; k++) {
        uint64_t first = k * ATF_PACKED_BLOCK_EVENTS, left = r->event_count - first;
        uint32_t n = left < ATF_PACKED_BLOCK_EVENTS ? (uint32_t)left : ATF_PACKED_BLOCK_EVENTS;
        size_t len = atf_packed_encode(r->events + first * ATF_INDEX_EVENT_SIZE, n,
                                       r->header.thread_id, buf + ATF_PACKED_BLOCK_HEADER_SIZE);
        atf__packed_block_header(buf, n, (uint32_t)len, atf_crc32c(buf + ATF_PACKED_BLOCK_HEADER_SIZE, len));
        atf__store_le64(table + k * 8, o->at);
        rc = atf__convert_put(o, buf, ATF_PACKED_BLOCK_HEADER_SIZE + len);
    }
    if (rc == ATF_OK && blocks) rc = atf__convert_put(o, table, (size_t)blocks * 8);
    ATF_FREE(table);
    ATF_FREE(buf);
    return rc;
}

/* The packed file's lane, blocks, table and footer; *h its header. */
ATF__PRIVATE atf_result atf__pack_body(atf__convert_out *o, const atf_index_reader *r,
                                       atf_index_header *h) {
    uint8_t lane[ATF_PACKED_LANE_SIZE];
    atf_result rc;
    atf__packed_lane_encode(lane, ATF_PACKED_BLOCK_EVENTS);
    rc = atf__convert_put(o, lane, sizeof lane);
    if (rc == ATF_OK) rc = atf__pack_blocks(o, r);
    *h = r->header;
    h->version = ATF_LAYOUT_PACKED;
    h->footer_offset = o->at;
    if (rc == ATF_OK) rc = atf__convert_put(o, r->image.data + r->header.footer_offset, ATF_FOOTER_SIZE);
    return rc;
}

/* The unpacked file's events and footer; *h its header. */
ATF__PRIVATE atf_result atf__unpack_body(atf__convert_out *o, const atf_index_reader *r,
                                         atf_index_header *h) {
    uint64_t seq = 0, bytes = r->event_count * ATF_INDEX_EVENT_SIZE;
    atf_result rc = ATF_OK;
    while (rc == ATF_OK && seq < r->event_count) { /* block by block, as they decode */
        const uint8_t *rec = atf__index_record(r, seq);
        uint64_t n = r->cache->first + r->cache->count - seq;
        rc = atf__convert_put(o, rec, (size_t)(n * ATF_INDEX_EVENT_SIZE));
        seq += n;
    }
    if (rc == ATF_OK) rc = atf__convert_put(o, r->image.data + r->header.footer_offset, ATF_FOOTER_SIZE);
    *h = r->header;
    h->version = ATF_LAYOUT_1;
    h->footer_offset = ATF_HEADER_SIZE + bytes;
    return rc;
}

/* Either conversion. The source is closed before the rename: Windows replaces no file
 * that is still mapped. */
ATF__PRIVATE atf_result atf__convert(const char *in, const char *out, int unpack, atf_error *err) {
    atf_index_reader r;
    atf__convert_out o;
    atf_index_header h;
    atf_error ignored;
    atf_result rc;
    if (!err) err = &ignored; /* optional */
    memset(err, 0, sizeof *err);
    memset(&h, 0, sizeof h);
    if (!in || !out) return atf__error_set(err, ATF_E_ARG, "", 0, "NULL path");
    rc = atf__convert_source(&r, in, unpack, err);
    if (rc != ATF_OK) return rc;
    rc = atf__convert_open(&o, out, err);
    if (rc == ATF_OK) rc = unpack ? atf__unpack_body(&o, &r, &h) : atf__pack_body(&o, &r, &h);
    atf_index_reader_close(&r);
    return o.fd == ATF__FD_NONE ? rc : atf__convert_close(&o, &h, rc);
}

ATFDEF atf_result atf_index_pack(const char *in, const char *out, atf_error *err) {
    return atf__convert(in, out, 0, err);
}

ATFDEF atf_result atf_index_unpack(const char *in, const char *out, atf_error *err) {
    return atf__convert(in, out, 1, err);
}


/* ==== 12. session reader + merge ========================================== >>sessionreader */
/* ---- 12.1 JSON reader ------------------------------------------------------------- >>json */
/* A small strict JSON reader for manifest.json. One validating pass checks the
 * whole text against the JSON grammar (RFC 8259: numbers, escapes, no trailing commas or
 * garbage), nesting at most 32 deep, and allocates nothing; anything else is refused as a
 * whole. Queries then walk the validated text: a value is named by its offset. Bytes
 * >= 0x80 in strings pass through unchecked (a mis-encoded thread name does not cost the
 * whole manifest). */
#define ATF__JSON_MAX_DEPTH 32
#define ATF__JSON_MAX_TEXT (64u << 20)
#define ATF__JSON_NONE ((size_t)-1)

typedef struct atf__json {
    const char *s;
    size_t n;
    size_t stop;                 /* invalid text: the offset of the byte refused */
    const char *why;             /*   and what was expected there */
} atf__json;

/* Validation refuses the byte at i: kept for the caller's error; returns NONE. */
ATF__PRIVATE size_t atf__json_fail(atf__json *j, size_t i, const char *why) {
    j->stop = i;
    j->why = why;
    return ATF__JSON_NONE;
}

ATF__PRIVATE size_t atf__json_space(const atf__json *j, size_t i) {
    while (i < j->n && (j->s[i] == ' ' || j->s[i] == '\n' || j->s[i] == '\r' || j->s[i] == '\t')) i++;
    return i;
}


ATF__PRIVATE unsigned atf__json_hex(char c) {
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* A string starting at its opening quote: the offset after its closing quote, or NONE. */
ATF__PRIVATE size_t atf__json_check_string(atf__json *j, size_t i) {
    size_t k;
    for (i++; i < j->n; i++) {
        unsigned char c = (unsigned char)j->s[i];
        if (c == '"') return i + 1;
        if (c < 0x20) return atf__json_fail(j, i, "string: control character");
        if (c != '\\') continue;
        if (++i >= j->n) break;
        switch (j->s[i]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
        case 'u':
            for (k = 1; k <= 4; k++)
                if (i + k >= j->n || !atf__is_hex(j->s[i + k]))
                    return atf__json_fail(j, i + k, "string: \\u needs four hex digits");
            i += 4;
            break;
        default: return atf__json_fail(j, i, "string: unknown escape");
        }
    }
    return atf__json_fail(j, j->n, "string: no closing quote");
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: the offset after it, or NONE. */
ATF__PRIVATE size_t atf__json_check_number(atf__json *j, size_t i) {
#define ATF__JSON_DIGIT(k) ((k) < j->n && j->s[k] >= '0' && j->s[k] <= '9')
    if (i < j->n && j->s[i] == '-') i++;
    if (!ATF__JSON_DIGIT(i)) return atf__json_fail(j, i, "number: digit expected");
    if (j->s[i++] != '0')
        while (ATF__JSON_DIGIT(i)) i++;
    if (i < j->n && j->s[i] == '.') {
        if (!ATF__JSON_DIGIT(i + 1)) return atf__json_fail(j, i + 1, "number: digit expected after '.'");
        for (i++; ATF__JSON_DIGIT(i); i++) {}
    }
    if (i < j->n && (j->s[i] == 'e' || j->s[i] == 'E')) {
        i++;
        if (i < j->n && (j->s[i] == '+' || j->s[i] == '-')) i++;
        if (!ATF__JSON_DIGIT(i)) return atf__json_fail(j, i, "number: digit expected in the exponent");
        while (ATF__JSON_DIGIT(i)) i++;
    }
    return i;
#undef ATF__JSON_DIGIT
}

/* A value starting at i (no leading space): the offset after it, or NONE. Recursion is
 * bounded by ATF__JSON_MAX_DEPTH. */
ATF__PRIVATE size_t atf__json_check_value(atf__json *j, size_t i, int depth) {
    char c;
    if (i >= j->n) return atf__json_fail(j, i, "value expected");
    c = j->s[i];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        if (depth >= ATF__JSON_MAX_DEPTH) return atf__json_fail(j, i, "nested deeper than 32");
        i = atf__json_space(j, i + 1);
        if (i < j->n && j->s[i] == close) return i + 1;
        for (;;) {
            if (c == '{') {
                if (i >= j->n || j->s[i] != '"') return atf__json_fail(j, i, "member name expected");
                i = atf__json_check_string(j, i);
                if (i == ATF__JSON_NONE) return i;
                i = atf__json_space(j, i);
                if (i >= j->n || j->s[i] != ':') return atf__json_fail(j, i, "':' expected");
                i = atf__json_space(j, i + 1);
            }
            i = atf__json_check_value(j, i, depth + 1);
            if (i == ATF__JSON_NONE) return i;
            i = atf__json_space(j, i);
            if (i < j->n && j->s[i] == close) return i + 1;
            if (i >= j->n || j->s[i] != ',')
                return atf__json_fail(j, i, c == '{' ? "',' or '}' expected" : "',' or ']' expected");
            i = atf__json_space(j, i + 1);
        }
    }
    if (c == '"') return atf__json_check_string(j, i);
    if (c == '-' || (c >= '0' && c <= '9')) return atf__json_check_number(j, i);
    if (j->n - i >= 4 && memcmp(j->s + i, "true", 4) == 0) return i + 4;
    if (j->n - i >= 5 && memcmp(j->s + i, "false", 5) == 0) return i + 5;
    if (j->n - i >= 4 && memcmp(j->s + i, "null", 4) == 0) return i + 4;
    return atf__json_fail(j, i, "value expected");
}

/* Checks the whole text: 1 when it is one JSON value with only space around it; the
 * root value is then at offset *root. 0 otherwise, with j->stop and j->why. */
ATF__PRIVATE int atf__json_parse(atf__json *j, const char *text, size_t len, size_t *root) {
    size_t end;
    j->s = text;
    j->n = len;
    j->stop = 0;
    j->why = "text larger than 64 MiB";
    if (len > ATF__JSON_MAX_TEXT) return 0;
    *root = atf__json_space(j, 0);
    end = atf__json_check_value(j, *root, 0);
    if (end == ATF__JSON_NONE) return 0;
    end = atf__json_space(j, end);
    if (end != len) {
        atf__json_fail(j, end, "end of text expected after the value");
        return 0;
    }
    return 1;
}

/* The offset after the (validated) value at i: strings and brackets only, no recursion. */
ATF__PRIVATE size_t atf__json_skip(const atf__json *j, size_t i) {
    size_t depth = 0;
    char c = j->s[i];
    if (c != '"' && c != '{' && c != '[') { /* number, true, false, null */
        while (i < j->n && ((c = j->s[i]) == '-' || c == '+' || c == '.' || c == 'E' ||
                            (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')))
            i++;
        return i;
    }
    for (; i < j->n; i++) {
        c = j->s[i];
        if (c == '"') {
            for (i++; i < j->n && j->s[i] != '"'; i++)
                if (j->s[i] == '\\') i++;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
        if (depth == 0) return i + 1;
    }
    return j->n;
}

/* The first element of the array at i, or NONE when empty or not an array. */
ATF__PRIVATE size_t atf__json_first(const atf__json *j, size_t i) {
    if (i == ATF__JSON_NONE || j->s[i] != '[') return ATF__JSON_NONE;
    i = atf__json_space(j, i + 1);
    return j->s[i] == ']' ? ATF__JSON_NONE : i;
}

/* The element after the one at i, or NONE. */
ATF__PRIVATE size_t atf__json_next(const atf__json *j, size_t i) {
    i = atf__json_space(j, atf__json_skip(j, i));
    return i < j->n && j->s[i] == ',' ? atf__json_space(j, i + 1) : ATF__JSON_NONE;
}

/* The value of member `key` of the object at i, or NONE (also when i is not an object).
 * Keys are compared as written (manifest keys have no escapes). */
ATF__PRIVATE size_t atf__json_get(const atf__json *j, size_t i, const char *key) {
    size_t klen = strlen(key);
    if (i == ATF__JSON_NONE || j->s[i] != '{') return ATF__JSON_NONE;
    i = atf__json_space(j, i + 1);
    while (i < j->n && j->s[i] == '"') {
        size_t name = i + 1, value;
        i = atf__json_skip(j, i);
        value = atf__json_space(j, atf__json_space(j, i) + 1);
        if (i - 1 - name == klen && memcmp(j->s + name, key, klen) == 0) return value;
        i = atf__json_space(j, atf__json_skip(j, value));
        if (i >= j->n || j->s[i] != ',') break;
        i = atf__json_space(j, i + 1);
    }
    return ATF__JSON_NONE;
}

/* An unsigned integer at i: a JSON number without sign, fraction or exponent, or a string
 * holding decimal digits or "0x" and hex digits (the original tracer's function ids).
 * 1 and *out on success; 0 when absent, of another kind or above UINT64_MAX. */
ATF__PRIVATE int atf__json_u64(const atf__json *j, size_t i, uint64_t *out) {
    size_t end;
    uint64_t v = 0, base = 10;
    if (i == ATF__JSON_NONE) return 0;
    if (j->s[i] == '"') {
        end = atf__json_skip(j, i) - 1;
        i++;
        if (end - i > 2 && j->s[i] == '0' && (j->s[i + 1] == 'x' || j->s[i + 1] == 'X')) {
            base = 16;
            i += 2;
        }
    } else {
        end = atf__json_skip(j, i);
    }
    if (i >= end) return 0;
    for (; i < end; i++) {
        char c = j->s[i];
        uint64_t d;
        if (c >= '0' && c <= '9') d = (uint64_t)(c - '0');
        else if (base == 16 && atf__is_hex(c)) d = atf__json_hex(c);
        else return 0; /* sign, fraction, exponent, other characters */
        if (v > (UINT64_MAX - d) / base) return 0;
        v = v * base + d;
    }
    *out = v;
    return 1;
}

/* An unsigned integer at i that fits in 32 bits. */
ATF__PRIVATE int atf__json_u32(const atf__json *j, size_t i, uint32_t *out) {
    uint64_t v;
    if (!atf__json_u64(j, i, &v) || v > UINT32_MAX) return 0;
    *out = (uint32_t)v;
    return 1;
}

/* A signed integer at i: a JSON number without fraction or exponent, in int64 range. */
ATF__PRIVATE int atf__json_i64(const atf__json *j, size_t i, int64_t *out) {
    uint64_t v;
    int negative = i != ATF__JSON_NONE && j->s[i] == '-';
    if (i == ATF__JSON_NONE || j->s[i] == '"' || !atf__json_u64(j, i + (size_t)negative, &v))
        return 0;
    if (v > (uint64_t)INT64_MAX + (uint64_t)negative) return 0;
    /* -2^63 has no positive counterpart: negated in unsigned arithmetic */
    *out = negative ? (v ? -(int64_t)(v - 1) - 1 : 0) : (int64_t)v;
    return 1;
}

/* true, or a nonzero integer: 1; anything else: 0. */
ATF__PRIVATE int atf__json_true(const atf__json *j, size_t i) {
    uint64_t v = 0;
    if (i == ATF__JSON_NONE) return 0;
    if (j->n - i >= 4 && memcmp(j->s + i, "true", 4) == 0) return 1;
    return j->s[i] != '"' && atf__json_u64(j, i, &v) && v != 0;
}

/* Decodes the string at i into buf (cap > 0), NUL-terminated: escapes resolved, \uXXXX
 * as UTF-8 with surrogate pairs joined and unpaired surrogates as U+FFFD. What does not
 * fit is cut before a whole character, never inside one. Returns the bytes written; 0 and
 * "" when i is not a string. The result is never longer than the string's text. */
ATF__PRIVATE size_t atf__json_string(const atf__json *j, size_t i, char *buf, size_t cap) {
    size_t end, o = 0;
    buf[0] = '\0';
    if (i == ATF__JSON_NONE || j->s[i] != '"') return 0;
    end = atf__json_skip(j, i) - 1;
    for (i++; i < end;) {
        char unit[4];
        size_t len = 1;
        unsigned char c = (unsigned char)j->s[i++];
        if (c != '\\') {
            unit[0] = (char)c;
            /* a UTF-8 lead byte travels with its continuation bytes */
            if (c >= 0xC0)
                while (len < 4 && i < end && ((unsigned char)j->s[i] & 0xC0) == 0x80) unit[len++] = j->s[i++];
        } else {
            unsigned cp;
            c = (unsigned char)j->s[i++];
            switch (c) {
            case 'n': unit[0] = '\n'; break;
            case 't': unit[0] = '\t'; break;
            case 'r': unit[0] = '\r'; break;
            case 'b': unit[0] = '\b'; break;
            case 'f': unit[0] = '\f'; break;
            case 'u':
                cp = (atf__json_hex(j->s[i]) << 12) | (atf__json_hex(j->s[i + 1]) << 8) |
                     (atf__json_hex(j->s[i + 2]) << 4) | atf__json_hex(j->s[i + 3]);
                i += 4;
                if (cp >= 0xD800 && cp < 0xE000) {
                    unsigned lo = 0;
                    if (cp < 0xDC00 && end - i >= 6 && j->s[i] == '\\' && j->s[i + 1] == 'u')
                        lo = (atf__json_hex(j->s[i + 2]) << 12) | (atf__json_hex(j->s[i + 3]) << 8) |
                             (atf__json_hex(j->s[i + 4]) << 4) | atf__json_hex(j->s[i + 5]);
                    if (lo >= 0xDC00 && lo < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        i += 6;
                    } else {
                        cp = 0xFFFD; /* unpaired surrogate */
                    }
                }
                if (cp < 0x80) {
                    unit[0] = (char)cp;
                } else if (cp < 0x800) {
                    unit[0] = (char)(0xC0 | (cp >> 6));
                    unit[1] = (char)(0x80 | (cp & 0x3F));
                    len = 2;
                } else if (cp < 0x10000) {
                    unit[0] = (char)(0xE0 | (cp >> 12));
                    unit[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    unit[2] = (char)(0x80 | (cp & 0x3F));
                    len = 3;
                } else {
                    unit[0] = (char)(0xF0 | (cp >> 18));
                    unit[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    unit[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    unit[3] = (char)(0x80 | (cp & 0x3F));
                    len = 4;
                }
                break;
            default: unit[0] = (char)c; break; /* \" \\ \/ */
            }
        }
        if (o + len >= cap) break;
        memcpy(buf + o, unit, len);
        o += len;
    }
    buf[o] = '\0';
    return o;
}

/* The string at i decoded into a fresh allocation (whole, however long), or NULL. */
ATF__PRIVATE char *atf__json_strdup(const atf__json *j, size_t i) {
    size_t cap;
    char *p;
    if (i == ATF__JSON_NONE || j->s[i] != '"') return NULL;
    cap = atf__json_skip(j, i) - i - 1; /* the text and one more byte, for the NUL */
    p = (char *)ATF_MALLOC(cap);
    if (p) atf__json_string(j, i, p, cap);
    return p;
}

/* A finite JSON number at i as a double, whatever the C locale's decimal point (strtod
 * reads that one): 1 and *out, or 0 (not a number, longer than 127 characters, or out
 * of range). */
ATF__PRIVATE int atf__json_double(const atf__json *j, size_t i, double *out) {
    char buf[128], *stop;
    const char *point = localeconv()->decimal_point;
    size_t n, k;
    double v;
    if (i == ATF__JSON_NONE || !(j->s[i] == '-' || (j->s[i] >= '0' && j->s[i] <= '9'))) return 0;
    n = atf__json_skip(j, i) - i;
    if (n >= sizeof buf) return 0;
    memcpy(buf, j->s + i, n);
    buf[n] = '\0';
    if (point && point[0] && !point[1])
        for (k = 0; k < n; k++)
            if (buf[k] == '.') buf[k] = point[0];
    v = strtod(buf, &stop);
    if (stop != buf + n || v - v != 0) return 0; /* v - v: NaN for infinities */
    *out = v;
    return 1;
}


/* ---- 12.2 reading manifest.json ------------------------------------------- >>manifestread */
/* manifest.json into the session reader: the session's facts, the threads it lists,
 * symbols (sorted by function id), modules and timing anchors. A manifest that is not
 * valid JSON with a "threads" array is not used at all (r->manifest says why). */

ATFDEF const char *atf_manifest_state_str(atf_manifest_state s) {
    switch (s) {
    case ATF_MANIFEST_OK: return "ok";
    case ATF_MANIFEST_MISSING: return "missing (threads found by directory scan)";
    case ATF_MANIFEST_UNREADABLE: return "unreadable (threads found by directory scan)";
    case ATF_MANIFEST_INCOMPLETE: return "incomplete (more thread directories than listed)";
    default: return "unknown";
    }
}

/* The slots listed by the manifest (in r->threads, in listing order) and the slots found
 * on disk, before they are joined. */
typedef struct atf__thread_list {
    atf_session_reader *r;
    size_t cap;
    uint32_t *found;
    size_t found_count, found_cap;
    int failed;
} atf__thread_list;

ATF__PRIVATE int atf__symbol_cmp(const void *a, const void *b) {
    uint64_t x = ((const atf_session_symbol *)a)->function_id;
    uint64_t y = ((const atf_session_symbol *)b)->function_id;
    return x < y ? -1 : x > y;
}

/* One symbols entry into *y (name allocated, or NULL); 0 when it has no function_id, or
 * neither a name nor a location (skipped), or memory ran out (*nomem set). */
ATF__PRIVATE int atf__session_reader_symbol_entry(const atf__json *j, size_t it,
                                                  atf_session_symbol *y, int *nomem) {
    size_t at = atf__json_get(j, it, "name");
    memset(y, 0, sizeof *y);
    if (!atf__json_u64(j, atf__json_get(j, it, "function_id"), &y->function_id)) return 0;
    y->has_offset = atf__json_u64(j, atf__json_get(j, it, "offset"), &y->offset);
    if (!atf__json_u32(j, atf__json_get(j, it, "module_id"), &y->module_id))
        y->module_id = (uint32_t)(y->function_id >> 32);
    if (at == ATF__JSON_NONE || j->s[at] != '"') return y->has_offset;
    y->name = atf__json_strdup(j, at);
    *nomem = y->name == NULL;
    return !*nomem;
}

ATF__PRIVATE void atf__session_reader_symbols(atf_session_reader *r, atf__thread_list *l,
                                              const atf__json *j, size_t root) {
    size_t it, cap = 0, n = 0;
    for (it = atf__json_first(j, atf__json_get(j, root, "symbols")); it != ATF__JSON_NONE;
         it = atf__json_next(j, it)) {
        atf_session_symbol y;
        int nomem = 0;
        if (!atf__session_reader_symbol_entry(j, it, &y, &nomem) && !nomem) continue;
        if (nomem || !atf__grow((void **)&r->symbols, &cap, n, sizeof *r->symbols)) {
            ATF_FREE(y.name);
            atf__error_set(&r->error, ATF_E_NOMEM, r->path, 0, "manifest symbols");
            l->failed = 1;
            break;
        }
        r->symbols[n++] = y;
    }
    r->symbol_count = n;
    if (n) qsort(r->symbols, n, sizeof *r->symbols, atf__symbol_cmp);
}

/* A timing anchor's value and rate: exact when the value is an integer in int64 range
 * (digits, or a double that is one) and there is a timescale in 1..INT32_MAX (this
 * writer's), else, from an older writer, a rate (1e9 when absent or not > 0) that is an
 * integer in that range. */
ATF__PRIVATE void atf__session_reader_anchor_value(const atf__json *j, size_t it,
                                                   atf_session_anchor *a) {
    uint32_t timescale = 0;
    int64_t v = 0;
    int is_int = atf__json_i64(j, atf__json_get(j, it, "value"), &v);
    if (!is_int && atf__double_is_i64(a->value_f)) {
        v = (int64_t)a->value_f;
        is_int = 1;
    }
    if (!atf__json_double(j, atf__json_get(j, it, "rate"), &a->rate) || !(a->rate > 0)) a->rate = 1e9;
    if (!atf__json_u32(j, atf__json_get(j, it, "timescale"), &timescale) || timescale < 1 ||
        timescale > (uint32_t)INT32_MAX)
        timescale = a->rate <= (double)INT32_MAX && a->rate == (double)(int32_t)a->rate
                        ? (uint32_t)a->rate : 0;
    if (!is_int || timescale < 1) return;
    a->value = v;
    a->timescale = (int32_t)timescale;
    a->value_f = (double)v;
    a->rate = (double)timescale;
}

/* The timing anchors into r->anchors; 0 when memory ran out. */
ATF__PRIVATE int atf__session_reader_anchors(atf_session_reader *r, const atf__json *j, size_t root) {
    size_t it, cap = 0;
    for (it = atf__json_first(j, atf__json_get(j, root, "timing_anchors")); it != ATF__JSON_NONE;
         it = atf__json_next(j, it)) {
        atf_session_anchor a;
        size_t name = atf__json_get(j, it, "name");
        memset(&a, 0, sizeof a);
        if (name == ATF__JSON_NONE || j->s[name] != '"' ||
            !atf__json_u64(j, atf__json_get(j, it, "host_ns"), &a.host_ns) ||
            !atf__json_double(j, atf__json_get(j, it, "value"), &a.value_f))
            continue;
        atf__json_string(j, name, a.name, sizeof a.name);
        atf__session_reader_anchor_value(j, it, &a);
        if (!atf__grow((void **)&r->anchors, &cap, r->anchor_count, sizeof *r->anchors)) return 0;
        r->anchors[r->anchor_count++] = a;
    }
    return 1;
}

/* A module's build id: a string of 1-64 hex digits, lowercased; else "". */
ATF__PRIVATE void atf__session_reader_build_id(const atf__json *j, size_t i, char *out) {
    char buf[80];
    atf__json_string(j, i, buf, sizeof buf);
    if (!atf__build_id_copy(out, buf)) out[0] = '\0';
}

/* The modules into r->modules; 0 when memory ran out. */
ATF__PRIVATE int atf__session_reader_modules(atf_session_reader *r, const atf__json *j, size_t root) {
    size_t it, cap = 0;
    for (it = atf__json_first(j, atf__json_get(j, root, "modules")); it != ATF__JSON_NONE;
         it = atf__json_next(j, it)) {
        atf_session_module m;
        size_t path;
        memset(&m, 0, sizeof m);
        if (!atf__json_u64(j, atf__json_get(j, it, "module_id"), &m.module_id)) continue;
        atf__json_u64(j, atf__json_get(j, it, "base_address"), &m.base_address);
        atf__json_u64(j, atf__json_get(j, it, "size"), &m.size);
        atf__session_reader_build_id(j, atf__json_get(j, it, "build_id"), m.build_id);
        path = atf__json_get(j, it, "path");
        m.path = path != ATF__JSON_NONE && j->s[path] == '"' ? atf__json_strdup(j, path) : atf__strdup("");
        if (!m.path || !atf__grow((void **)&r->modules, &cap, r->module_count, sizeof *r->modules)) {
            ATF_FREE(m.path);
            return 0;
        }
        r->modules[r->module_count++] = m;
    }
    return 1;
}

/* The manifest's session-wide members; 0 when memory ran out. */
ATF__PRIVATE int atf__session_reader_facts(atf_session_reader *r, const atf__json *j, size_t root) {
    size_t error = atf__json_get(j, root, "error"), cmdline = atf__json_get(j, root, "cmdline");
    uint32_t sys_errno = 0;
    if (cmdline != ATF__JSON_NONE && j->s[cmdline] == '"' &&
        (r->cmdline = atf__json_strdup(j, cmdline)) == NULL)
        return 0;
    atf__json_u32(j, atf__json_get(j, root, "format_version"), &r->format_version);
    atf__json_u32(j, atf__json_get(j, root, "layout"), &r->layout);
    atf__json_u32(j, atf__json_get(j, root, "clock_type"), &r->clock_type);
    atf__json_u64(j, atf__json_get(j, root, "time_start_ns"), &r->time_start_ns);
    atf__json_u64(j, atf__json_get(j, root, "time_end_ns"), &r->time_end_ns);
    atf__json_string(j, atf__json_get(j, root, "state"), r->state, sizeof r->state);
    atf__json_string(j, atf__json_get(j, root, "overflow"), r->overflow, sizeof r->overflow);
    atf__json_u64(j, atf__json_get(j, root, "pid"), &r->pid);
    atf__json_string(j, atf__json_get(j, root, "arch"), r->arch, sizeof r->arch);
    atf__json_string(j, atf__json_get(j, root, "os"), r->os, sizeof r->os);
    atf__json_u64(j, atf__json_get(j, root, "attach_failures"), &r->attach_failures);
    atf__json_u64(j, atf__json_get(j, root, "max_bytes"), &r->max_bytes);
    atf__json_u64(j, atf__json_get(j, root, "keep_last_bytes"), &r->keep_last_bytes);
    atf__json_u64(j, atf__json_get(j, root, "keep_last_ns"), &r->keep_last_ns);
    atf__json_u64(j, atf__json_get(j, root, "max_duration_ns"), &r->max_duration_ns);
    atf__json_u64(j, atf__json_get(j, root, "min_duration_ns"), &r->min_duration_ns);
    atf__json_u64(j, atf__json_get(j, root, "disk_reserve_bytes"), &r->disk_reserve_bytes);
    atf__json_string(j, atf__json_get(j, root, "stopped"), r->stopped, sizeof r->stopped);
    atf__json_u64(j, atf__json_get(j, root, "stopped_at_ns"), &r->stopped_at_ns);
    if (error == ATF__JSON_NONE || j->s[error] != '"') return 1;
    atf__json_u32(j, atf__json_get(j, root, "error_errno"), &sys_errno);
    r->recording_errno = (int)sys_errno; /* written as the errno's 32 bits */
    r->recording_error = atf__json_strdup(j, error);
    return r->recording_error != NULL;
}

/* The manifest is not used: r->manifest_error says why, at which byte of `path`. */
ATF__PRIVATE void atf__session_reader_refuse(atf_session_reader *r, const char *path,
                                             uint64_t offset, const char *what) {
    r->manifest = ATF_MANIFEST_UNREADABLE;
    atf__error_set(&r->manifest_error, ATF_E_CORRUPT, path, offset, what);
}

/* Reads manifest.json into r: session fields, the listed threads, symbols, modules and
 * anchors. */
ATF__PRIVATE void atf__session_reader_manifest(atf_session_reader *r, atf__thread_list *l,
                                               const atf_reader_options *opt) {
    char path[1100];
    atf__file_image img;
    atf__json j;
    size_t root = 0, threads = ATF__JSON_NONE, it;
    atf_result rc;
    snprintf(path, sizeof path, "%s/manifest.json", r->path);
    rc = atf__file_map(&img, path, opt ? opt->no_mmap : 0, &r->manifest_error);
    if (rc != ATF_OK) {
        r->manifest = rc == ATF_E_NOT_FOUND ? ATF_MANIFEST_MISSING : ATF_MANIFEST_UNREADABLE;
        if (rc == ATF_E_NOMEM) { /* out of memory is no unreadable manifest */
            atf__error_adopt(&r->error, &r->manifest_error);
            l->failed = 1;
        }
        if (rc == ATF_E_NOT_FOUND || rc == ATF_E_NOMEM) /* nothing wrong with the manifest */
            memset(&r->manifest_error, 0, sizeof r->manifest_error);
        return;
    }
    if (img.size > ATF__JSON_MAX_TEXT) {
        atf__error_set_values(&r->manifest_error, ATF_E_CORRUPT, path, 0, "manifest larger than 64 MiB",
                              ATF__JSON_MAX_TEXT, img.size);
        r->manifest = ATF_MANIFEST_UNREADABLE;
    } else if (!atf__json_parse(&j, (const char *)img.data, (size_t)img.size, &root)) {
        atf__session_reader_refuse(r, path, j.stop, j.why);
    } else if (j.s[root] != '{') {
        atf__session_reader_refuse(r, path, root, "top level is not an object");
    } else if ((threads = atf__json_get(&j, root, "threads")) == ATF__JSON_NONE) {
        atf__session_reader_refuse(r, path, root, "no \"threads\" member");
    } else if (j.s[threads] != '[') {
        atf__session_reader_refuse(r, path, threads, "\"threads\" is not an array");
    }
    if (r->manifest == ATF_MANIFEST_UNREADABLE) {
        atf__file_unmap(&img);
        return;
    }
    r->manifest = ATF_MANIFEST_OK;
    if (!atf__session_reader_facts(r, &j, root) || !atf__session_reader_anchors(r, &j, root) ||
        !atf__session_reader_modules(r, &j, root)) {
        atf__error_set(&r->error, ATF_E_NOMEM, path, 0, "manifest text");
        l->failed = 1;
    }
    for (it = atf__json_first(&j, threads); it != ATF__JSON_NONE; it = atf__json_next(&j, it)) {
        atf_session_thread *t;
        uint32_t slot;
        /* an entry without a usable id names no directory: skipped (the scan finds it) */
        if (!atf__json_u32(&j, atf__json_get(&j, it, "id"), &slot)) continue;
        if (!atf__grow((void **)&r->threads, &l->cap, r->thread_count, sizeof *r->threads)) {
            l->failed = 1;
            break;
        }
        t = &r->threads[r->thread_count++];
        memset(t, 0, sizeof *t);
        t->slot = slot;
        t->in_manifest = 1;
        t->manifest_has_detail = atf__json_true(&j, atf__json_get(&j, it, "has_detail"));
        atf__json_u32(&j, atf__json_get(&j, it, "os_thread_id"), &t->os_thread_id);
        t->manifest_finalized = atf__json_true(&j, atf__json_get(&j, it, "finalized"));
        atf__json_u64(&j, atf__json_get(&j, it, "events_written"), &t->events_written);
        atf__json_u64(&j, atf__json_get(&j, it, "events_dropped"), &t->events_dropped);
        atf__json_u64(&j, atf__json_get(&j, it, "detail_written"), &t->detail_written);
        atf__json_u64(&j, atf__json_get(&j, it, "detail_dropped"), &t->detail_dropped);
        atf__json_u64(&j, atf__json_get(&j, it, "events_lost_io"), &t->events_lost_io);
        atf__json_u64(&j, atf__json_get(&j, it, "events_stopped"), &t->events_stopped);
        atf__json_u64(&j, atf__json_get(&j, it, "events_skipped"), &t->events_skipped);
        atf__json_u64(&j, atf__json_get(&j, it, "events_discarded"), &t->events_discarded);
        atf__json_u64(&j, atf__json_get(&j, it, "gaps"), &t->gaps);
        atf__json_u64(&j, atf__json_get(&j, it, "waits"), &t->waits);
        atf__json_u64(&j, atf__json_get(&j, it, "timeouts"), &t->timeouts);
        atf__json_u64(&j, atf__json_get(&j, it, "paused_ns"), &t->paused_ns);
        atf__json_string(&j, atf__json_get(&j, it, "name"), t->name, sizeof t->name);
    }
    atf__session_reader_symbols(r, l, &j, root);
    atf__file_unmap(&img);
}

/* ---- 12.3 opening a pid_* directory -------------------------------------------- >>pidopen */
/* A pid_* directory opened through its manifest and a scan of its thread_* directories,
 * joined into one list sorted by slot, and every thread in it opened. */

#if defined(ATF__OS_WINDOWS)
ATFDEF int atf_session_scan_threads(const char *pid_dir, void (*fn)(void *ctx, uint32_t slot),
                                    void *ctx) {
    char pattern[1100];
    wchar_t *w;
    WIN32_FIND_DATAW fd;
    HANDLE h;
    DWORD why;
    snprintf(pattern, sizeof pattern, "%s\\thread_*", pid_dir);
    w = atf__utf8_to_wide(pattern);
    if (!w) return ENOMEM;
    h = FindFirstFileW(w, &fd);
    ATF_FREE(w);
    /* no match in an existing directory is fine; a missing directory fails as opendir does */
    why = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
    if (why == ERROR_FILE_NOT_FOUND) return 0;
    if (h == INVALID_HANDLE_VALUE) return why ? (int)why : -1;
    do {
        const wchar_t *n = fd.cFileName + 7;
        uint64_t v = 0;
        int digits = 0;
        if (n[0] == L'0' && n[1] != 0) continue;
        for (; *n >= L'0' && *n <= L'9' && digits < 10; n++, digits++) v = v * 10 + (uint64_t)(*n - L'0');
        if (digits && !*n && v <= UINT32_MAX && (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
            fn(ctx, (uint32_t)v);
    } while (FindNextFileW(h, &fd));
    FindClose(h);
    return 0;
}
#else
ATFDEF int atf_session_scan_threads(const char *pid_dir, void (*fn)(void *ctx, uint32_t slot),
                                    void *ctx) {
    DIR *d = opendir(pid_dir);
    struct dirent *e;
    if (!d) return errno ? errno : -1;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        uint64_t v = 0;
        int digits = 0;
        if (strncmp(n, "thread_", 7) != 0) continue;
        n += 7;
        if (n[0] == '0' && n[1] != '\0') continue; /* thread_07 is not thread_7 */
        for (; *n >= '0' && *n <= '9' && digits < 10; n++, digits++) v = v * 10 + (uint64_t)(*n - '0');
        if (digits && !*n && v <= UINT32_MAX && atf__is_subdir(pid_dir, e->d_name))
            fn(ctx, (uint32_t)v);
    }
    closedir(d);
    return 0;
}
#endif

ATF__PRIVATE void atf__session_reader_found(void *ctx, uint32_t slot) {
    atf__thread_list *l = (atf__thread_list *)ctx;
    if (!atf__grow((void **)&l->found, &l->found_cap, l->found_count, sizeof *l->found)) {
        l->failed = 1;
        return;
    }
    l->found[l->found_count++] = slot;
}

typedef struct atf__slot_ref {
    uint32_t slot;
    uint32_t scanned;            /* 0: a manifest entry, 1: found by the scan */
    size_t index;                /* in r->threads or l->found */
} atf__slot_ref;

ATF__PRIVATE int atf__slot_ref_cmp(const void *a, const void *b) {
    const atf__slot_ref *x = (const atf__slot_ref *)a, *y = (const atf__slot_ref *)b;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    if (x->scanned != y->scanned) return x->scanned < y->scanned ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Joins the manifest's entries and the scanned slots into r->threads: one entry per slot,
 * sorted, the first manifest listing winning. O(n log n) however long the lists. */
ATF__PRIVATE int atf__session_reader_join(atf_session_reader *r, atf__thread_list *l) {
    size_t total = r->thread_count + l->found_count, i, n = 0;
    atf__slot_ref *refs;
    atf_session_thread *out;
    if (total == 0) return 1;
    if (total > SIZE_MAX / sizeof *out) return 0;
    refs = (atf__slot_ref *)ATF_MALLOC(total * sizeof *refs);
    out = (atf_session_thread *)ATF_MALLOC(total * sizeof *out);
    if (!refs || !out) {
        ATF_FREE(refs);
        ATF_FREE(out);
        return 0;
    }
    for (i = 0; i < r->thread_count; i++) {
        refs[i].slot = r->threads[i].slot;
        refs[i].scanned = 0;
        refs[i].index = i;
    }
    for (i = 0; i < l->found_count; i++) {
        refs[r->thread_count + i].slot = l->found[i];
        refs[r->thread_count + i].scanned = 1;
        refs[r->thread_count + i].index = i;
    }
    qsort(refs, total, sizeof *refs, atf__slot_ref_cmp);
    for (i = 0; i < total; i++) {
        if (n && out[n - 1].slot == refs[i].slot) continue;
        if (!refs[i].scanned) {
            out[n] = r->threads[refs[i].index];
        } else {
            memset(&out[n], 0, sizeof out[n]);
            out[n].slot = refs[i].slot;
            if (r->manifest == ATF_MANIFEST_OK) r->manifest = ATF_MANIFEST_INCOMPLETE;
        }
        n++;
    }
    ATF_FREE(refs);
    ATF_FREE(r->threads);
    r->threads = out;
    r->thread_count = n;
    return 1;
}

/* What the open knows of a thread's order: its first and last timestamps, O(1). A file
 * of at most one event is ordered; any other is unknown until checked. */
ATF__PRIVATE void atf__session_thread_ends(atf_session_thread *t) {
    const atf_index_reader *ix = &t->reader.index;
    uint64_t n = ix->event_count;
    t->time_min_ns = n ? atf__load_le64(atf__index_record(ix, 0)) : 0;
    t->time_max_ns = n ? atf__load_le64(atf__index_record(ix, n - 1)) : 0;
    t->out_of_order = n > 1 ? ATF_ORDER_UNKNOWN : 0;
}

/* The session's range from its threads' (when the manifest did not give it). */
ATF__PRIVATE void atf__session_reader_range(atf_session_reader *r) {
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t i;
    if (!r->range_from_threads) return;
    for (i = 0; i < r->thread_count; i++) {
        const atf_session_thread *t = &r->threads[i];
        if (t->open_result != ATF_OK || !t->reader.index.event_count) continue;
        lo = t->time_min_ns < lo ? t->time_min_ns : lo;
        hi = t->time_max_ns > hi ? t->time_max_ns : hi;
    }
    r->time_start_ns = lo == UINT64_MAX ? 0 : lo;
    r->time_end_ns = hi;
}

/* Opens every listed or found thread. A thread without index.atf is `missing`; one whose
 * files fail to open keeps the reason in open_result (the first also in r->error). */
ATF__PRIVATE atf_result atf__session_reader_open_threads(atf_session_reader *r,
                                                         const atf_reader_options *opt) {
    size_t i, present = 0;
    for (i = 0; i < r->thread_count; i++) {
        atf_session_thread *t = &r->threads[i];
        char dir[1100];
        atf_result rc;
        snprintf(dir, sizeof dir, "%s/thread_%u", r->path, t->slot);
        rc = atf_thread_reader_open(&t->reader, dir, opt);
        t->open_result = rc;
        if (rc == ATF_E_NOT_FOUND) {
            t->missing = 1;
            continue;
        }
        if (rc == ATF_E_NOMEM) { /* no verdict on the thread: the whole open fails */
            atf__error_adopt(&r->error, &t->reader.error);
            return rc;
        }
        if (rc != ATF_OK) {
            atf__error_adopt(&r->error, &t->reader.error);
            continue;
        }
        present++;
        if (!t->os_thread_id) t->os_thread_id = t->reader.index.header.thread_id;
        if (!r->clock_type) r->clock_type = t->reader.index.header.clock_type;
        if (!r->layout) r->layout = (uint32_t)t->reader.index.layout;
        atf__session_thread_ends(t);
    }
    /* The manifest's range when it has one and lists everything (the original tracer
     * wrote 0), else the threads' own. */
    r->range_from_threads = r->manifest != ATF_MANIFEST_OK ||
                            (r->time_start_ns == 0 && r->time_end_ns == 0);
    atf__session_reader_range(r);
    /* a manifest that was read is the session's account of itself, threads or not; a
     * thread directory is enough to say what is wrong with each thread */
    if (present || r->thread_count || r->manifest == ATF_MANIFEST_OK ||
        r->manifest == ATF_MANIFEST_INCOMPLETE)
        return ATF_OK;
    return atf__error_set(&r->error, ATF_E_NOT_FOUND, r->path, 0,
                          "neither a readable manifest.json nor a thread_N directory");
}

ATFDEF atf_result atf_session_reader_open(atf_session_reader *r, const char *dir,
                                          const atf_reader_options *opt) {
    atf__thread_list list;
    atf_result rc = ATF_OK;
    int scan;
    ATF_ASSERT(r);
    memset(r, 0, sizeof *r);
    if (!dir) return atf__error_set(&r->error, ATF_E_ARG, "", 0, "no directory");
    if (strlen(dir) >= sizeof r->path)
        return atf__error_set(&r->error, ATF_E_ARG, dir, 0, "directory path too long");
    atf__copy_str(r->path, sizeof r->path, dir);
    memset(&list, 0, sizeof list);
    list.r = r;
    atf__session_reader_manifest(r, &list, opt);
    scan = atf_session_scan_threads(dir, atf__session_reader_found, &list);
    if (scan != 0 && r->manifest != ATF_MANIFEST_OK)
        rc = atf__error_set_errno(&r->error, ATF_E_NOT_FOUND, dir, "open directory", scan);
    else if (list.failed || !atf__session_reader_join(r, &list))
        rc = atf__error_set(&r->error, ATF_E_NOMEM, dir, 0, "thread list");
    else
        rc = atf__session_reader_open_threads(r, opt);
    ATF_FREE(list.found);
    if (rc != ATF_OK) { /* what was found outlives the close */
        atf_error keep = r->error, keep_manifest_error = r->manifest_error;
        atf_manifest_state keep_manifest = r->manifest;
        atf_session_reader_close(r);
        r->error = keep;
        r->manifest = keep_manifest;
        r->manifest_error = keep_manifest_error;
    }
    return rc;
}

ATFDEF void atf_session_reader_close(atf_session_reader *r) {
    size_t i;
    if (!r) return;
    for (i = 0; i < r->thread_count; i++) {
        atf_thread_reader_close(&r->threads[i].reader);
        ATF_FREE(r->threads[i].order);
    }
    for (i = 0; i < r->symbol_count; i++) ATF_FREE(r->symbols[i].name);
    for (i = 0; i < r->module_count; i++) ATF_FREE(r->modules[i].path);
    ATF_FREE(r->threads);
    ATF_FREE(r->symbols);
    ATF_FREE(r->modules);
    ATF_FREE(r->anchors);
    ATF_FREE(r->recording_error);
    ATF_FREE(r->cmdline);
    memset(r, 0, sizeof *r);
}

/* ---- 12.4 a thread's order ------------------------------------------------------- >>order */
/* The order of a thread's file, settled on first need (the head of >>sessionreader says
 * why): one pass over its timestamps, in pieces, says whether they ever decrease and gives
 * their range. */
typedef struct atf__order_pass {
    uint64_t prev, lo, hi;
    int unordered;
} atf__order_pass;

ATF__PRIVATE void atf__order_pass_add(atf__order_pass *o, const uint8_t *events, uint64_t n) {
    uint64_t i, prev = o->prev, lo = o->lo, hi = o->hi;
    int unordered = o->unordered;
    for (i = 0; i < n; i++) {
        uint64_t ts = atf__load_le64(events + i * ATF_INDEX_EVENT_SIZE);
        unordered |= ts < prev;
        lo = ts < lo ? ts : lo;
        hi = ts > hi ? ts : hi;
        prev = ts;
    }
    o->prev = prev;
    o->lo = lo;
    o->hi = hi;
    o->unordered = unordered;
}

/* The pass over a packed block's stamps without decoding the block: the payload parsed
 * as atf_packed_decode parses it, every other field skipped (the pass costs a third of a
 * decode, and the merge decodes each block anyway). 0 when the payload is malformed, o
 * unchanged: the caller decodes the block then, which says so. */
ATF__PRIVATE int atf__order_pass_packed(atf__order_pass *o, const uint8_t *p, size_t len,
                                        uint32_t count) {
    const uint8_t *end = p + len;
    uint64_t ts = 0, v, prev = o->prev, lo = o->lo, hi = o->hi;
    int unordered = o->unordered;
    uint32_t i;
    for (i = 0; i < count; i++) {
        unsigned tag;
        if (p == end) return 0;
        tag = *p++;
        if (tag & 0x80u || (tag & 0x30u) == 0x30u) return 0;
        if ((tag & 3u) == ATF__PACK_EXPLICIT_KIND && !(p = atf__varint_skip(p, end, 32))) return 0;
        if (!(p = atf__varint_get(p, end, 64, &v))) return 0;
        ts += v;
        if ((tag & ATF__PACK_FUNCTION) && !(p = atf__varint_skip(p, end, 64))) return 0;
        if ((tag & ATF__PACK_DEPTH) && !(p = atf__varint_skip(p, end, 32))) return 0;
        if ((tag & ATF__PACK_LINK_GIVEN) && !(p = atf__varint_skip(p, end, 32))) return 0;
        if ((tag & ATF__PACK_THREAD) && !(p = atf__varint_skip(p, end, 32))) return 0;
        unordered |= ts < prev;
        lo = ts < lo ? ts : lo;
        hi = ts > hi ? ts : hi;
        prev = ts;
    }
    if (p != end) return 0;
    o->prev = prev;
    o->lo = lo;
    o->hi = hi;
    o->unordered = unordered;
    return 1;
}

/* Bytes the pass reads per call when it reads the file (8192 events); a file whose events
 * fit one read is read through the mapping. A multiple of 32; the fuzz target makes it
 * small, to reach the chunked reads with small inputs. */
#ifndef ATF__ORDER_CHUNK
#  define ATF__ORDER_CHUNK (256u * 1024u)
#endif

/* The pass over a mapped index file through read calls rather than the mapping: touching
 * the mapping would map every page of the file into the process (its resident size grows
 * by the file's size), and mapping a page costs more than copying it (x86-64 Linux, a
 * 64 MB file in the page cache: 10 ms read, 85 ms through the mapping). A merge that
 * seeks into a narrow window then maps only the pages it reads. 0 when the file cannot
 * be opened or read, or does not show the events the mapping shows at both ends
 * (replaced since the open): the caller reads the mapping then. */
ATF__PRIVATE int atf__order_pass_file(atf__order_pass *o, const atf_index_reader *ix) {
    uint64_t n = ix->event_count, done = 0, per = ATF__ORDER_CHUNK / ATF_INDEX_EVENT_SIZE;
    uint64_t at = (uint64_t)(ix->events - ix->image.data);
    uint8_t *buf;
    atf__fd fd = atf__fd_open_read(ix->path);
    int ok;
    if (fd == ATF__FD_NONE) return 0;
    buf = (uint8_t *)ATF_MALLOC(ATF__ORDER_CHUNK);
    ok = buf != NULL;
    while (ok && done < n) {
        uint64_t k = n - done < per ? n - done : per;
        ok = atf__fd_pread(fd, buf, (size_t)(k * ATF_INDEX_EVENT_SIZE),
                           at + done * ATF_INDEX_EVENT_SIZE) == 0 &&
             (done || atf__load_le64(buf) == atf__load_le64(ix->events));
        if (ok) atf__order_pass_add(o, buf, k);
        done += k;
    }
    ATF_FREE(buf);
    atf__fd_close(fd);
    return ok && o->prev == atf__load_le64(ix->events + (n - 1) * ATF_INDEX_EVENT_SIZE);
}

/* Settles t's order and range (once; O(1) when already done). */
ATF__PRIVATE void atf__session_thread_check(atf_session_thread *t) {
    const atf_index_reader *ix = &t->reader.index;
    atf__order_pass o;
    if (t->out_of_order != ATF_ORDER_UNKNOWN || t->open_result != ATF_OK) return;
    memset(&o, 0, sizeof o);
    o.lo = UINT64_MAX;
    if (ix->packed) { /* block by block, their stamps alone */
        uint64_t k;
        for (k = 0; k < ix->block_count; k++) {
            const uint8_t *h = ix->image.data + ix->block_at[k];
            uint32_t n = atf__load_le32(h);
            if (!atf__order_pass_packed(&o, h + ATF_PACKED_BLOCK_HEADER_SIZE, atf__load_le32(h + 4), n))
                atf__order_pass_add(&o, atf__index_record(ix, k * ix->block_events), n);
        }
    } else if (ix->image.kind != ATF__IMAGE_MAPPED ||
               ix->event_count * ATF_INDEX_EVENT_SIZE <= ATF__ORDER_CHUNK ||
               !atf__order_pass_file(&o, ix)) {
        memset(&o, 0, sizeof o);
        o.lo = UINT64_MAX;
        atf__order_pass_add(&o, ix->events, ix->event_count);
    }
    t->out_of_order = o.unordered;
    t->time_min_ns = o.lo;
    t->time_max_ns = o.hi;
}

ATFDEF int atf_session_reader_check_order(atf_session_reader *r, atf_session_thread *t) {
    size_t i;
    int any = 0;
    ATF_ASSERT(r);
    if (t) {
        atf__session_thread_check(t);
    } else {
        for (i = 0; i < r->thread_count; i++) {
            atf__session_thread_check(&r->threads[i]);
            any |= r->threads[i].out_of_order == 1;
        }
    }
    atf__session_reader_range(r);
    return t ? t->out_of_order : any;
}

/* ---- 12.5 lookups -------------------------------------------------------------- >>lookups */
/* An open reader's lookups: a symbol by function id, a timing anchor by name and its
 * clock's reading at a time, a thread by slot, an index file's first event at a time. */

/* The first entry of function_id in r->symbols (sorted), or NULL. */
ATF__PRIVATE atf_session_symbol *atf__session_reader_find_symbol(const atf_session_reader *r,
                                                                 uint64_t function_id) {
    size_t lo = 0, hi = r->symbol_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->symbols[mid].function_id < function_id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->symbol_count && r->symbols[lo].function_id == function_id ? &r->symbols[lo] : NULL;
}

ATFDEF const char *atf_session_reader_symbol(const atf_session_reader *r, uint64_t function_id) {
    const atf_session_symbol *y = atf__session_reader_find_symbol(r, function_id);
    return y ? y->name : NULL;
}

ATFDEF atf_result atf_session_reader_name_symbol(atf_session_reader *r, uint64_t function_id,
                                                 const char *name) {
    atf_session_symbol *y;
    if (!r || !name) return ATF_E_ARG;
    y = atf__session_reader_find_symbol(r, function_id);
    if (!y) return ATF_E_NOT_FOUND;
    if (y->name) return ATF_OK;
    y->name = atf__strdup(name);
    return y->name ? ATF_OK : ATF_E_NOMEM;
}

ATFDEF const atf_session_anchor *atf_session_reader_anchor(const atf_session_reader *r,
                                                           const char *name) {
    size_t i;
    if (!r || !name) return NULL;
    for (i = 0; i < r->anchor_count; i++)
        if (strcmp(r->anchors[i].name, name) == 0) return &r->anchors[i];
    return NULL;
}

/* floor(d * timescale / 1e9) for d >= 0, split as d = q * 1e9 + rem so that no product
 * exceeds 64 bits before the overflow check: d * ts / 1e9 = q * ts + rem * ts / 1e9.
 * *ceil_out is the same rounded up. 0 when it does not fit 64 bits. */
ATF__PRIVATE int atf__anchor_scale(uint64_t d, uint32_t timescale, uint64_t *floor_out,
                                   uint64_t *ceil_out) {
    uint64_t q = d / 1000000000u, rem = d % 1000000000u;
    uint64_t part = rem * timescale; /* < 1e9 * 2^31 < 2^61 */
    uint64_t low = part / 1000000000u;
    if (q && q > (UINT64_MAX - low - 1) / timescale) return 0;
    *floor_out = q * timescale + low;
    *ceil_out = *floor_out + (part % 1000000000u != 0);
    return 1;
}

ATFDEF atf_result atf_anchor_value_at(const atf_session_anchor *a, uint64_t t_ns, int64_t *out) {
    const uint64_t bias = (uint64_t)1 << 63;
    uint64_t fl, ce, u;
    int before;
    if (!a || !out || a->timescale <= 0) return ATF_E_ARG;
    before = t_ns < a->host_ns;
    if (!atf__anchor_scale(before ? a->host_ns - t_ns : t_ns - a->host_ns,
                           (uint32_t)a->timescale, &fl, &ce))
        return ATF_E_RANGE;
    /* value + 2^63 maps int64 onto uint64 in order; before host_ns floor(-x) = -ceil(x) */
    u = (uint64_t)a->value + bias;
    if (before ? ce > u : fl > UINT64_MAX - u) return ATF_E_RANGE;
    u = before ? u - ce : u + fl;
    *out = u >= bias ? (int64_t)(u - bias) : -(int64_t)(bias - u - 1) - 1;
    return ATF_OK;
}

ATFDEF atf_session_thread *atf_session_reader_thread(atf_session_reader *r, uint32_t slot) {
    size_t lo = 0, hi = r->thread_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->threads[mid].slot < slot) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->thread_count && r->threads[lo].slot == slot ? &r->threads[lo] : NULL;
}

ATFDEF uint64_t atf_index_reader_seek(const atf_index_reader *r, uint64_t t_ns, uint64_t *probes) {
    uint64_t lo = 0, hi = r->event_count, n = 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        n++;
        if (atf__load_le64(atf__index_record(r, mid)) < t_ns) lo = mid + 1;
        else hi = mid;
    }
    if (probes) *probes = n;
    return lo;
}

/* ---- 12.6 merge ------------------------------------------------------------------ >>merge */
/* The k-way merge: a loser tree of 64-bit keys (timestamp above thread index, branch-free
 * min/max) picks the next thread, and a thread that wins twice in a row keeps going while
 * its timestamps stay below the runner-up's, one comparison per event in the inline
 * atf_merge_next, so bursty interleavings cost close to a sequential scan. */

/* The timestamp of record seq among records of `stride` bytes that begin with it. */
#define ATF__EVENT_TS(events, seq) atf__load_le64((events) + (seq) * stride)

/* The end of the non-decreasing run of seq[] that starts at a. */
ATF__PRIVATE uint64_t atf__sort_run_end(const uint64_t *seq, uint64_t a, uint64_t n,
                                        const uint8_t *events, size_t stride) {
    uint64_t prev = ATF__EVENT_TS(events, seq[a]);
    for (a++; a < n; a++) {
        uint64_t ts = ATF__EVENT_TS(events, seq[a]);
        if (ts < prev) break;
        prev = ts;
    }
    return a;
}

/* Sorts seq numbers by timestamp, stably (equal timestamps keep file order): a natural
 * merge sort, merging the ascending runs the file already has, so a nearly ordered file
 * (the usual case) takes a pass or two. `tmp` has room for n; the result is in seq. */
ATF__PRIVATE void atf__sort_by_time(uint64_t *seq, uint64_t *tmp, uint64_t n, const uint8_t *events,
                                    size_t stride) {
    uint64_t *from = seq, *to = tmp;
    for (;;) {
        uint64_t a = 0, runs = 0;
        while (a < n) {
            uint64_t b = atf__sort_run_end(from, a, n, events, stride), c = b, o = a, x = a, y = b;
            if (b < n) c = atf__sort_run_end(from, b, n, events, stride);
            while (x < b && y < c) {
                uint64_t tx = ATF__EVENT_TS(events, from[x]), ty = ATF__EVENT_TS(events, from[y]);
                to[o++] = ty < tx ? from[y++] : from[x++];
            }
            while (x < b) to[o++] = from[x++];
            while (y < c) to[o++] = from[y++];
            runs++;
            a = c;
        }
        { uint64_t *swap = from; from = to; to = swap; }
        if (runs <= 1) break;
    }
    if (from != seq) memcpy(seq, from, (size_t)n * sizeof *seq);
}

ATF__PRIVATE atf_result atf__thread_build_order(atf_session_thread *t) {
    uint64_t n = t->reader.index.event_count, i, *tmp;
    if (t->order || !t->out_of_order) return ATF_OK;
    if (n > SIZE_MAX / sizeof(uint64_t)) return ATF_E_NOMEM;
    t->order = (uint64_t *)ATF_MALLOC((size_t)n * sizeof(uint64_t));
    tmp = (uint64_t *)ATF_MALLOC((size_t)n * sizeof(uint64_t));
    if (!t->order || !tmp) {
        ATF_FREE(t->order);
        ATF_FREE(tmp);
        t->order = NULL;
        return ATF_E_NOMEM;
    }
    for (i = 0; i < n; i++) t->order[i] = i;
    if (t->reader.index.packed) { /* its timestamps alone, 8 bytes each, as they decode */
        uint8_t *ts = (uint8_t *)ATF_MALLOC((size_t)n * 8);
        if (!ts) {
            ATF_FREE(t->order);
            ATF_FREE(tmp);
            t->order = NULL;
            return ATF_E_NOMEM;
        }
        for (i = 0; i < n; i++) memcpy(ts + i * 8, atf__index_record(&t->reader.index, i), 8);
        atf__sort_by_time(t->order, tmp, n, ts, 8);
        ATF_FREE(ts);
    } else {
        atf__sort_by_time(t->order, tmp, n, t->reader.index.events, ATF_INDEX_EVENT_SIZE);
    }
    ATF_FREE(tmp);
    return ATF_OK;
}

/* Timestamp of the cursor's event at position p of its time order. */
ATF__PRIVATE uint64_t atf__cursor_ts(const atf__merge_cursor *c, uint64_t p) {
    return atf__load_le64(atf__index_record_in(c->reader, c->cache, c->order ? c->order[p] : p));
}

/* First position in [0, hi) whose timestamp is >= t (hi when none); counts probes. */
ATF__PRIVATE uint64_t atf__cursor_search(const atf__merge_cursor *c, uint64_t hi, uint64_t t,
                                         uint64_t *probes) {
    uint64_t lo = 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        (*probes)++;
        if (atf__cursor_ts(c, mid) < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The key of cursor i at position p of its time order: the timestamp above the cursor's
 * index, so that one unsigned comparison orders (timestamp, slot); UINT64_MAX past its
 * end. Only used when every timestamp of the merge fits (m->linear is 0). */
ATF__INLINE uint64_t atf__merge_key(const atf_merge *m, size_t i, uint64_t p) {
    const atf__merge_cursor *c;
    if (i >= m->cursor_count) return UINT64_MAX; /* a leaf that pads the tree */
    c = &m->cursors[i];
    if (p >= c->end) return UINT64_MAX;
    /* threads that alternate read many streams at once: fetch this one's next lines early */
    if (!c->order && !c->reader->packed)
        ATF__PREFETCH(c->reader->events + p * ATF_INDEX_EVENT_SIZE, ATF__MERGE_KEY_AHEAD);
    return ((atf__cursor_ts(c, p) - m->base) << m->shift) | i;
}

/* Plays the matches below node n (leaves at [leaves, 2 * leaves)); stores each loser in
 * its node and returns the winner. Depth log2(leaves). */
ATF__PRIVATE uint64_t atf__merge_build(atf_merge *m, size_t n) {
    uint64_t a, b;
    if (n >= m->leaves) {
        size_t i = n - m->leaves;
        return atf__merge_key(m, i, i < m->cursor_count ? m->cursors[i].pos : 0);
    }
    a = atf__merge_build(m, 2 * n);
    b = atf__merge_build(m, 2 * n + 1);
    m->tree[n] = a < b ? b : a;
    return a < b ? a : b;
}

/* Chooses the key layout for the merge's time span; linear selection when it cannot fit
 * (a span above 2^57 ns, about 4.5 years, with 64 threads: corrupt timestamps, mostly). */
ATF__PRIVATE void atf__merge_keys(atf_merge *m) {
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t i;
    m->shift = 1;
    while (((size_t)1 << m->shift) <= m->leaves) m->shift++; /* leaves < 2^shift */
    for (i = 0; i < m->cursor_count; i++) {
        const atf_session_thread *t = m->cursors[i].thread;
        if (!t->reader.index.event_count) continue;
        lo = t->time_min_ns < lo ? t->time_min_ns : lo;
        hi = t->time_max_ns > hi ? t->time_max_ns : hi;
    }
    m->base = lo == UINT64_MAX ? 0 : lo;
    m->linear = lo != UINT64_MAX && ((hi - lo) >> (64 - m->shift)) != 0;
}

/* Starts the run of cursor i, up to position end and timestamp lim. */
ATF__PRIVATE void atf__merge_start(atf_merge *m, size_t i, uint64_t end, uint64_t lim) {
    m->run = &m->cursors[i];
    m->run_end = end;
    m->lim = lim;
}

/* The slow path of atf_merge_next when keys do not fit: the best and second-best head
 * by a scan of every cursor, O(threads). The best runs until the second's turn. */
ATF__PRIVATE int atf__merge_refill_linear(atf_merge *m) {
    size_t i, best = (size_t)-1, second = (size_t)-1;
    uint64_t bt = 0, st = 0;
    for (i = 0; i < m->cursor_count; i++) {
        const atf__merge_cursor *c = &m->cursors[i];
        uint64_t ts;
        if (c->pos >= c->end) continue;
        ts = atf__cursor_ts(c, c->pos);
        if (best == (size_t)-1 || ts < bt) { /* ties: the lower index is met first */
            second = best;
            st = bt;
            best = i;
            bt = ts;
        } else if (second == (size_t)-1 || ts < st) {
            second = i;
            st = ts;
        }
    }
    if (best == (size_t)-1) {
        m->run = NULL;
        return 0;
    }
    /* best < second by index when their timestamps tie, so best may take st itself */
    atf__merge_start(m, best, m->cursors[best].end,
                     second == (size_t)-1 ? UINT64_MAX : best < second ? st : st - 1);
    return 1;
}

ATFDEF atf_result atf__merge_end(atf_merge_item *out) {
    memset(out, 0, sizeof *out);
    return ATF_E_RANGE;
}

/* The slow path of atf_merge_next: ends the current run, replays the winner's new key up
 * the loser tree (log2 leaves branch-free min/max steps) and starts the run of the new
 * winner. When the same thread wins twice in a row (a bursty trace), its run lasts while
 * its events stay before the runner-up, the best loser on its path (m->lim is the last
 * timestamp it may take); otherwise the run is the one event, which is cheaper when the
 * threads alternate. Returns 0 when every cursor is exhausted. */
ATFDEF int atf__merge_refill(atf_merge *m) {
    uint64_t x, best, mask = ((uint64_t)1 << m->shift) - 1;
    size_t i, n, before = (size_t)-1;
    unsigned d;
    if (m->run) {
        before = m->run->index;
        if (m->linear) return atf__merge_refill_linear(m);
        /* its next key was computed when its run began (the load is off the critical path) */
        x = m->run->key_pos == m->run->pos ? m->run->key : atf__merge_key(m, before, m->run->pos);
        for (n = (m->leaves + before) >> 1, d = m->depth; d; d--, n >>= 1) {
            uint64_t y = m->tree[n];
            m->tree[n] = x < y ? y : x;
            x = x < y ? x : y;
        }
        m->tree[0] = x;
    } else if (m->linear) {
        return atf__merge_refill_linear(m);
    }
    x = m->tree[0];
    if (x == UINT64_MAX) {
        m->run = NULL;
        return 0;
    }
    i = (size_t)(x & mask);
    if (i != before) { /* a new lead: hand out its head alone, and key the event after it */
        atf__merge_cursor *c = &m->cursors[i];
        c->key_pos = c->pos + 1;
        c->key = atf__merge_key(m, i, c->key_pos);
        atf__merge_start(m, i, c->pos + 1, UINT64_MAX);
        return 1;
    }
    best = UINT64_MAX;
    for (n = (m->leaves + i) >> 1, d = m->depth; d; d--, n >>= 1) best = m->tree[n] < best ? m->tree[n] : best;
    /* events (ts, i) before best: ts <= best's ts when i ranks first on a tie, else
     * ts < best's ts (which is then above x's, so the - 1 does not wrap) */
    atf__merge_start(m, i, m->cursors[i].end,
                     best == UINT64_MAX ? UINT64_MAX
                                        : (best >> m->shift) + m->base - ((best & mask) < i ? 1 : 0));
    return 1;
}

ATF__PRIVATE int atf__merge_selected(const atf_merge_filter *f, uint32_t slot) {
    size_t i;
    if (!f || !f->slots) return 1;
    for (i = 0; i < f->slot_count; i++)
        if (f->slots[i] == slot) return 1;
    return 0;
}

ATFDEF atf_result atf_merge_init(atf_merge *m, atf_session_reader *r, const atf_merge_filter *f) {
    size_t i, count = 0;
    uint64_t ignored = 0;
    ATF_ASSERT(m && r);
    memset(m, 0, sizeof *m);
    m->reader = r;
    if (f) {
        m->kinds = f->kinds;
        m->from_ns = f->from_ns;
        m->to_ns = f->to_ns;
    }
    for (i = 0; i < r->thread_count; i++)
        if (r->threads[i].open_result == ATF_OK && atf__merge_selected(f, r->threads[i].slot)) count++;
    m->leaves = 1;
    while (m->leaves < count) {
        m->leaves *= 2;
        m->depth++;
    }
    m->cursors = (atf__merge_cursor *)ATF_MALLOC((count ? count : 1) * sizeof *m->cursors);
    m->tree = (uint64_t *)ATF_MALLOC(m->leaves * sizeof *m->tree);
    if (!m->cursors || !m->tree) {
        atf_merge_deinit(m);
        return ATF_E_NOMEM;
    }
    for (i = 0; i < r->thread_count; i++) {
        atf_session_thread *t = &r->threads[i];
        atf__merge_cursor *c;
        if (t->open_result != ATF_OK || !atf__merge_selected(f, t->slot)) continue;
        atf__session_thread_check(t);
        if (atf__thread_build_order(t) != ATF_OK) {
            atf_merge_deinit(m);
            return ATF_E_NOMEM;
        }
        c = &m->cursors[m->cursor_count++];
        memset(c, 0, sizeof *c);
        if (t->reader.index.packed && (c->cache = atf__packed_cache_new(&t->reader.index)) == NULL) {
            atf_merge_deinit(m);
            return ATF_E_NOMEM;
        }
        c->thread = t;
        c->index = m->cursor_count - 1;
        c->layout = t->reader.index.layout;
        c->reader = &t->reader.index;
        c->order = t->order;
        c->end = t->reader.index.event_count;
        if (m->to_ns && m->to_ns < UINT64_MAX) c->end = atf__cursor_search(c, c->end, m->to_ns + 1, &ignored);
    }
    atf__session_reader_range(r); /* the threads just checked */
    atf__merge_keys(m);
    return atf_merge_seek(m, m->from_ns);
}

ATFDEF void atf_merge_deinit(atf_merge *m) {
    size_t i;
    if (!m) return;
    for (i = 0; i < m->cursor_count; i++) atf__packed_cache_free(m->cursors[i].cache);
    ATF_FREE(m->cursors);
    ATF_FREE(m->tree);
    memset(m, 0, sizeof *m);
}

/* The first gap of c's thread at or after position `from` (ordered threads), as the seq
 * at which atf_merge_next looks again; every seq for a permuted thread with gaps. */
ATF__PRIVATE uint64_t atf__merge_next_gap(const atf__merge_cursor *c, uint64_t from) {
    const atf_thread_reader *t = &c->thread->reader;
    size_t lo = 0, hi = t->gap_count;
    if (!t->gap_count) return UINT64_MAX;
    if (c->order) return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->gaps[mid].index_seq < from) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->gap_count ? t->gaps[lo].index_seq : UINT64_MAX;
}

/* An ordered thread: the last gap in (previous event handed out, seq], so that a gap
 * before an event the kind filter skipped is reported with the next one handed out. */
ATFDEF const atf_gap *atf__merge_gap(atf__merge_cursor *c, uint64_t seq) {
    const atf_thread_reader *t = &c->thread->reader;
    size_t lo = 0, hi = t->gap_count;
    if (c->order) return atf_thread_reader_gap_before(t, seq);
    while (lo < hi) { /* first gap past seq */
        size_t mid = lo + (hi - lo) / 2;
        if (t->gaps[mid].index_seq <= seq) lo = mid + 1;
        else hi = mid;
    }
    c->gap_seq = lo < t->gap_count ? t->gaps[lo].index_seq : UINT64_MAX;
    return lo ? &t->gaps[lo - 1] : NULL;
}

ATFDEF atf_result atf_merge_seek(atf_merge *m, uint64_t t_ns) {
    size_t i;
    if (t_ns < m->from_ns) t_ns = m->from_ns;
    m->probes = 0;
    for (i = 0; i < m->cursor_count; i++) {
        atf__merge_cursor *c = &m->cursors[i];
        c->pos = atf__cursor_search(c, c->end, t_ns, &m->probes);
        c->gap_seq = atf__merge_next_gap(c, c->pos);
        c->key_pos = UINT64_MAX; /* no key computed */
    }
    if (!m->linear) m->tree[0] = atf__merge_build(m, 1);
    m->run = NULL;
    m->run_end = 0;
    return ATF_OK;
}


/* ==== 13. ktrace ================================================================= >>ktrace */
/* Darwin ktrace v3 files. Open decodes the 64-byte header and checks its magic,
 * header_size and timebase against the file; next walks the 8-byte aligned chunk headers,
 * checking each size against the bytes left before handing out the data, so no value in
 * a file can lead a read out of the image, and every step advances by 16 bytes or more. */
ATF__PRIVATE atf_result atf__ktrace_reader_setup(atf_ktrace_reader *r, const char *name) {
    const uint8_t *p = r->image.data;
    uint64_t size = r->image.size;
    atf_ktrace_header *h = &r->header;
    r->file_size = size;
    if (size < ATF_KTRACE_FILE_HEADER_SIZE)
        return atf__error_set_values(&r->error, ATF_E_TRUNCATED, name, 0,
                                     "file shorter than the ktrace header",
                                     ATF_KTRACE_FILE_HEADER_SIZE, size);
    h->magic = atf__load_le32(p);
    if (h->magic == 0x0003aa55u) /* ATF_KTRACE_MAGIC byte-swapped */
        return atf__error_set_values(&r->error, ATF_E_ENDIAN, name, 0,
                                     "ktrace magic is byte-swapped (big-endian file)",
                                     ATF_KTRACE_MAGIC, h->magic);
    if (h->magic != ATF_KTRACE_MAGIC)
        return atf__error_set_values(&r->error, ATF_E_MAGIC, name, 0, "ktrace v3 magic",
                                     ATF_KTRACE_MAGIC, h->magic);
    h->major = atf__load_le16(p + 4);
    h->minor = atf__load_le16(p + 6);
    h->header_size = atf__load_le64(p + 8);
    h->timebase_numer = atf__load_le32(p + 16);
    h->timebase_denom = atf__load_le32(p + 20);
    h->timestamp = atf__load_le64(p + 24);
    h->walltime_secs = atf__load_le64(p + 32);
    h->walltime_usecs = atf__load_le32(p + 40);
    h->minutes_west = atf__load_le32(p + 44);
    h->dst = atf__load_le32(p + 48);
    h->flags = atf__load_le32(p + 52);
    if (h->header_size < ATF_KTRACE_FILE_HEADER_SIZE - 16)
        return atf__error_set_values(&r->error, ATF_E_CORRUPT, name, 8,
                                     "header_size below the header structure",
                                     ATF_KTRACE_FILE_HEADER_SIZE - 16, h->header_size);
    if (h->header_size > size - 16)
        return atf__error_set_values(&r->error, ATF_E_TRUNCATED, name, 8,
                                     "header_size beyond end of file (expected at most)",
                                     size - 16, h->header_size);
    if (h->timebase_numer == 0)
        return atf__error_set_values(&r->error, ATF_E_CORRUPT, name, 16, "timebase numerator",
                                     1, 0);
    if (h->timebase_denom == 0)
        return atf__error_set_values(&r->error, ATF_E_CORRUPT, name, 20, "timebase denominator",
                                     1, 0);
    r->next = ATF_KTRACE_FILE_HEADER_SIZE;
    r->state = ATF_OK;
    return ATF_OK;
}

ATF__PRIVATE atf_result atf__ktrace_reader_open(atf_ktrace_reader *r, const char *path,
                                                const void *data, size_t size, const char *name,
                                                const atf_reader_options *opt) {
    atf_result rc;
    ATF_ASSERT(r);
    memset(r, 0, sizeof *r);
    atf__copy_str(r->path, sizeof r->path, name);
    rc = atf__image_load(&r->image, path, data, size, opt, &r->error);
    if (rc == ATF_OK) rc = atf__ktrace_reader_setup(r, r->path);
    if (rc != ATF_OK) {
        atf_error keep = r->error;
        atf__file_unmap(&r->image);
        memset(r, 0, sizeof *r);
        r->error = keep;
        r->state = rc;
    }
    return rc;
}

ATFDEF atf_result atf_ktrace_reader_open(atf_ktrace_reader *r, const char *path,
                                         const atf_reader_options *opt) {
    if (!path) return ATF_E_ARG;
    return atf__ktrace_reader_open(r, path, NULL, 0, path, opt);
}

ATFDEF atf_result atf_ktrace_reader_open_memory(atf_ktrace_reader *r, const void *data,
                                                size_t size, const char *name,
                                                const atf_reader_options *opt) {
    return atf__ktrace_reader_open(r, NULL, data, size, name ? name : "<memory>", opt);
}

ATFDEF void atf_ktrace_reader_close(atf_ktrace_reader *r) {
    if (!r) return;
    atf__file_unmap(&r->image);
    memset(r, 0, sizeof *r);
}

/* Stops the walk for good: every later call returns `rc`. */
ATF__PRIVATE atf_result atf__ktrace_stop(atf_ktrace_reader *r, atf_result rc) {
    r->state = rc;
    return rc;
}

ATFDEF atf_result atf_ktrace_reader_next(atf_ktrace_reader *r, atf_ktrace_chunk *out) {
    uint64_t at, file_size, header_end, room, end, pad;
    const uint8_t *p;
    ATF_ASSERT(r && out);
    memset(out, 0, sizeof *out);
    if (r->state != ATF_OK) return r->state;
    at = r->next;
    file_size = r->image.size;
    header_end = 16 + r->header.header_size; /* <= file_size, checked at open */
    if (at < header_end) {
        if (header_end - at < ATF_KTRACE_CHUNK_HEADER_SIZE)
            return atf__ktrace_stop(r, atf__error_set_values(
                &r->error, ATF_E_CORRUPT, r->path, at,
                "16 + header_size ends inside a chunk header (bytes left)",
                ATF_KTRACE_CHUNK_HEADER_SIZE, header_end - at));
    } else if (at >= file_size || file_size - at < ATF_KTRACE_CHUNK_HEADER_SIZE) {
        return atf__ktrace_stop(r, ATF_E_RANGE); /* the end, or trailing padding */
    }
    p = r->image.data + at;
    out->size = atf__load_le64(p + 8);
    room = (at < header_end ? header_end : file_size) - at - ATF_KTRACE_CHUNK_HEADER_SIZE;
    if (out->size > room) {
        uint64_t size = out->size;
        memset(out, 0, sizeof *out);
        if (at < header_end && size <= file_size - at - ATF_KTRACE_CHUNK_HEADER_SIZE)
            return atf__ktrace_stop(r, atf__error_set_values(
                &r->error, ATF_E_CORRUPT, r->path, at,
                "header chunk data crosses 16 + header_size (bytes left)", room, size));
        return atf__ktrace_stop(r, atf__error_set_values(
            &r->error, ATF_E_TRUNCATED, r->path, at,
            "chunk data beyond end of file (bytes left)",
            file_size - at - ATF_KTRACE_CHUNK_HEADER_SIZE, size));
    }
    out->offset = at;
    out->tag = atf__load_le32(p);
    out->major = atf__load_le16(p + 4);
    out->minor = atf__load_le16(p + 6);
    out->data = p + ATF_KTRACE_CHUNK_HEADER_SIZE;
    out->section = at < header_end ? ATF_KTRACE_HEADER_CHUNK : ATF_KTRACE_BODY_CHUNK;
    /* The next chunk header is at the next multiple of 8; padding cut off by the end of
     * the file just ends the walk. */
    end = at + ATF_KTRACE_CHUNK_HEADER_SIZE + out->size;
    pad = (8 - (end & 7)) & 7;
    r->next = pad <= file_size - end ? end + pad : file_size;
    return ATF_OK;
}

ATFDEF uint64_t atf_ktrace_time_ns(const atf_ktrace_reader *r, uint64_t mach_ticks) {
    /* ticks = q * denom + rem, so ticks * numer / denom = q * numer + rem * numer / denom
     * exactly, and rem * numer < 2^64. */
    uint64_t numer = r->header.timebase_numer, denom = r->header.timebase_denom;
    uint64_t q, rem, low;
    ATF_ASSERT(denom != 0); /* an open reader */
    if (denom == 0) return 0;
    q = mach_ticks / denom;
    rem = mach_ticks % denom;
    low = rem * numer / denom;
    if (q > (UINT64_MAX - low) / (numer ? numer : 1)) return UINT64_MAX;
    return q * numer + low;
}

ATFDEF uint64_t atf_ktrace_wall_ns(const atf_ktrace_reader *r) {
    uint64_t usecs_ns = (uint64_t)r->header.walltime_usecs * 1000u;
    if (r->header.walltime_secs > (UINT64_MAX - usecs_ns) / 1000000000u) return UINT64_MAX;
    return r->header.walltime_secs * 1000000000u + usecs_ns;
}


/* ==== generated tables =========================================================== >>tables */
/* crc32c tables: generated by tools/gen/crc32c_tables.c; do not edit. */
/* [k][b]: the register after byte b followed by k zero bytes, from 0. */
static const uint32_t atf__crc32c__table[16][256] = {
  {0x00000000, 0xF26B8303, 0xE13B70F7, 0x1350F3F4, 0xC79A971F, 0x35F1141C, 0x26A1E7E8, 0xD4CA64EB,
   0x8AD958CF, 0x78B2DBCC, 0x6BE22838, 0x9989AB3B, 0x4D43CFD0, 0xBF284CD3, 0xAC78BF27, 0x5E133C24,
   0x105EC76F, 0xE235446C, 0xF165B798, 0x030E349B, 0xD7C45070, 0x25AFD373, 0x36FF2087, 0xC494A384,
   0x9A879FA0, 0x68EC1CA3, 0x7BBCEF57, 0x89D76C54, 0x5D1D08BF, 0xAF768BBC, 0xBC267848, 0x4E4DFB4B,
   0x20BD8EDE, 0xD2D60DDD, 0xC186FE29, 0x33ED7D2A, 0xE72719C1, 0x154C9AC2, 0x061C6936, 0xF477EA35,
   0xAA64D611, 0x580F5512, 0x4B5FA6E6, 0xB93425E5, 0x6DFE410E, 0x9F95C20D, 0x8CC531F9, 0x7EAEB2FA,
   0x30E349B1, 0xC288CAB2, 0xD1D83946, 0x23B3BA45, 0xF779DEAE, 0x05125DAD, 0x1642AE59, 0xE4292D5A,
   0xBA3A117E, 0x4851927D, 0x5B016189, 0xA96AE28A, 0x7DA08661, 0x8FCB0562, 0x9C9BF696, 0x6EF07595,
   0x417B1DBC, 0xB3109EBF, 0xA0406D4B, 0x522BEE48, 0x86E18AA3, 0x748A09A0, 0x67DAFA54, 0x95B17957,
   0xCBA24573, 0x39C9C670, 0x2A993584, 0xD8F2B687, 0x0C38D26C, 0xFE53516F, 0xED03A29B, 0x1F682198,
   0x5125DAD3, 0xA34E59D0, 0xB01EAA24, 0x42752927, 0x96BF4DCC, 0x64D4CECF, 0x77843D3B, 0x85EFBE38,
   0xDBFC821C, 0x2997011F, 0x3AC7F2EB, 0xC8AC71E8, 0x1C661503, 0xEE0D9600, 0xFD5D65F4, 0x0F36E6F7,
   0x61C69362, 0x93AD1061, 0x80FDE395, 0x72966096, 0xA65C047D, 0x5437877E, 0x4767748A, 0xB50CF789,
   0xEB1FCBAD, 0x197448AE, 0x0A24BB5A, 0xF84F3859, 0x2C855CB2, 0xDEEEDFB1, 0xCDBE2C45, 0x3FD5AF46,
   0x7198540D, 0x83F3D70E, 0x90A324FA, 0x62C8A7F9, 0xB602C312, 0x44694011, 0x5739B3E5, 0xA55230E6,
   0xFB410CC2, 0x092A8FC1, 0x1A7A7C35, 0xE811FF36, 0x3CDB9BDD, 0xCEB018DE, 0xDDE0EB2A, 0x2F8B6829,
   0x82F63B78, 0x709DB87B, 0x63CD4B8F, 0x91A6C88C, 0x456CAC67, 0xB7072F64, 0xA457DC90, 0x563C5F93,
   0x082F63B7, 0xFA44E0B4, 0xE9141340, 0x1B7F9043, 0xCFB5F4A8, 0x3DDE77AB, 0x2E8E845F, 0xDCE5075C,
   0x92A8FC17, 0x60C37F14, 0x73938CE0, 0x81F80FE3, 0x55326B08, 0xA759E80B, 0xB4091BFF, 0x466298FC,
   0x1871A4D8, 0xEA1A27DB, 0xF94AD42F, 0x0B21572C, 0xDFEB33C7, 0x2D80B0C4, 0x3ED04330, 0xCCBBC033,
   0xA24BB5A6, 0x502036A5, 0x4370C551, 0xB11B4652, 0x65D122B9, 0x97BAA1BA, 0x84EA524E, 0x7681D14D,
   0x2892ED69, 0xDAF96E6A, 0xC9A99D9E, 0x3BC21E9D, 0xEF087A76, 0x1D63F975, 0x0E330A81, 0xFC588982,
   0xB21572C9, 0x407EF1CA, 0x532E023E, 0xA145813D, 0x758FE5D6, 0x87E466D5, 0x94B49521, 0x66DF1622,
   0x38CC2A06, 0xCAA7A905, 0xD9F75AF1, 0x2B9CD9F2, 0xFF56BD19, 0x0D3D3E1A, 0x1E6DCDEE, 0xEC064EED,
   0xC38D26C4, 0x31E6A5C7, 0x22B65633, 0xD0DDD530, 0x0417B1DB, 0xF67C32D8, 0xE52CC12C, 0x1747422F,
   0x49547E0B, 0xBB3FFD08, 0xA86F0EFC, 0x5A048DFF, 0x8ECEE914, 0x7CA56A17, 0x6FF599E3, 0x9D9E1AE0,
   0xD3D3E1AB, 0x21B862A8, 0x32E8915C, 0xC083125F, 0x144976B4, 0xE622F5B7, 0xF5720643, 0x07198540,
   0x590AB964, 0xAB613A67, 0xB831C993, 0x4A5A4A90, 0x9E902E7B, 0x6CFBAD78, 0x7FAB5E8C, 0x8DC0DD8F,
   0xE330A81A, 0x115B2B19, 0x020BD8ED, 0xF0605BEE, 0x24AA3F05, 0xD6C1BC06, 0xC5914FF2, 0x37FACCF1,
   0x69E9F0D5, 0x9B8273D6, 0x88D28022, 0x7AB90321, 0xAE7367CA, 0x5C18E4C9, 0x4F48173D, 0xBD23943E,
   0xF36E6F75, 0x0105EC76, 0x12551F82, 0xE03E9C81, 0x34F4F86A, 0xC69F7B69, 0xD5CF889D, 0x27A40B9E,
   0x79B737BA, 0x8BDCB4B9, 0x988C474D, 0x6AE7C44E, 0xBE2DA0A5, 0x4C4623A6, 0x5F16D052, 0xAD7D5351},
  {0x00000000, 0x13A29877, 0x274530EE, 0x34E7A899, 0x4E8A61DC, 0x5D28F9AB, 0x69CF5132, 0x7A6DC945,
   0x9D14C3B8, 0x8EB65BCF, 0xBA51F356, 0xA9F36B21, 0xD39EA264, 0xC03C3A13, 0xF4DB928A, 0xE7790AFD,
   0x3FC5F181, 0x2C6769F6, 0x1880C16F, 0x0B225918, 0x714F905D, 0x62ED082A, 0x560AA0B3, 0x45A838C4,
   0xA2D13239, 0xB173AA4E, 0x859402D7, 0x96369AA0, 0xEC5B53E5, 0xFFF9CB92, 0xCB1E630B, 0xD8BCFB7C,
   0x7F8BE302, 0x6C297B75, 0x58CED3EC, 0x4B6C4B9B, 0x310182DE, 0x22A31AA9, 0x1644B230, 0x05E62A47,
   0xE29F20BA, 0xF13DB8CD, 0xC5DA1054, 0xD6788823, 0xAC154166, 0xBFB7D911, 0x8B507188, 0x98F2E9FF,
   0x404E1283, 0x53EC8AF4, 0x670B226D, 0x74A9BA1A, 0x0EC4735F, 0x1D66EB28, 0x298143B1, 0x3A23DBC6,
   0xDD5AD13B, 0xCEF8494C, 0xFA1FE1D5, 0xE9BD79A2, 0x93D0B0E7, 0x80722890, 0xB4958009, 0xA737187E,
   0xFF17C604, 0xECB55E73, 0xD852F6EA, 0xCBF06E9D, 0xB19DA7D8, 0xA23F3FAF, 0x96D89736, 0x857A0F41,
   0x620305BC, 0x71A19DCB, 0x45463552, 0x56E4AD25, 0x2C896460, 0x3F2BFC17, 0x0BCC548E, 0x186ECCF9,
   0xC0D23785, 0xD370AFF2, 0xE797076B, 0xF4359F1C, 0x8E585659, 0x9DFACE2E, 0xA91D66B7, 0xBABFFEC0,
   0x5DC6F43D, 0x4E646C4A, 0x7A83C4D3, 0x69215CA4, 0x134C95E1, 0x00EE0D96, 0x3409A50F, 0x27AB3D78,
   0x809C2506, 0x933EBD71, 0xA7D915E8, 0xB47B8D9F, 0xCE1644DA, 0xDDB4DCAD, 0xE9537434, 0xFAF1EC43,
   0x1D88E6BE, 0x0E2A7EC9, 0x3ACDD650, 0x296F4E27, 0x53028762, 0x40A01F15, 0x7447B78C, 0x67E52FFB,
   0xBF59D487, 0xACFB4CF0, 0x981CE469, 0x8BBE7C1E, 0xF1D3B55B, 0xE2712D2C, 0xD69685B5, 0xC5341DC2,
   0x224D173F, 0x31EF8F48, 0x050827D1, 0x16AABFA6, 0x6CC776E3, 0x7F65EE94, 0x4B82460D, 0x5820DE7A,
   0xFBC3FAF9, 0xE861628E, 0xDC86CA17, 0xCF245260, 0xB5499B25, 0xA6EB0352, 0x920CABCB, 0x81AE33BC,
   0x66D73941, 0x7575A136, 0x419209AF, 0x523091D8, 0x285D589D, 0x3BFFC0EA, 0x0F186873, 0x1CBAF004,
   0xC4060B78, 0xD7A4930F, 0xE3433B96, 0xF0E1A3E1, 0x8A8C6AA4, 0x992EF2D3, 0xADC95A4A, 0xBE6BC23D,
   0x5912C8C0, 0x4AB050B7, 0x7E57F82E, 0x6DF56059, 0x1798A91C, 0x043A316B, 0x30DD99F2, 0x237F0185,
   0x844819FB, 0x97EA818C, 0xA30D2915, 0xB0AFB162, 0xCAC27827, 0xD960E050, 0xED8748C9, 0xFE25D0BE,
   0x195CDA43, 0x0AFE4234, 0x3E19EAAD, 0x2DBB72DA, 0x57D6BB9F, 0x447423E8, 0x70938B71, 0x63311306,
   0xBB8DE87A, 0xA82F700D, 0x9CC8D894, 0x8F6A40E3, 0xF50789A6, 0xE6A511D1, 0xD242B948, 0xC1E0213F,
   0x26992BC2, 0x353BB3B5, 0x01DC1B2C, 0x127E835B, 0x68134A1E, 0x7BB1D269, 0x4F567AF0, 0x5CF4E287,
   0x04D43CFD, 0x1776A48A, 0x23910C13, 0x30339464, 0x4A5E5D21, 0x59FCC556, 0x6D1B6DCF, 0x7EB9F5B8,
   0x99C0FF45, 0x8A626732, 0xBE85CFAB, 0xAD2757DC, 0xD74A9E99, 0xC4E806EE, 0xF00FAE77, 0xE3AD3600,
   0x3B11CD7C, 0x28B3550B, 0x1C54FD92, 0x0FF665E5, 0x759BACA0, 0x663934D7, 0x52DE9C4E, 0x417C0439,
   0xA6050EC4, 0xB5A796B3, 0x81403E2A, 0x92E2A65D, 0xE88F6F18, 0xFB2DF76F, 0xCFCA5FF6, 0xDC68C781,
   0x7B5FDFFF, 0x68FD4788, 0x5C1AEF11, 0x4FB87766, 0x35D5BE23, 0x26772654, 0x12908ECD, 0x013216BA,
   0xE64B1C47, 0xF5E98430, 0xC10E2CA9, 0xD2ACB4DE, 0xA8C17D9B, 0xBB63E5EC, 0x8F844D75, 0x9C26D502,
   0x449A2E7E, 0x5738B609, 0x63DF1E90, 0x707D86E7, 0x0A104FA2, 0x19B2D7D5, 0x2D557F4C, 0x3EF7E73B,
   0xD98EEDC6, 0xCA2C75B1, 0xFECBDD28, 0xED69455F, 0x97048C1A, 0x84A6146D, 0xB041BCF4, 0xA3E32483},
  {0x00000000, 0xA541927E, 0x4F6F520D, 0xEA2EC073, 0x9EDEA41A, 0x3B9F3664, 0xD1B1F617, 0x74F06469,
   0x38513EC5, 0x9D10ACBB, 0x773E6CC8, 0xD27FFEB6, 0xA68F9ADF, 0x03CE08A1, 0xE9E0C8D2, 0x4CA15AAC,
   0x70A27D8A, 0xD5E3EFF4, 0x3FCD2F87, 0x9A8CBDF9, 0xEE7CD990, 0x4B3D4BEE, 0xA1138B9D, 0x045219E3,
   0x48F3434F, 0xEDB2D131, 0x079C1142, 0xA2DD833C, 0xD62DE755, 0x736C752B, 0x9942B558, 0x3C032726,
   0xE144FB14, 0x4405696A, 0xAE2BA919, 0x0B6A3B67, 0x7F9A5F0E, 0xDADBCD70, 0x30F50D03, 0x95B49F7D,
   0xD915C5D1, 0x7C5457AF, 0x967A97DC, 0x333B05A2, 0x47CB61CB, 0xE28AF3B5, 0x08A433C6, 0xADE5A1B8,
   0x91E6869E, 0x34A714E0, 0xDE89D493, 0x7BC846ED, 0x0F382284, 0xAA79B0FA, 0x40577089, 0xE516E2F7,
   0xA9B7B85B, 0x0CF62A25, 0xE6D8EA56, 0x43997828, 0x37691C41, 0x92288E3F, 0x78064E4C, 0xDD47DC32,
   0xC76580D9, 0x622412A7, 0x880AD2D4, 0x2D4B40AA, 0x59BB24C3, 0xFCFAB6BD, 0x16D476CE, 0xB395E4B0,
   0xFF34BE1C, 0x5A752C62, 0xB05BEC11, 0x151A7E6F, 0x61EA1A06, 0xC4AB8878, 0x2E85480B, 0x8BC4DA75,
   0xB7C7FD53, 0x12866F2D, 0xF8A8AF5E, 0x5DE93D20, 0x29195949, 0x8C58CB37, 0x66760B44, 0xC337993A,
   0x8F96C396, 0x2AD751E8, 0xC0F9919B, 0x65B803E5, 0x1148678C, 0xB409F5F2, 0x5E273581, 0xFB66A7FF,
   0x26217BCD, 0x8360E9B3, 0x694E29C0, 0xCC0FBBBE, 0xB8FFDFD7, 0x1DBE4DA9, 0xF7908DDA, 0x52D11FA4,
   0x1E704508, 0xBB31D776, 0x511F1705, 0xF45E857B, 0x80AEE112, 0x25EF736C, 0xCFC1B31F, 0x6A802161,
   0x56830647, 0xF3C29439, 0x19EC544A, 0xBCADC634, 0xC85DA25D, 0x6D1C3023, 0x8732F050, 0x2273622E,
   0x6ED23882, 0xCB93AAFC, 0x21BD6A8F, 0x84FCF8F1, 0xF00C9C98, 0x554D0EE6, 0xBF63CE95, 0x1A225CEB,
   0x8B277743, 0x2E66E53D, 0xC448254E, 0x6109B730, 0x15F9D359, 0xB0B84127, 0x5A968154, 0xFFD7132A,
   0xB3764986, 0x1637DBF8, 0xFC191B8B, 0x595889F5, 0x2DA8ED9C, 0x88E97FE2, 0x62C7BF91, 0xC7862DEF,
   0xFB850AC9, 0x5EC498B7, 0xB4EA58C4, 0x11ABCABA, 0x655BAED3, 0xC01A3CAD, 0x2A34FCDE, 0x8F756EA0,
   0xC3D4340C, 0x6695A672, 0x8CBB6601, 0x29FAF47F, 0x5D0A9016, 0xF84B0268, 0x1265C21B, 0xB7245065,
   0x6A638C57, 0xCF221E29, 0x250CDE5A, 0x804D4C24, 0xF4BD284D, 0x51FCBA33, 0xBBD27A40, 0x1E93E83E,
   0x5232B292, 0xF77320EC, 0x1D5DE09F, 0xB81C72E1, 0xCCEC1688, 0x69AD84F6, 0x83834485, 0x26C2D6FB,
   0x1AC1F1DD, 0xBF8063A3, 0x55AEA3D0, 0xF0EF31AE, 0x841F55C7, 0x215EC7B9, 0xCB7007CA, 0x6E3195B4,
   0x2290CF18, 0x87D15D66, 0x6DFF9D15, 0xC8BE0F6B, 0xBC4E6B02, 0x190FF97C, 0xF321390F, 0x5660AB71,
   0x4C42F79A, 0xE90365E4, 0x032DA597, 0xA66C37E9, 0xD29C5380, 0x77DDC1FE, 0x9DF3018D, 0x38B293F3,
   0x7413C95F, 0xD1525B21, 0x3B7C9B52, 0x9E3D092C, 0xEACD6D45, 0x4F8CFF3B, 0xA5A23F48, 0x00E3AD36,
   0x3CE08A10, 0x99A1186E, 0x738FD81D, 0xD6CE4A63, 0xA23E2E0A, 0x077FBC74, 0xED517C07, 0x4810EE79,
   0x04B1B4D5, 0xA1F026AB, 0x4BDEE6D8, 0xEE9F74A6, 0x9A6F10CF, 0x3F2E82B1, 0xD50042C2, 0x7041D0BC,
   0xAD060C8E, 0x08479EF0, 0xE2695E83, 0x4728CCFD, 0x33D8A894, 0x96993AEA, 0x7CB7FA99, 0xD9F668E7,
   0x9557324B, 0x3016A035, 0xDA386046, 0x7F79F238, 0x0B899651, 0xAEC8042F, 0x44E6C45C, 0xE1A75622,
   0xDDA47104, 0x78E5E37A, 0x92CB2309, 0x378AB177, 0x437AD51E, 0xE63B4760, 0x0C158713, 0xA954156D,
   0xE5F54FC1, 0x40B4DDBF, 0xAA9A1DCC, 0x0FDB8FB2, 0x7B2BEBDB, 0xDE6A79A5, 0x3444B9D6, 0x91052BA8},
  {0x00000000, 0xDD45AAB8, 0xBF672381, 0x62228939, 0x7B2231F3, 0xA6679B4B, 0xC4451272, 0x1900B8CA,
   0xF64463E6, 0x2B01C95E, 0x49234067, 0x9466EADF, 0x8D665215, 0x5023F8AD, 0x32017194, 0xEF44DB2C,
   0xE964B13D, 0x34211B85, 0x560392BC, 0x8B463804, 0x924680CE, 0x4F032A76, 0x2D21A34F, 0xF06409F7,
   0x1F20D2DB, 0xC2657863, 0xA047F15A, 0x7D025BE2, 0x6402E328, 0xB9474990, 0xDB65C0A9, 0x06206A11,
   0xD725148B, 0x0A60BE33, 0x6842370A, 0xB5079DB2, 0xAC072578, 0x71428FC0, 0x136006F9, 0xCE25AC41,
   0x2161776D, 0xFC24DDD5, 0x9E0654EC, 0x4343FE54, 0x5A43469E, 0x8706EC26, 0xE524651F, 0x3861CFA7,
   0x3E41A5B6, 0xE3040F0E, 0x81268637, 0x5C632C8F, 0x45639445, 0x98263EFD, 0xFA04B7C4, 0x27411D7C,
   0xC805C650, 0x15406CE8, 0x7762E5D1, 0xAA274F69, 0xB327F7A3, 0x6E625D1B, 0x0C40D422, 0xD1057E9A,
   0xABA65FE7, 0x76E3F55F, 0x14C17C66, 0xC984D6DE, 0xD0846E14, 0x0DC1C4AC, 0x6FE34D95, 0xB2A6E72D,
   0x5DE23C01, 0x80A796B9, 0xE2851F80, 0x3FC0B538, 0x26C00DF2, 0xFB85A74A, 0x99A72E73, 0x44E284CB,
   0x42C2EEDA, 0x9F874462, 0xFDA5CD5B, 0x20E067E3, 0x39E0DF29, 0xE4A57591, 0x8687FCA8, 0x5BC25610,
   0xB4868D3C, 0x69C32784, 0x0BE1AEBD, 0xD6A40405, 0xCFA4BCCF, 0x12E11677, 0x70C39F4E, 0xAD8635F6,
   0x7C834B6C, 0xA1C6E1D4, 0xC3E468ED, 0x1EA1C255, 0x07A17A9F, 0xDAE4D027, 0xB8C6591E, 0x6583F3A6,
   0x8AC7288A, 0x57828232, 0x35A00B0B, 0xE8E5A1B3, 0xF1E51979, 0x2CA0B3C1, 0x4E823AF8, 0x93C79040,
   0x95E7FA51, 0x48A250E9, 0x2A80D9D0, 0xF7C57368, 0xEEC5CBA2, 0x3380611A, 0x51A2E823, 0x8CE7429B,
   0x63A399B7, 0xBEE6330F, 0xDCC4BA36, 0x0181108E, 0x1881A844, 0xC5C402FC, 0xA7E68BC5, 0x7AA3217D,
   0x52A0C93F, 0x8FE56387, 0xEDC7EABE, 0x30824006, 0x2982F8CC, 0xF4C75274, 0x96E5DB4D, 0x4BA071F5,
   0xA4E4AAD9, 0x79A10061, 0x1B838958, 0xC6C623E0, 0xDFC69B2A, 0x02833192, 0x60A1B8AB, 0xBDE41213,
   0xBBC47802, 0x6681D2BA, 0x04A35B83, 0xD9E6F13B, 0xC0E649F1, 0x1DA3E349, 0x7F816A70, 0xA2C4C0C8,
   0x4D801BE4, 0x90C5B15C, 0xF2E73865, 0x2FA292DD, 0x36A22A17, 0xEBE780AF, 0x89C50996, 0x5480A32E,
   0x8585DDB4, 0x58C0770C, 0x3AE2FE35, 0xE7A7548D, 0xFEA7EC47, 0x23E246FF, 0x41C0CFC6, 0x9C85657E,
   0x73C1BE52, 0xAE8414EA, 0xCCA69DD3, 0x11E3376B, 0x08E38FA1, 0xD5A62519, 0xB784AC20, 0x6AC10698,
   0x6CE16C89, 0xB1A4C631, 0xD3864F08, 0x0EC3E5B0, 0x17C35D7A, 0xCA86F7C2, 0xA8A47EFB, 0x75E1D443,
   0x9AA50F6F, 0x47E0A5D7, 0x25C22CEE, 0xF8878656, 0xE1873E9C, 0x3CC29424, 0x5EE01D1D, 0x83A5B7A5,
   0xF90696D8, 0x24433C60, 0x4661B559, 0x9B241FE1, 0x8224A72B, 0x5F610D93, 0x3D4384AA, 0xE0062E12,
   0x0F42F53E, 0xD2075F86, 0xB025D6BF, 0x6D607C07, 0x7460C4CD, 0xA9256E75, 0xCB07E74C, 0x16424DF4,
   0x106227E5, 0xCD278D5D, 0xAF050464, 0x7240AEDC, 0x6B401616, 0xB605BCAE, 0xD4273597, 0x09629F2F,
   0xE6264403, 0x3B63EEBB, 0x59416782, 0x8404CD3A, 0x9D0475F0, 0x4041DF48, 0x22635671, 0xFF26FCC9,
   0x2E238253, 0xF36628EB, 0x9144A1D2, 0x4C010B6A, 0x5501B3A0, 0x88441918, 0xEA669021, 0x37233A99,
   0xD867E1B5, 0x05224B0D, 0x6700C234, 0xBA45688C, 0xA345D046, 0x7E007AFE, 0x1C22F3C7, 0xC167597F,
   0xC747336E, 0x1A0299D6, 0x782010EF, 0xA565BA57, 0xBC65029D, 0x6120A825, 0x0302211C, 0xDE478BA4,
   0x31035088, 0xEC46FA30, 0x8E647309, 0x5321D9B1, 0x4A21617B, 0x9764CBC3, 0xF54642FA, 0x2803E842},
  {0x00000000, 0x38116FAC, 0x7022DF58, 0x4833B0F4, 0xE045BEB0, 0xD854D11C, 0x906761E8, 0xA8760E44,
   0xC5670B91, 0xFD76643D, 0xB545D4C9, 0x8D54BB65, 0x2522B521, 0x1D33DA8D, 0x55006A79, 0x6D1105D5,
   0x8F2261D3, 0xB7330E7F, 0xFF00BE8B, 0xC711D127, 0x6F67DF63, 0x5776B0CF, 0x1F45003B, 0x27546F97,
   0x4A456A42, 0x725405EE, 0x3A67B51A, 0x0276DAB6, 0xAA00D4F2, 0x9211BB5E, 0xDA220BAA, 0xE2336406,
   0x1BA8B557, 0x23B9DAFB, 0x6B8A6A0F, 0x539B05A3, 0xFBED0BE7, 0xC3FC644B, 0x8BCFD4BF, 0xB3DEBB13,
   0xDECFBEC6, 0xE6DED16A, 0xAEED619E, 0x96FC0E32, 0x3E8A0076, 0x069B6FDA, 0x4EA8DF2E, 0x76B9B082,
   0x948AD484, 0xAC9BBB28, 0xE4A80BDC, 0xDCB96470, 0x74CF6A34, 0x4CDE0598, 0x04EDB56C, 0x3CFCDAC0,
   0x51EDDF15, 0x69FCB0B9, 0x21CF004D, 0x19DE6FE1, 0xB1A861A5, 0x89B90E09, 0xC18ABEFD, 0xF99BD151,
   0x37516AAE, 0x0F400502, 0x4773B5F6, 0x7F62DA5A, 0xD714D41E, 0xEF05BBB2, 0xA7360B46, 0x9F2764EA,
   0xF236613F, 0xCA270E93, 0x8214BE67, 0xBA05D1CB, 0x1273DF8F, 0x2A62B023, 0x625100D7, 0x5A406F7B,
   0xB8730B7D, 0x806264D1, 0xC851D425, 0xF040BB89, 0x5836B5CD, 0x6027DA61, 0x28146A95, 0x10050539,
   0x7D1400EC, 0x45056F40, 0x0D36DFB4, 0x3527B018, 0x9D51BE5C, 0xA540D1F0, 0xED736104, 0xD5620EA8,
   0x2CF9DFF9, 0x14E8B055, 0x5CDB00A1, 0x64CA6F0D, 0xCCBC6149, 0xF4AD0EE5, 0xBC9EBE11, 0x848FD1BD,
   0xE99ED468, 0xD18FBBC4, 0x99BC0B30, 0xA1AD649C, 0x09DB6AD8, 0x31CA0574, 0x79F9B580, 0x41E8DA2C,
   0xA3DBBE2A, 0x9BCAD186, 0xD3F96172, 0xEBE80EDE, 0x439E009A, 0x7B8F6F36, 0x33BCDFC2, 0x0BADB06E,
   0x66BCB5BB, 0x5EADDA17, 0x169E6AE3, 0x2E8F054F, 0x86F90B0B, 0xBEE864A7, 0xF6DBD453, 0xCECABBFF,
   0x6EA2D55C, 0x56B3BAF0, 0x1E800A04, 0x269165A8, 0x8EE76BEC, 0xB6F60440, 0xFEC5B4B4, 0xC6D4DB18,
   0xABC5DECD, 0x93D4B161, 0xDBE70195, 0xE3F66E39, 0x4B80607D, 0x73910FD1, 0x3BA2BF25, 0x03B3D089,
   0xE180B48F, 0xD991DB23, 0x91A26BD7, 0xA9B3047B, 0x01C50A3F, 0x39D46593, 0x71E7D567, 0x49F6BACB,
   0x24E7BF1E, 0x1CF6D0B2, 0x54C56046, 0x6CD40FEA, 0xC4A201AE, 0xFCB36E02, 0xB480DEF6, 0x8C91B15A,
   0x750A600B, 0x4D1B0FA7, 0x0528BF53, 0x3D39D0FF, 0x954FDEBB, 0xAD5EB117, 0xE56D01E3, 0xDD7C6E4F,
   0xB06D6B9A, 0x887C0436, 0xC04FB4C2, 0xF85EDB6E, 0x5028D52A, 0x6839BA86, 0x200A0A72, 0x181B65DE,
   0xFA2801D8, 0xC2396E74, 0x8A0ADE80, 0xB21BB12C, 0x1A6DBF68, 0x227CD0C4, 0x6A4F6030, 0x525E0F9C,
   0x3F4F0A49, 0x075E65E5, 0x4F6DD511, 0x777CBABD, 0xDF0AB4F9, 0xE71BDB55, 0xAF286BA1, 0x9739040D,
   0x59F3BFF2, 0x61E2D05E, 0x29D160AA, 0x11C00F06, 0xB9B60142, 0x81A76EEE, 0xC994DE1A, 0xF185B1B6,
   0x9C94B463, 0xA485DBCF, 0xECB66B3B, 0xD4A70497, 0x7CD10AD3, 0x44C0657F, 0x0CF3D58B, 0x34E2BA27,
   0xD6D1DE21, 0xEEC0B18D, 0xA6F30179, 0x9EE26ED5, 0x36946091, 0x0E850F3D, 0x46B6BFC9, 0x7EA7D065,
   0x13B6D5B0, 0x2BA7BA1C, 0x63940AE8, 0x5B856544, 0xF3F36B00, 0xCBE204AC, 0x83D1B458, 0xBBC0DBF4,
   0x425B0AA5, 0x7A4A6509, 0x3279D5FD, 0x0A68BA51, 0xA21EB415, 0x9A0FDBB9, 0xD23C6B4D, 0xEA2D04E1,
   0x873C0134, 0xBF2D6E98, 0xF71EDE6C, 0xCF0FB1C0, 0x6779BF84, 0x5F68D028, 0x175B60DC, 0x2F4A0F70,
   0xCD796B76, 0xF56804DA, 0xBD5BB42E, 0x854ADB82, 0x2D3CD5C6, 0x152DBA6A, 0x5D1E0A9E, 0x650F6532,
   0x081E60E7, 0x300F0F4B, 0x783CBFBF, 0x402DD013, 0xE85BDE57, 0xD04AB1FB, 0x9879010F, 0xA0686EA3},
  {0x00000000, 0xEF306B19, 0xDB8CA0C3, 0x34BCCBDA, 0xB2F53777, 0x5DC55C6E, 0x697997B4, 0x8649FCAD,
   0x6006181F, 0x8F367306, 0xBB8AB8DC, 0x54BAD3C5, 0xD2F32F68, 0x3DC34471, 0x097F8FAB, 0xE64FE4B2,
   0xC00C303E, 0x2F3C5B27, 0x1B8090FD, 0xF4B0FBE4, 0x72F90749, 0x9DC96C50, 0xA975A78A, 0x4645CC93,
   0xA00A2821, 0x4F3A4338, 0x7B8688E2, 0x94B6E3FB, 0x12FF1F56, 0xFDCF744F, 0xC973BF95, 0x2643D48C,
   0x85F4168D, 0x6AC47D94, 0x5E78B64E, 0xB148DD57, 0x370121FA, 0xD8314AE3, 0xEC8D8139, 0x03BDEA20,
   0xE5F20E92, 0x0AC2658B, 0x3E7EAE51, 0xD14EC548, 0x570739E5, 0xB83752FC, 0x8C8B9926, 0x63BBF23F,
   0x45F826B3, 0xAAC84DAA, 0x9E748670, 0x7144ED69, 0xF70D11C4, 0x183D7ADD, 0x2C81B107, 0xC3B1DA1E,
   0x25FE3EAC, 0xCACE55B5, 0xFE729E6F, 0x1142F576, 0x970B09DB, 0x783B62C2, 0x4C87A918, 0xA3B7C201,
   0x0E045BEB, 0xE13430F2, 0xD588FB28, 0x3AB89031, 0xBCF16C9C, 0x53C10785, 0x677DCC5F, 0x884DA746,
   0x6E0243F4, 0x813228ED, 0xB58EE337, 0x5ABE882E, 0xDCF77483, 0x33C71F9A, 0x077BD440, 0xE84BBF59,
   0xCE086BD5, 0x213800CC, 0x1584CB16, 0xFAB4A00F, 0x7CFD5CA2, 0x93CD37BB, 0xA771FC61, 0x48419778,
   0xAE0E73CA, 0x413E18D3, 0x7582D309, 0x9AB2B810, 0x1CFB44BD, 0xF3CB2FA4, 0xC777E47E, 0x28478F67,
   0x8BF04D66, 0x64C0267F, 0x507CEDA5, 0xBF4C86BC, 0x39057A11, 0xD6351108, 0xE289DAD2, 0x0DB9B1CB,
   0xEBF65579, 0x04C63E60, 0x307AF5BA, 0xDF4A9EA3, 0x5903620E, 0xB6330917, 0x828FC2CD, 0x6DBFA9D4,
   0x4BFC7D58, 0xA4CC1641, 0x9070DD9B, 0x7F40B682, 0xF9094A2F, 0x16392136, 0x2285EAEC, 0xCDB581F5,
   0x2BFA6547, 0xC4CA0E5E, 0xF076C584, 0x1F46AE9D, 0x990F5230, 0x763F3929, 0x4283F2F3, 0xADB399EA,
   0x1C08B7D6, 0xF338DCCF, 0xC7841715, 0x28B47C0C, 0xAEFD80A1, 0x41CDEBB8, 0x75712062, 0x9A414B7B,
   0x7C0EAFC9, 0x933EC4D0, 0xA7820F0A, 0x48B26413, 0xCEFB98BE, 0x21CBF3A7, 0x1577387D, 0xFA475364,
   0xDC0487E8, 0x3334ECF1, 0x0788272B, 0xE8B84C32, 0x6EF1B09F, 0x81C1DB86, 0xB57D105C, 0x5A4D7B45,
   0xBC029FF7, 0x5332F4EE, 0x678E3F34, 0x88BE542D, 0x0EF7A880, 0xE1C7C399, 0xD57B0843, 0x3A4B635A,
   0x99FCA15B, 0x76CCCA42, 0x42700198, 0xAD406A81, 0x2B09962C, 0xC439FD35, 0xF08536EF, 0x1FB55DF6,
   0xF9FAB944, 0x16CAD25D, 0x22761987, 0xCD46729E, 0x4B0F8E33, 0xA43FE52A, 0x90832EF0, 0x7FB345E9,
   0x59F09165, 0xB6C0FA7C, 0x827C31A6, 0x6D4C5ABF, 0xEB05A612, 0x0435CD0B, 0x308906D1, 0xDFB96DC8,
   0x39F6897A, 0xD6C6E263, 0xE27A29B9, 0x0D4A42A0, 0x8B03BE0D, 0x6433D514, 0x508F1ECE, 0xBFBF75D7,
   0x120CEC3D, 0xFD3C8724, 0xC9804CFE, 0x26B027E7, 0xA0F9DB4A, 0x4FC9B053, 0x7B757B89, 0x94451090,
   0x720AF422, 0x9D3A9F3B, 0xA98654E1, 0x46B63FF8, 0xC0FFC355, 0x2FCFA84C, 0x1B736396, 0xF443088F,
   0xD200DC03, 0x3D30B71A, 0x098C7CC0, 0xE6BC17D9, 0x60F5EB74, 0x8FC5806D, 0xBB794BB7, 0x544920AE,
   0xB206C41C, 0x5D36AF05, 0x698A64DF, 0x86BA0FC6, 0x00F3F36B, 0xEFC39872, 0xDB7F53A8, 0x344F38B1,
   0x97F8FAB0, 0x78C891A9, 0x4C745A73, 0xA344316A, 0x250DCDC7, 0xCA3DA6DE, 0xFE816D04, 0x11B1061D,
   0xF7FEE2AF, 0x18CE89B6, 0x2C72426C, 0xC3422975, 0x450BD5D8, 0xAA3BBEC1, 0x9E87751B, 0x71B71E02,
   0x57F4CA8E, 0xB8C4A197, 0x8C786A4D, 0x63480154, 0xE501FDF9, 0x0A3196E0, 0x3E8D5D3A, 0xD1BD3623,
   0x37F2D291, 0xD8C2B988, 0xEC7E7252, 0x034E194B, 0x8507E5E6, 0x6A378EFF, 0x5E8B4525, 0xB1BB2E3C},
  {0x00000000, 0x68032CC8, 0xD0065990, 0xB8057558, 0xA5E0C5D1, 0xCDE3E919, 0x75E69C41, 0x1DE5B089,
   0x4E2DFD53, 0x262ED19B, 0x9E2BA4C3, 0xF628880B, 0xEBCD3882, 0x83CE144A, 0x3BCB6112, 0x53C84DDA,
   0x9C5BFAA6, 0xF458D66E, 0x4C5DA336, 0x245E8FFE, 0x39BB3F77, 0x51B813BF, 0xE9BD66E7, 0x81BE4A2F,
   0xD27607F5, 0xBA752B3D, 0x02705E65, 0x6A7372AD, 0x7796C224, 0x1F95EEEC, 0xA7909BB4, 0xCF93B77C,
   0x3D5B83BD, 0x5558AF75, 0xED5DDA2D, 0x855EF6E5, 0x98BB466C, 0xF0B86AA4, 0x48BD1FFC, 0x20BE3334,
   0x73767EEE, 0x1B755226, 0xA370277E, 0xCB730BB6, 0xD696BB3F, 0xBE9597F7, 0x0690E2AF, 0x6E93CE67,
   0xA100791B, 0xC90355D3, 0x7106208B, 0x19050C43, 0x04E0BCCA, 0x6CE39002, 0xD4E6E55A, 0xBCE5C992,
   0xEF2D8448, 0x872EA880, 0x3F2BDDD8, 0x5728F110, 0x4ACD4199, 0x22CE6D51, 0x9ACB1809, 0xF2C834C1,
   0x7AB7077A, 0x12B42BB2, 0xAAB15EEA, 0xC2B27222, 0xDF57C2AB, 0xB754EE63, 0x0F519B3B, 0x6752B7F3,
   0x349AFA29, 0x5C99D6E1, 0xE49CA3B9, 0x8C9F8F71, 0x917A3FF8, 0xF9791330, 0x417C6668, 0x297F4AA0,
   0xE6ECFDDC, 0x8EEFD114, 0x36EAA44C, 0x5EE98884, 0x430C380D, 0x2B0F14C5, 0x930A619D, 0xFB094D55,
   0xA8C1008F, 0xC0C22C47, 0x78C7591F, 0x10C475D7, 0x0D21C55E, 0x6522E996, 0xDD279CCE, 0xB524B006,
   0x47EC84C7, 0x2FEFA80F, 0x97EADD57, 0xFFE9F19F, 0xE20C4116, 0x8A0F6DDE, 0x320A1886, 0x5A09344E,
   0x09C17994, 0x61C2555C, 0xD9C72004, 0xB1C40CCC, 0xAC21BC45, 0xC422908D, 0x7C27E5D5, 0x1424C91D,
   0xDBB77E61, 0xB3B452A9, 0x0BB127F1, 0x63B20B39, 0x7E57BBB0, 0x16549778, 0xAE51E220, 0xC652CEE8,
   0x959A8332, 0xFD99AFFA, 0x459CDAA2, 0x2D9FF66A, 0x307A46E3, 0x58796A2B, 0xE07C1F73, 0x887F33BB,
   0xF56E0EF4, 0x9D6D223C, 0x25685764, 0x4D6B7BAC, 0x508ECB25, 0x388DE7ED, 0x808892B5, 0xE88BBE7D,
   0xBB43F3A7, 0xD340DF6F, 0x6B45AA37, 0x034686FF, 0x1EA33676, 0x76A01ABE, 0xCEA56FE6, 0xA6A6432E,
   0x6935F452, 0x0136D89A, 0xB933ADC2, 0xD130810A, 0xCCD53183, 0xA4D61D4B, 0x1CD36813, 0x74D044DB,
   0x27180901, 0x4F1B25C9, 0xF71E5091, 0x9F1D7C59, 0x82F8CCD0, 0xEAFBE018, 0x52FE9540, 0x3AFDB988,
   0xC8358D49, 0xA036A181, 0x1833D4D9, 0x7030F811, 0x6DD54898, 0x05D66450, 0xBDD31108, 0xD5D03DC0,
   0x8618701A, 0xEE1B5CD2, 0x561E298A, 0x3E1D0542, 0x23F8B5CB, 0x4BFB9903, 0xF3FEEC5B, 0x9BFDC093,
   0x546E77EF, 0x3C6D5B27, 0x84682E7F, 0xEC6B02B7, 0xF18EB23E, 0x998D9EF6, 0x2188EBAE, 0x498BC766,
   0x1A438ABC, 0x7240A674, 0xCA45D32C, 0xA246FFE4, 0xBFA34F6D, 0xD7A063A5, 0x6FA516FD, 0x07A63A35,
   0x8FD9098E, 0xE7DA2546, 0x5FDF501E, 0x37DC7CD6, 0x2A39CC5F, 0x423AE097, 0xFA3F95CF, 0x923CB907,
   0xC1F4F4DD, 0xA9F7D815, 0x11F2AD4D, 0x79F18185, 0x6414310C, 0x0C171DC4, 0xB412689C, 0xDC114454,
   0x1382F328, 0x7B81DFE0, 0xC384AAB8, 0xAB878670, 0xB66236F9, 0xDE611A31, 0x66646F69, 0x0E6743A1,
   0x5DAF0E7B, 0x35AC22B3, 0x8DA957EB, 0xE5AA7B23, 0xF84FCBAA, 0x904CE762, 0x2849923A, 0x404ABEF2,
   0xB2828A33, 0xDA81A6FB, 0x6284D3A3, 0x0A87FF6B, 0x17624FE2, 0x7F61632A, 0xC7641672, 0xAF673ABA,
   0xFCAF7760, 0x94AC5BA8, 0x2CA92EF0, 0x44AA0238, 0x594FB2B1, 0x314C9E79, 0x8949EB21, 0xE14AC7E9,
   0x2ED97095, 0x46DA5C5D, 0xFEDF2905, 0x96DC05CD, 0x8B39B544, 0xE33A998C, 0x5B3FECD4, 0x333CC01C,
   0x60F48DC6, 0x08F7A10E, 0xB0F2D456, 0xD8F1F89E, 0xC5144817, 0xAD1764DF, 0x15121187, 0x7D113D4F},
  {0x00000000, 0x493C7D27, 0x9278FA4E, 0xDB448769, 0x211D826D, 0x6821FF4A, 0xB3657823, 0xFA590504,
   0x423B04DA, 0x0B0779FD, 0xD043FE94, 0x997F83B3, 0x632686B7, 0x2A1AFB90, 0xF15E7CF9, 0xB86201DE,
   0x847609B4, 0xCD4A7493, 0x160EF3FA, 0x5F328EDD, 0xA56B8BD9, 0xEC57F6FE, 0x37137197, 0x7E2F0CB0,
   0xC64D0D6E, 0x8F717049, 0x5435F720, 0x1D098A07, 0xE7508F03, 0xAE6CF224, 0x7528754D, 0x3C14086A,
   0x0D006599, 0x443C18BE, 0x9F789FD7, 0xD644E2F0, 0x2C1DE7F4, 0x65219AD3, 0xBE651DBA, 0xF759609D,
   0x4F3B6143, 0x06071C64, 0xDD439B0D, 0x947FE62A, 0x6E26E32E, 0x271A9E09, 0xFC5E1960, 0xB5626447,
   0x89766C2D, 0xC04A110A, 0x1B0E9663, 0x5232EB44, 0xA86BEE40, 0xE1579367, 0x3A13140E, 0x732F6929,
   0xCB4D68F7, 0x827115D0, 0x593592B9, 0x1009EF9E, 0xEA50EA9A, 0xA36C97BD, 0x782810D4, 0x31146DF3,
   0x1A00CB32, 0x533CB615, 0x8878317C, 0xC1444C5B, 0x3B1D495F, 0x72213478, 0xA965B311, 0xE059CE36,
   0x583BCFE8, 0x1107B2CF, 0xCA4335A6, 0x837F4881, 0x79264D85, 0x301A30A2, 0xEB5EB7CB, 0xA262CAEC,
   0x9E76C286, 0xD74ABFA1, 0x0C0E38C8, 0x453245EF, 0xBF6B40EB, 0xF6573DCC, 0x2D13BAA5, 0x642FC782,
   0xDC4DC65C, 0x9571BB7B, 0x4E353C12, 0x07094135, 0xFD504431, 0xB46C3916, 0x6F28BE7F, 0x2614C358,
   0x1700AEAB, 0x5E3CD38C, 0x857854E5, 0xCC4429C2, 0x361D2CC6, 0x7F2151E1, 0xA465D688, 0xED59ABAF,
   0x553BAA71, 0x1C07D756, 0xC743503F, 0x8E7F2D18, 0x7426281C, 0x3D1A553B, 0xE65ED252, 0xAF62AF75,
   0x9376A71F, 0xDA4ADA38, 0x010E5D51, 0x48322076, 0xB26B2572, 0xFB575855, 0x2013DF3C, 0x692FA21B,
   0xD14DA3C5, 0x9871DEE2, 0x4335598B, 0x0A0924AC, 0xF05021A8, 0xB96C5C8F, 0x6228DBE6, 0x2B14A6C1,
   0x34019664, 0x7D3DEB43, 0xA6796C2A, 0xEF45110D, 0x151C1409, 0x5C20692E, 0x8764EE47, 0xCE589360,
   0x763A92BE, 0x3F06EF99, 0xE44268F0, 0xAD7E15D7, 0x572710D3, 0x1E1B6DF4, 0xC55FEA9D, 0x8C6397BA,
   0xB0779FD0, 0xF94BE2F7, 0x220F659E, 0x6B3318B9, 0x916A1DBD, 0xD856609A, 0x0312E7F3, 0x4A2E9AD4,
   0xF24C9B0A, 0xBB70E62D, 0x60346144, 0x29081C63, 0xD3511967, 0x9A6D6440, 0x4129E329, 0x08159E0E,
   0x3901F3FD, 0x703D8EDA, 0xAB7909B3, 0xE2457494, 0x181C7190, 0x51200CB7, 0x8A648BDE, 0xC358F6F9,
   0x7B3AF727, 0x32068A00, 0xE9420D69, 0xA07E704E, 0x5A27754A, 0x131B086D, 0xC85F8F04, 0x8163F223,
   0xBD77FA49, 0xF44B876E, 0x2F0F0007, 0x66337D20, 0x9C6A7824, 0xD5560503, 0x0E12826A, 0x472EFF4D,
   0xFF4CFE93, 0xB67083B4, 0x6D3404DD, 0x240879FA, 0xDE517CFE, 0x976D01D9, 0x4C2986B0, 0x0515FB97,
   0x2E015D56, 0x673D2071, 0xBC79A718, 0xF545DA3F, 0x0F1CDF3B, 0x4620A21C, 0x9D642575, 0xD4585852,
   0x6C3A598C, 0x250624AB, 0xFE42A3C2, 0xB77EDEE5, 0x4D27DBE1, 0x041BA6C6, 0xDF5F21AF, 0x96635C88,
   0xAA7754E2, 0xE34B29C5, 0x380FAEAC, 0x7133D38B, 0x8B6AD68F, 0xC256ABA8, 0x19122CC1, 0x502E51E6,
   0xE84C5038, 0xA1702D1F, 0x7A34AA76, 0x3308D751, 0xC951D255, 0x806DAF72, 0x5B29281B, 0x1215553C,
   0x230138CF, 0x6A3D45E8, 0xB179C281, 0xF845BFA6, 0x021CBAA2, 0x4B20C785, 0x906440EC, 0xD9583DCB,
   0x613A3C15, 0x28064132, 0xF342C65B, 0xBA7EBB7C, 0x4027BE78, 0x091BC35F, 0xD25F4436, 0x9B633911,
   0xA777317B, 0xEE4B4C5C, 0x350FCB35, 0x7C33B612, 0x866AB316, 0xCF56CE31, 0x14124958, 0x5D2E347F,
   0xE54C35A1, 0xAC704886, 0x7734CFEF, 0x3E08B2C8, 0xC451B7CC, 0x8D6DCAEB, 0x56294D82, 0x1F1530A5},
  {0x00000000, 0xF43ED648, 0xED91DA61, 0x19AF0C29, 0xDECFC233, 0x2AF1147B, 0x335E1852, 0xC760CE1A,
   0xB873F297, 0x4C4D24DF, 0x55E228F6, 0xA1DCFEBE, 0x66BC30A4, 0x9282E6EC, 0x8B2DEAC5, 0x7F133C8D,
   0x750B93DF, 0x81354597, 0x989A49BE, 0x6CA49FF6, 0xABC451EC, 0x5FFA87A4, 0x46558B8D, 0xB26B5DC5,
   0xCD786148, 0x3946B700, 0x20E9BB29, 0xD4D76D61, 0x13B7A37B, 0xE7897533, 0xFE26791A, 0x0A18AF52,
   0xEA1727BE, 0x1E29F1F6, 0x0786FDDF, 0xF3B82B97, 0x34D8E58D, 0xC0E633C5, 0xD9493FEC, 0x2D77E9A4,
   0x5264D529, 0xA65A0361, 0xBFF50F48, 0x4BCBD900, 0x8CAB171A, 0x7895C152, 0x613ACD7B, 0x95041B33,
   0x9F1CB461, 0x6B226229, 0x728D6E00, 0x86B3B848, 0x41D37652, 0xB5EDA01A, 0xAC42AC33, 0x587C7A7B,
   0x276F46F6, 0xD35190BE, 0xCAFE9C97, 0x3EC04ADF, 0xF9A084C5, 0x0D9E528D, 0x14315EA4, 0xE00F88EC,
   0xD1C2398D, 0x25FCEFC5, 0x3C53E3EC, 0xC86D35A4, 0x0F0DFBBE, 0xFB332DF6, 0xE29C21DF, 0x16A2F797,
   0x69B1CB1A, 0x9D8F1D52, 0x8420117B, 0x701EC733, 0xB77E0929, 0x4340DF61, 0x5AEFD348, 0xAED10500,
   0xA4C9AA52, 0x50F77C1A, 0x49587033, 0xBD66A67B, 0x7A066861, 0x8E38BE29, 0x9797B200, 0x63A96448,
   0x1CBA58C5, 0xE8848E8D, 0xF12B82A4, 0x051554EC, 0xC2759AF6, 0x364B4CBE, 0x2FE44097, 0xDBDA96DF,
   0x3BD51E33, 0xCFEBC87B, 0xD644C452, 0x227A121A, 0xE51ADC00, 0x11240A48, 0x088B0661, 0xFCB5D029,
   0x83A6ECA4, 0x77983AEC, 0x6E3736C5, 0x9A09E08D, 0x5D692E97, 0xA957F8DF, 0xB0F8F4F6, 0x44C622BE,
   0x4EDE8DEC, 0xBAE05BA4, 0xA34F578D, 0x577181C5, 0x90114FDF, 0x642F9997, 0x7D8095BE, 0x89BE43F6,
   0xF6AD7F7B, 0x0293A933, 0x1B3CA51A, 0xEF027352, 0x2862BD48, 0xDC5C6B00, 0xC5F36729, 0x31CDB161,
   0xA66805EB, 0x5256D3A3, 0x4BF9DF8A, 0xBFC709C2, 0x78A7C7D8, 0x8C991190, 0x95361DB9, 0x6108CBF1,
   0x1E1BF77C, 0xEA252134, 0xF38A2D1D, 0x07B4FB55, 0xC0D4354F, 0x34EAE307, 0x2D45EF2E, 0xD97B3966,
   0xD3639634, 0x275D407C, 0x3EF24C55, 0xCACC9A1D, 0x0DAC5407, 0xF992824F, 0xE03D8E66, 0x1403582E,
   0x6B1064A3, 0x9F2EB2EB, 0x8681BEC2, 0x72BF688A, 0xB5DFA690, 0x41E170D8, 0x584E7CF1, 0xAC70AAB9,
   0x4C7F2255, 0xB841F41D, 0xA1EEF834, 0x55D02E7C, 0x92B0E066, 0x668E362E, 0x7F213A07, 0x8B1FEC4F,
   0xF40CD0C2, 0x0032068A, 0x199D0AA3, 0xEDA3DCEB, 0x2AC312F1, 0xDEFDC4B9, 0xC752C890, 0x336C1ED8,
   0x3974B18A, 0xCD4A67C2, 0xD4E56BEB, 0x20DBBDA3, 0xE7BB73B9, 0x1385A5F1, 0x0A2AA9D8, 0xFE147F90,
   0x8107431D, 0x75399555, 0x6C96997C, 0x98A84F34, 0x5FC8812E, 0xABF65766, 0xB2595B4F, 0x46678D07,
   0x77AA3C66, 0x8394EA2E, 0x9A3BE607, 0x6E05304F, 0xA965FE55, 0x5D5B281D, 0x44F42434, 0xB0CAF27C,
   0xCFD9CEF1, 0x3BE718B9, 0x22481490, 0xD676C2D8, 0x11160CC2, 0xE528DA8A, 0xFC87D6A3, 0x08B900EB,
   0x02A1AFB9, 0xF69F79F1, 0xEF3075D8, 0x1B0EA390, 0xDC6E6D8A, 0x2850BBC2, 0x31FFB7EB, 0xC5C161A3,
   0xBAD25D2E, 0x4EEC8B66, 0x5743874F, 0xA37D5107, 0x641D9F1D, 0x90234955, 0x898C457C, 0x7DB29334,
   0x9DBD1BD8, 0x6983CD90, 0x702CC1B9, 0x841217F1, 0x4372D9EB, 0xB74C0FA3, 0xAEE3038A, 0x5ADDD5C2,
   0x25CEE94F, 0xD1F03F07, 0xC85F332E, 0x3C61E566, 0xFB012B7C, 0x0F3FFD34, 0x1690F11D, 0xE2AE2755,
   0xE8B68807, 0x1C885E4F, 0x05275266, 0xF119842E, 0x36794A34, 0xC2479C7C, 0xDBE89055, 0x2FD6461D,
   0x50C57A90, 0xA4FBACD8, 0xBD54A0F1, 0x496A76B9, 0x8E0AB8A3, 0x7A346EEB, 0x639B62C2, 0x97A5B48A},
  {0x00000000, 0xCB567BA5, 0x934081BB, 0x5816FA1E, 0x236D7587, 0xE83B0E22, 0xB02DF43C, 0x7B7B8F99,
   0x46DAEB0E, 0x8D8C90AB, 0xD59A6AB5, 0x1ECC1110, 0x65B79E89, 0xAEE1E52C, 0xF6F71F32, 0x3DA16497,
   0x8DB5D61C, 0x46E3ADB9, 0x1EF557A7, 0xD5A32C02, 0xAED8A39B, 0x658ED83E, 0x3D982220, 0xF6CE5985,
   0xCB6F3D12, 0x003946B7, 0x582FBCA9, 0x9379C70C, 0xE8024895, 0x23543330, 0x7B42C92E, 0xB014B28B,
   0x1E87DAC9, 0xD5D1A16C, 0x8DC75B72, 0x469120D7, 0x3DEAAF4E, 0xF6BCD4EB, 0xAEAA2EF5, 0x65FC5550,
   0x585D31C7, 0x930B4A62, 0xCB1DB07C, 0x004BCBD9, 0x7B304440, 0xB0663FE5, 0xE870C5FB, 0x2326BE5E,
   0x93320CD5, 0x58647770, 0x00728D6E, 0xCB24F6CB, 0xB05F7952, 0x7B0902F7, 0x231FF8E9, 0xE849834C,
   0xD5E8E7DB, 0x1EBE9C7E, 0x46A86660, 0x8DFE1DC5, 0xF685925C, 0x3DD3E9F9, 0x65C513E7, 0xAE936842,
   0x3D0FB592, 0xF659CE37, 0xAE4F3429, 0x65194F8C, 0x1E62C015, 0xD534BBB0, 0x8D2241AE, 0x46743A0B,
   0x7BD55E9C, 0xB0832539, 0xE895DF27, 0x23C3A482, 0x58B82B1B, 0x93EE50BE, 0xCBF8AAA0, 0x00AED105,
   0xB0BA638E, 0x7BEC182B, 0x23FAE235, 0xE8AC9990, 0x93D71609, 0x58816DAC, 0x009797B2, 0xCBC1EC17,
   0xF6608880, 0x3D36F325, 0x6520093B, 0xAE76729E, 0xD50DFD07, 0x1E5B86A2, 0x464D7CBC, 0x8D1B0719,
   0x23886F5B, 0xE8DE14FE, 0xB0C8EEE0, 0x7B9E9545, 0x00E51ADC, 0xCBB36179, 0x93A59B67, 0x58F3E0C2,
   0x65528455, 0xAE04FFF0, 0xF61205EE, 0x3D447E4B, 0x463FF1D2, 0x8D698A77, 0xD57F7069, 0x1E290BCC,
   0xAE3DB947, 0x656BC2E2, 0x3D7D38FC, 0xF62B4359, 0x8D50CCC0, 0x4606B765, 0x1E104D7B, 0xD54636DE,
   0xE8E75249, 0x23B129EC, 0x7BA7D3F2, 0xB0F1A857, 0xCB8A27CE, 0x00DC5C6B, 0x58CAA675, 0x939CDDD0,
   0x7A1F6B24, 0xB1491081, 0xE95FEA9F, 0x2209913A, 0x59721EA3, 0x92246506, 0xCA329F18, 0x0164E4BD,
   0x3CC5802A, 0xF793FB8F, 0xAF850191, 0x64D37A34, 0x1FA8F5AD, 0xD4FE8E08, 0x8CE87416, 0x47BE0FB3,
   0xF7AABD38, 0x3CFCC69D, 0x64EA3C83, 0xAFBC4726, 0xD4C7C8BF, 0x1F91B31A, 0x47874904, 0x8CD132A1,
   0xB1705636, 0x7A262D93, 0x2230D78D, 0xE966AC28, 0x921D23B1, 0x594B5814, 0x015DA20A, 0xCA0BD9AF,
   0x6498B1ED, 0xAFCECA48, 0xF7D83056, 0x3C8E4BF3, 0x47F5C46A, 0x8CA3BFCF, 0xD4B545D1, 0x1FE33E74,
   0x22425AE3, 0xE9142146, 0xB102DB58, 0x7A54A0FD, 0x012F2F64, 0xCA7954C1, 0x926FAEDF, 0x5939D57A,
   0xE92D67F1, 0x227B1C54, 0x7A6DE64A, 0xB13B9DEF, 0xCA401276, 0x011669D3, 0x590093CD, 0x9256E868,
   0xAFF78CFF, 0x64A1F75A, 0x3CB70D44, 0xF7E176E1, 0x8C9AF978, 0x47CC82DD, 0x1FDA78C3, 0xD48C0366,
   0x4710DEB6, 0x8C46A513, 0xD4505F0D, 0x1F0624A8, 0x647DAB31, 0xAF2BD094, 0xF73D2A8A, 0x3C6B512F,
   0x01CA35B8, 0xCA9C4E1D, 0x928AB403, 0x59DCCFA6, 0x22A7403F, 0xE9F13B9A, 0xB1E7C184, 0x7AB1BA21,
   0xCAA508AA, 0x01F3730F, 0x59E58911, 0x92B3F2B4, 0xE9C87D2D, 0x229E0688, 0x7A88FC96, 0xB1DE8733,
   0x8C7FE3A4, 0x47299801, 0x1F3F621F, 0xD46919BA, 0xAF129623, 0x6444ED86, 0x3C521798, 0xF7046C3D,
   0x5997047F, 0x92C17FDA, 0xCAD785C4, 0x0181FE61, 0x7AFA71F8, 0xB1AC0A5D, 0xE9BAF043, 0x22EC8BE6,
   0x1F4DEF71, 0xD41B94D4, 0x8C0D6ECA, 0x475B156F, 0x3C209AF6, 0xF776E153, 0xAF601B4D, 0x643660E8,
   0xD422D263, 0x1F74A9C6, 0x476253D8, 0x8C34287D, 0xF74FA7E4, 0x3C19DC41, 0x640F265F, 0xAF595DFA,
   0x92F8396D, 0x59AE42C8, 0x01B8B8D6, 0xCAEEC373, 0xB1954CEA, 0x7AC3374F, 0x22D5CD51, 0xE983B6F4},
  {0x00000000, 0x9771F7C1, 0x2B0F9973, 0xBC7E6EB2, 0x561F32E6, 0xC16EC527, 0x7D10AB95, 0xEA615C54,
   0xAC3E65CC, 0x3B4F920D, 0x8731FCBF, 0x10400B7E, 0xFA21572A, 0x6D50A0EB, 0xD12ECE59, 0x465F3998,
   0x5D90BD69, 0xCAE14AA8, 0x769F241A, 0xE1EED3DB, 0x0B8F8F8F, 0x9CFE784E, 0x208016FC, 0xB7F1E13D,
   0xF1AED8A5, 0x66DF2F64, 0xDAA141D6, 0x4DD0B617, 0xA7B1EA43, 0x30C01D82, 0x8CBE7330, 0x1BCF84F1,
   0xBB217AD2, 0x2C508D13, 0x902EE3A1, 0x075F1460, 0xED3E4834, 0x7A4FBFF5, 0xC631D147, 0x51402686,
   0x171F1F1E, 0x806EE8DF, 0x3C10866D, 0xAB6171AC, 0x41002DF8, 0xD671DA39, 0x6A0FB48B, 0xFD7E434A,
   0xE6B1C7BB, 0x71C0307A, 0xCDBE5EC8, 0x5ACFA909, 0xB0AEF55D, 0x27DF029C, 0x9BA16C2E, 0x0CD09BEF,
   0x4A8FA277, 0xDDFE55B6, 0x61803B04, 0xF6F1CCC5, 0x1C909091, 0x8BE16750, 0x379F09E2, 0xA0EEFE23,
   0x73AE8355, 0xE4DF7494, 0x58A11A26, 0xCFD0EDE7, 0x25B1B1B3, 0xB2C04672, 0x0EBE28C0, 0x99CFDF01,
   0xDF90E699, 0x48E11158, 0xF49F7FEA, 0x63EE882B, 0x898FD47F, 0x1EFE23BE, 0xA2804D0C, 0x35F1BACD,
   0x2E3E3E3C, 0xB94FC9FD, 0x0531A74F, 0x9240508E, 0x78210CDA, 0xEF50FB1B, 0x532E95A9, 0xC45F6268,
   0x82005BF0, 0x1571AC31, 0xA90FC283, 0x3E7E3542, 0xD41F6916, 0x436E9ED7, 0xFF10F065, 0x686107A4,
   0xC88FF987, 0x5FFE0E46, 0xE38060F4, 0x74F19735, 0x9E90CB61, 0x09E13CA0, 0xB59F5212, 0x22EEA5D3,
   0x64B19C4B, 0xF3C06B8A, 0x4FBE0538, 0xD8CFF2F9, 0x32AEAEAD, 0xA5DF596C, 0x19A137DE, 0x8ED0C01F,
   0x951F44EE, 0x026EB32F, 0xBE10DD9D, 0x29612A5C, 0xC3007608, 0x547181C9, 0xE80FEF7B, 0x7F7E18BA,
   0x39212122, 0xAE50D6E3, 0x122EB851, 0x855F4F90, 0x6F3E13C4, 0xF84FE405, 0x44318AB7, 0xD3407D76,
   0xE75D06AA, 0x702CF16B, 0xCC529FD9, 0x5B236818, 0xB142344C, 0x2633C38D, 0x9A4DAD3F, 0x0D3C5AFE,
   0x4B636366, 0xDC1294A7, 0x606CFA15, 0xF71D0DD4, 0x1D7C5180, 0x8A0DA641, 0x3673C8F3, 0xA1023F32,
   0xBACDBBC3, 0x2DBC4C02, 0x91C222B0, 0x06B3D571, 0xECD28925, 0x7BA37EE4, 0xC7DD1056, 0x50ACE797,
   0x16F3DE0F, 0x818229CE, 0x3DFC477C, 0xAA8DB0BD, 0x40ECECE9, 0xD79D1B28, 0x6BE3759A, 0xFC92825B,
   0x5C7C7C78, 0xCB0D8BB9, 0x7773E50B, 0xE00212CA, 0x0A634E9E, 0x9D12B95F, 0x216CD7ED, 0xB61D202C,
   0xF04219B4, 0x6733EE75, 0xDB4D80C7, 0x4C3C7706, 0xA65D2B52, 0x312CDC93, 0x8D52B221, 0x1A2345E0,
   0x01ECC111, 0x969D36D0, 0x2AE35862, 0xBD92AFA3, 0x57F3F3F7, 0xC0820436, 0x7CFC6A84, 0xEB8D9D45,
   0xADD2A4DD, 0x3AA3531C, 0x86DD3DAE, 0x11ACCA6F, 0xFBCD963B, 0x6CBC61FA, 0xD0C20F48, 0x47B3F889,
   0x94F385FF, 0x0382723E, 0xBFFC1C8C, 0x288DEB4D, 0xC2ECB719, 0x559D40D8, 0xE9E32E6A, 0x7E92D9AB,
   0x38CDE033, 0xAFBC17F2, 0x13C27940, 0x84B38E81, 0x6ED2D2D5, 0xF9A32514, 0x45DD4BA6, 0xD2ACBC67,
   0xC9633896, 0x5E12CF57, 0xE26CA1E5, 0x751D5624, 0x9F7C0A70, 0x080DFDB1, 0xB4739303, 0x230264C2,
   0x655D5D5A, 0xF22CAA9B, 0x4E52C429, 0xD92333E8, 0x33426FBC, 0xA433987D, 0x184DF6CF, 0x8F3C010E,
   0x2FD2FF2D, 0xB8A308EC, 0x04DD665E, 0x93AC919F, 0x79CDCDCB, 0xEEBC3A0A, 0x52C254B8, 0xC5B3A379,
   0x83EC9AE1, 0x149D6D20, 0xA8E30392, 0x3F92F453, 0xD5F3A807, 0x42825FC6, 0xFEFC3174, 0x698DC6B5,
   0x72424244, 0xE533B585, 0x594DDB37, 0xCE3C2CF6, 0x245D70A2, 0xB32C8763, 0x0F52E9D1, 0x98231E10,
   0xDE7C2788, 0x490DD049, 0xF573BEFB, 0x6202493A, 0x8863156E, 0x1F12E2AF, 0xA36C8C1D, 0x341D7BDC},
  {0x00000000, 0x3171D430, 0x62E3A860, 0x53927C50, 0xC5C750C0, 0xF4B684F0, 0xA724F8A0, 0x96552C90,
   0x8E62D771, 0xBF130341, 0xEC817F11, 0xDDF0AB21, 0x4BA587B1, 0x7AD45381, 0x29462FD1, 0x1837FBE1,
   0x1929D813, 0x28580C23, 0x7BCA7073, 0x4ABBA443, 0xDCEE88D3, 0xED9F5CE3, 0xBE0D20B3, 0x8F7CF483,
   0x974B0F62, 0xA63ADB52, 0xF5A8A702, 0xC4D97332, 0x528C5FA2, 0x63FD8B92, 0x306FF7C2, 0x011E23F2,
   0x3253B026, 0x03226416, 0x50B01846, 0x61C1CC76, 0xF794E0E6, 0xC6E534D6, 0x95774886, 0xA4069CB6,
   0xBC316757, 0x8D40B367, 0xDED2CF37, 0xEFA31B07, 0x79F63797, 0x4887E3A7, 0x1B159FF7, 0x2A644BC7,
   0x2B7A6835, 0x1A0BBC05, 0x4999C055, 0x78E81465, 0xEEBD38F5, 0xDFCCECC5, 0x8C5E9095, 0xBD2F44A5,
   0xA518BF44, 0x94696B74, 0xC7FB1724, 0xF68AC314, 0x60DFEF84, 0x51AE3BB4, 0x023C47E4, 0x334D93D4,
   0x64A7604C, 0x55D6B47C, 0x0644C82C, 0x37351C1C, 0xA160308C, 0x9011E4BC, 0xC38398EC, 0xF2F24CDC,
   0xEAC5B73D, 0xDBB4630D, 0x88261F5D, 0xB957CB6D, 0x2F02E7FD, 0x1E7333CD, 0x4DE14F9D, 0x7C909BAD,
   0x7D8EB85F, 0x4CFF6C6F, 0x1F6D103F, 0x2E1CC40F, 0xB849E89F, 0x89383CAF, 0xDAAA40FF, 0xEBDB94CF,
   0xF3EC6F2E, 0xC29DBB1E, 0x910FC74E, 0xA07E137E, 0x362B3FEE, 0x075AEBDE, 0x54C8978E, 0x65B943BE,
   0x56F4D06A, 0x6785045A, 0x3417780A, 0x0566AC3A, 0x933380AA, 0xA242549A, 0xF1D028CA, 0xC0A1FCFA,
   0xD896071B, 0xE9E7D32B, 0xBA75AF7B, 0x8B047B4B, 0x1D5157DB, 0x2C2083EB, 0x7FB2FFBB, 0x4EC32B8B,
   0x4FDD0879, 0x7EACDC49, 0x2D3EA019, 0x1C4F7429, 0x8A1A58B9, 0xBB6B8C89, 0xE8F9F0D9, 0xD98824E9,
   0xC1BFDF08, 0xF0CE0B38, 0xA35C7768, 0x922DA358, 0x04788FC8, 0x35095BF8, 0x669B27A8, 0x57EAF398,
   0xC94EC098, 0xF83F14A8, 0xABAD68F8, 0x9ADCBCC8, 0x0C899058, 0x3DF84468, 0x6E6A3838, 0x5F1BEC08,
   0x472C17E9, 0x765DC3D9, 0x25CFBF89, 0x14BE6BB9, 0x82EB4729, 0xB39A9319, 0xE008EF49, 0xD1793B79,
   0xD067188B, 0xE116CCBB, 0xB284B0EB, 0x83F564DB, 0x15A0484B, 0x24D19C7B, 0x7743E02B, 0x4632341B,
   0x5E05CFFA, 0x6F741BCA, 0x3CE6679A, 0x0D97B3AA, 0x9BC29F3A, 0xAAB34B0A, 0xF921375A, 0xC850E36A,
   0xFB1D70BE, 0xCA6CA48E, 0x99FED8DE, 0xA88F0CEE, 0x3EDA207E, 0x0FABF44E, 0x5C39881E, 0x6D485C2E,
   0x757FA7CF, 0x440E73FF, 0x179C0FAF, 0x26EDDB9F, 0xB0B8F70F, 0x81C9233F, 0xD25B5F6F, 0xE32A8B5F,
   0xE234A8AD, 0xD3457C9D, 0x80D700CD, 0xB1A6D4FD, 0x27F3F86D, 0x16822C5D, 0x4510500D, 0x7461843D,
   0x6C567FDC, 0x5D27ABEC, 0x0EB5D7BC, 0x3FC4038C, 0xA9912F1C, 0x98E0FB2C, 0xCB72877C, 0xFA03534C,
   0xADE9A0D4, 0x9C9874E4, 0xCF0A08B4, 0xFE7BDC84, 0x682EF014, 0x595F2424, 0x0ACD5874, 0x3BBC8C44,
   0x238B77A5, 0x12FAA395, 0x4168DFC5, 0x70190BF5, 0xE64C2765, 0xD73DF355, 0x84AF8F05, 0xB5DE5B35,
   0xB4C078C7, 0x85B1ACF7, 0xD623D0A7, 0xE7520497, 0x71072807, 0x4076FC37, 0x13E48067, 0x22955457,
   0x3AA2AFB6, 0x0BD37B86, 0x584107D6, 0x6930D3E6, 0xFF65FF76, 0xCE142B46, 0x9D865716, 0xACF78326,
   0x9FBA10F2, 0xAECBC4C2, 0xFD59B892, 0xCC286CA2, 0x5A7D4032, 0x6B0C9402, 0x389EE852, 0x09EF3C62,
   0x11D8C783, 0x20A913B3, 0x733B6FE3, 0x424ABBD3, 0xD41F9743, 0xE56E4373, 0xB6FC3F23, 0x878DEB13,
   0x8693C8E1, 0xB7E21CD1, 0xE4706081, 0xD501B4B1, 0x43549821, 0x72254C11, 0x21B73041, 0x10C6E471,
   0x08F11F90, 0x3980CBA0, 0x6A12B7F0, 0x5B6363C0, 0xCD364F50, 0xFC479B60, 0xAFD5E730, 0x9EA43300},
  {0x00000000, 0x30D23865, 0x61A470CA, 0x517648AF, 0xC348E194, 0xF39AD9F1, 0xA2EC915E, 0x923EA93B,
   0x837DB5D9, 0xB3AF8DBC, 0xE2D9C513, 0xD20BFD76, 0x4035544D, 0x70E76C28, 0x21912487, 0x11431CE2,
   0x03171D43, 0x33C52526, 0x62B36D89, 0x526155EC, 0xC05FFCD7, 0xF08DC4B2, 0xA1FB8C1D, 0x9129B478,
   0x806AA89A, 0xB0B890FF, 0xE1CED850, 0xD11CE035, 0x4322490E, 0x73F0716B, 0x228639C4, 0x125401A1,
   0x062E3A86, 0x36FC02E3, 0x678A4A4C, 0x57587229, 0xC566DB12, 0xF5B4E377, 0xA4C2ABD8, 0x941093BD,
   0x85538F5F, 0xB581B73A, 0xE4F7FF95, 0xD425C7F0, 0x461B6ECB, 0x76C956AE, 0x27BF1E01, 0x176D2664,
   0x053927C5, 0x35EB1FA0, 0x649D570F, 0x544F6F6A, 0xC671C651, 0xF6A3FE34, 0xA7D5B69B, 0x97078EFE,
   0x8644921C, 0xB696AA79, 0xE7E0E2D6, 0xD732DAB3, 0x450C7388, 0x75DE4BED, 0x24A80342, 0x147A3B27,
   0x0C5C750C, 0x3C8E4D69, 0x6DF805C6, 0x5D2A3DA3, 0xCF149498, 0xFFC6ACFD, 0xAEB0E452, 0x9E62DC37,
   0x8F21C0D5, 0xBFF3F8B0, 0xEE85B01F, 0xDE57887A, 0x4C692141, 0x7CBB1924, 0x2DCD518B, 0x1D1F69EE,
   0x0F4B684F, 0x3F99502A, 0x6EEF1885, 0x5E3D20E0, 0xCC0389DB, 0xFCD1B1BE, 0xADA7F911, 0x9D75C174,
   0x8C36DD96, 0xBCE4E5F3, 0xED92AD5C, 0xDD409539, 0x4F7E3C02, 0x7FAC0467, 0x2EDA4CC8, 0x1E0874AD,
   0x0A724F8A, 0x3AA077EF, 0x6BD63F40, 0x5B040725, 0xC93AAE1E, 0xF9E8967B, 0xA89EDED4, 0x984CE6B1,
   0x890FFA53, 0xB9DDC236, 0xE8AB8A99, 0xD879B2FC, 0x4A471BC7, 0x7A9523A2, 0x2BE36B0D, 0x1B315368,
   0x096552C9, 0x39B76AAC, 0x68C12203, 0x58131A66, 0xCA2DB35D, 0xFAFF8B38, 0xAB89C397, 0x9B5BFBF2,
   0x8A18E710, 0xBACADF75, 0xEBBC97DA, 0xDB6EAFBF, 0x49500684, 0x79823EE1, 0x28F4764E, 0x18264E2B,
   0x18B8EA18, 0x286AD27D, 0x791C9AD2, 0x49CEA2B7, 0xDBF00B8C, 0xEB2233E9, 0xBA547B46, 0x8A864323,
   0x9BC55FC1, 0xAB1767A4, 0xFA612F0B, 0xCAB3176E, 0x588DBE55, 0x685F8630, 0x3929CE9F, 0x09FBF6FA,
   0x1BAFF75B, 0x2B7DCF3E, 0x7A0B8791, 0x4AD9BFF4, 0xD8E716CF, 0xE8352EAA, 0xB9436605, 0x89915E60,
   0x98D24282, 0xA8007AE7, 0xF9763248, 0xC9A40A2D, 0x5B9AA316, 0x6B489B73, 0x3A3ED3DC, 0x0AECEBB9,
   0x1E96D09E, 0x2E44E8FB, 0x7F32A054, 0x4FE09831, 0xDDDE310A, 0xED0C096F, 0xBC7A41C0, 0x8CA879A5,
   0x9DEB6547, 0xAD395D22, 0xFC4F158D, 0xCC9D2DE8, 0x5EA384D3, 0x6E71BCB6, 0x3F07F419, 0x0FD5CC7C,
   0x1D81CDDD, 0x2D53F5B8, 0x7C25BD17, 0x4CF78572, 0xDEC92C49, 0xEE1B142C, 0xBF6D5C83, 0x8FBF64E6,
   0x9EFC7804, 0xAE2E4061, 0xFF5808CE, 0xCF8A30AB, 0x5DB49990, 0x6D66A1F5, 0x3C10E95A, 0x0CC2D13F,
   0x14E49F14, 0x2436A771, 0x7540EFDE, 0x4592D7BB, 0xD7AC7E80, 0xE77E46E5, 0xB6080E4A, 0x86DA362F,
   0x97992ACD, 0xA74B12A8, 0xF63D5A07, 0xC6EF6262, 0x54D1CB59, 0x6403F33C, 0x3575BB93, 0x05A783F6,
   0x17F38257, 0x2721BA32, 0x7657F29D, 0x4685CAF8, 0xD4BB63C3, 0xE4695BA6, 0xB51F1309, 0x85CD2B6C,
   0x948E378E, 0xA45C0FEB, 0xF52A4744, 0xC5F87F21, 0x57C6D61A, 0x6714EE7F, 0x3662A6D0, 0x06B09EB5,
   0x12CAA592, 0x22189DF7, 0x736ED558, 0x43BCED3D, 0xD1824406, 0xE1507C63, 0xB02634CC, 0x80F40CA9,
   0x91B7104B, 0xA165282E, 0xF0136081, 0xC0C158E4, 0x52FFF1DF, 0x622DC9BA, 0x335B8115, 0x0389B970,
   0x11DDB8D1, 0x210F80B4, 0x7079C81B, 0x40ABF07E, 0xD2955945, 0xE2476120, 0xB331298F, 0x83E311EA,
   0x92A00D08, 0xA272356D, 0xF3047DC2, 0xC3D645A7, 0x51E8EC9C, 0x613AD4F9, 0x304C9C56, 0x009EA433},
  {0x00000000, 0x54075546, 0xA80EAA8C, 0xFC09FFCA, 0x55F123E9, 0x01F676AF, 0xFDFF8965, 0xA9F8DC23,
   0xABE247D2, 0xFFE51294, 0x03ECED5E, 0x57EBB818, 0xFE13643B, 0xAA14317D, 0x561DCEB7, 0x021A9BF1,
   0x5228F955, 0x062FAC13, 0xFA2653D9, 0xAE21069F, 0x07D9DABC, 0x53DE8FFA, 0xAFD77030, 0xFBD02576,
   0xF9CABE87, 0xADCDEBC1, 0x51C4140B, 0x05C3414D, 0xAC3B9D6E, 0xF83CC828, 0x043537E2, 0x503262A4,
   0xA451F2AA, 0xF056A7EC, 0x0C5F5826, 0x58580D60, 0xF1A0D143, 0xA5A78405, 0x59AE7BCF, 0x0DA92E89,
   0x0FB3B578, 0x5BB4E03E, 0xA7BD1FF4, 0xF3BA4AB2, 0x5A429691, 0x0E45C3D7, 0xF24C3C1D, 0xA64B695B,
   0xF6790BFF, 0xA27E5EB9, 0x5E77A173, 0x0A70F435, 0xA3882816, 0xF78F7D50, 0x0B86829A, 0x5F81D7DC,
   0x5D9B4C2D, 0x099C196B, 0xF595E6A1, 0xA192B3E7, 0x086A6FC4, 0x5C6D3A82, 0xA064C548, 0xF463900E,
   0x4D4F93A5, 0x1948C6E3, 0xE5413929, 0xB1466C6F, 0x18BEB04C, 0x4CB9E50A, 0xB0B01AC0, 0xE4B74F86,
   0xE6ADD477, 0xB2AA8131, 0x4EA37EFB, 0x1AA42BBD, 0xB35CF79E, 0xE75BA2D8, 0x1B525D12, 0x4F550854,
   0x1F676AF0, 0x4B603FB6, 0xB769C07C, 0xE36E953A, 0x4A964919, 0x1E911C5F, 0xE298E395, 0xB69FB6D3,
   0xB4852D22, 0xE0827864, 0x1C8B87AE, 0x488CD2E8, 0xE1740ECB, 0xB5735B8D, 0x497AA447, 0x1D7DF101,
   0xE91E610F, 0xBD193449, 0x4110CB83, 0x15179EC5, 0xBCEF42E6, 0xE8E817A0, 0x14E1E86A, 0x40E6BD2C,
   0x42FC26DD, 0x16FB739B, 0xEAF28C51, 0xBEF5D917, 0x170D0534, 0x430A5072, 0xBF03AFB8, 0xEB04FAFE,
   0xBB36985A, 0xEF31CD1C, 0x133832D6, 0x473F6790, 0xEEC7BBB3, 0xBAC0EEF5, 0x46C9113F, 0x12CE4479,
   0x10D4DF88, 0x44D38ACE, 0xB8DA7504, 0xECDD2042, 0x4525FC61, 0x1122A927, 0xED2B56ED, 0xB92C03AB,
   0x9A9F274A, 0xCE98720C, 0x32918DC6, 0x6696D880, 0xCF6E04A3, 0x9B6951E5, 0x6760AE2F, 0x3367FB69,
   0x317D6098, 0x657A35DE, 0x9973CA14, 0xCD749F52, 0x648C4371, 0x308B1637, 0xCC82E9FD, 0x9885BCBB,
   0xC8B7DE1F, 0x9CB08B59, 0x60B97493, 0x34BE21D5, 0x9D46FDF6, 0xC941A8B0, 0x3548577A, 0x614F023C,
   0x635599CD, 0x3752CC8B, 0xCB5B3341, 0x9F5C6607, 0x36A4BA24, 0x62A3EF62, 0x9EAA10A8, 0xCAAD45EE,
   0x3ECED5E0, 0x6AC980A6, 0x96C07F6C, 0xC2C72A2A, 0x6B3FF609, 0x3F38A34F, 0xC3315C85, 0x973609C3,
   0x952C9232, 0xC12BC774, 0x3D2238BE, 0x69256DF8, 0xC0DDB1DB, 0x94DAE49D, 0x68D31B57, 0x3CD44E11,
   0x6CE62CB5, 0x38E179F3, 0xC4E88639, 0x90EFD37F, 0x39170F5C, 0x6D105A1A, 0x9119A5D0, 0xC51EF096,
   0xC7046B67, 0x93033E21, 0x6F0AC1EB, 0x3B0D94AD, 0x92F5488E, 0xC6F21DC8, 0x3AFBE202, 0x6EFCB744,
   0xD7D0B4EF, 0x83D7E1A9, 0x7FDE1E63, 0x2BD94B25, 0x82219706, 0xD626C240, 0x2A2F3D8A, 0x7E2868CC,
   0x7C32F33D, 0x2835A67B, 0xD43C59B1, 0x803B0CF7, 0x29C3D0D4, 0x7DC48592, 0x81CD7A58, 0xD5CA2F1E,
   0x85F84DBA, 0xD1FF18FC, 0x2DF6E736, 0x79F1B270, 0xD0096E53, 0x840E3B15, 0x7807C4DF, 0x2C009199,
   0x2E1A0A68, 0x7A1D5F2E, 0x8614A0E4, 0xD213F5A2, 0x7BEB2981, 0x2FEC7CC7, 0xD3E5830D, 0x87E2D64B,
   0x73814645, 0x27861303, 0xDB8FECC9, 0x8F88B98F, 0x267065AC, 0x727730EA, 0x8E7ECF20, 0xDA799A66,
   0xD8630197, 0x8C6454D1, 0x706DAB1B, 0x246AFE5D, 0x8D92227E, 0xD9957738, 0x259C88F2, 0x719BDDB4,
   0x21A9BF10, 0x75AEEA56, 0x89A7159C, 0xDDA040DA, 0x74589CF9, 0x205FC9BF, 0xDC563675, 0x88516333,
   0x8A4BF8C2, 0xDE4CAD84, 0x2245524E, 0x76420708, 0xDFBADB2B, 0x8BBD8E6D, 0x77B471A7, 0x23B324E1},
  {0x00000000, 0x678EFD01, 0xCF1DFA02, 0xA8930703, 0x9BD782F5, 0xFC597FF4, 0x54CA78F7, 0x334485F6,
   0x3243731B, 0x55CD8E1A, 0xFD5E8919, 0x9AD07418, 0xA994F1EE, 0xCE1A0CEF, 0x66890BEC, 0x0107F6ED,
   0x6486E636, 0x03081B37, 0xAB9B1C34, 0xCC15E135, 0xFF5164C3, 0x98DF99C2, 0x304C9EC1, 0x57C263C0,
   0x56C5952D, 0x314B682C, 0x99D86F2F, 0xFE56922E, 0xCD1217D8, 0xAA9CEAD9, 0x020FEDDA, 0x658110DB,
   0xC90DCC6C, 0xAE83316D, 0x0610366E, 0x619ECB6F, 0x52DA4E99, 0x3554B398, 0x9DC7B49B, 0xFA49499A,
   0xFB4EBF77, 0x9CC04276, 0x34534575, 0x53DDB874, 0x60993D82, 0x0717C083, 0xAF84C780, 0xC80A3A81,
   0xAD8B2A5A, 0xCA05D75B, 0x6296D058, 0x05182D59, 0x365CA8AF, 0x51D255AE, 0xF94152AD, 0x9ECFAFAC,
   0x9FC85941, 0xF846A440, 0x50D5A343, 0x375B5E42, 0x041FDBB4, 0x639126B5, 0xCB0221B6, 0xAC8CDCB7,
   0x97F7EE29, 0xF0791328, 0x58EA142B, 0x3F64E92A, 0x0C206CDC, 0x6BAE91DD, 0xC33D96DE, 0xA4B36BDF,
   0xA5B49D32, 0xC23A6033, 0x6AA96730, 0x0D279A31, 0x3E631FC7, 0x59EDE2C6, 0xF17EE5C5, 0x96F018C4,
   0xF371081F, 0x94FFF51E, 0x3C6CF21D, 0x5BE20F1C, 0x68A68AEA, 0x0F2877EB, 0xA7BB70E8, 0xC0358DE9,
   0xC1327B04, 0xA6BC8605, 0x0E2F8106, 0x69A17C07, 0x5AE5F9F1, 0x3D6B04F0, 0x95F803F3, 0xF276FEF2,
   0x5EFA2245, 0x3974DF44, 0x91E7D847, 0xF6692546, 0xC52DA0B0, 0xA2A35DB1, 0x0A305AB2, 0x6DBEA7B3,
   0x6CB9515E, 0x0B37AC5F, 0xA3A4AB5C, 0xC42A565D, 0xF76ED3AB, 0x90E02EAA, 0x387329A9, 0x5FFDD4A8,
   0x3A7CC473, 0x5DF23972, 0xF5613E71, 0x92EFC370, 0xA1AB4686, 0xC625BB87, 0x6EB6BC84, 0x09384185,
   0x083FB768, 0x6FB14A69, 0xC7224D6A, 0xA0ACB06B, 0x93E8359D, 0xF466C89C, 0x5CF5CF9F, 0x3B7B329E,
   0x2A03AAA3, 0x4D8D57A2, 0xE51E50A1, 0x8290ADA0, 0xB1D42856, 0xD65AD557, 0x7EC9D254, 0x19472F55,
   0x1840D9B8, 0x7FCE24B9, 0xD75D23BA, 0xB0D3DEBB, 0x83975B4D, 0xE419A64C, 0x4C8AA14F, 0x2B045C4E,
   0x4E854C95, 0x290BB194, 0x8198B697, 0xE6164B96, 0xD552CE60, 0xB2DC3361, 0x1A4F3462, 0x7DC1C963,
   0x7CC63F8E, 0x1B48C28F, 0xB3DBC58C, 0xD455388D, 0xE711BD7B, 0x809F407A, 0x280C4779, 0x4F82BA78,
   0xE30E66CF, 0x84809BCE, 0x2C139CCD, 0x4B9D61CC, 0x78D9E43A, 0x1F57193B, 0xB7C41E38, 0xD04AE339,
   0xD14D15D4, 0xB6C3E8D5, 0x1E50EFD6, 0x79DE12D7, 0x4A9A9721, 0x2D146A20, 0x85876D23, 0xE2099022,
   0x878880F9, 0xE0067DF8, 0x48957AFB, 0x2F1B87FA, 0x1C5F020C, 0x7BD1FF0D, 0xD342F80E, 0xB4CC050F,
   0xB5CBF3E2, 0xD2450EE3, 0x7AD609E0, 0x1D58F4E1, 0x2E1C7117, 0x49928C16, 0xE1018B15, 0x868F7614,
   0xBDF4448A, 0xDA7AB98B, 0x72E9BE88, 0x15674389, 0x2623C67F, 0x41AD3B7E, 0xE93E3C7D, 0x8EB0C17C,
   0x8FB73791, 0xE839CA90, 0x40AACD93, 0x27243092, 0x1460B564, 0x73EE4865, 0xDB7D4F66, 0xBCF3B267,
   0xD972A2BC, 0xBEFC5FBD, 0x166F58BE, 0x71E1A5BF, 0x42A52049, 0x252BDD48, 0x8DB8DA4B, 0xEA36274A,
   0xEB31D1A7, 0x8CBF2CA6, 0x242C2BA5, 0x43A2D6A4, 0x70E65352, 0x1768AE53, 0xBFFBA950, 0xD8755451,
   0x74F988E6, 0x137775E7, 0xBBE472E4, 0xDC6A8FE5, 0xEF2E0A13, 0x88A0F712, 0x2033F011, 0x47BD0D10,
   0x46BAFBFD, 0x213406FC, 0x89A701FF, 0xEE29FCFE, 0xDD6D7908, 0xBAE38409, 0x1270830A, 0x75FE7E0B,
   0x107F6ED0, 0x77F193D1, 0xDF6294D2, 0xB8EC69D3, 0x8BA8EC25, 0xEC261124, 0x44B51627, 0x233BEB26,
   0x223C1DCB, 0x45B2E0CA, 0xED21E7C9, 0x8AAF1AC8, 0xB9EB9F3E, 0xDE65623F, 0x76F6653C, 0x1178983D},
  {0x00000000, 0xF20C0DFE, 0xE1F46D0D, 0x13F860F3, 0xC604ACEB, 0x3408A115, 0x27F0C1E6, 0xD5FCCC18,
   0x89E52F27, 0x7BE922D9, 0x6811422A, 0x9A1D4FD4, 0x4FE183CC, 0xBDED8E32, 0xAE15EEC1, 0x5C19E33F,
   0x162628BF, 0xE42A2541, 0xF7D245B2, 0x05DE484C, 0xD0228454, 0x222E89AA, 0x31D6E959, 0xC3DAE4A7,
   0x9FC30798, 0x6DCF0A66, 0x7E376A95, 0x8C3B676B, 0x59C7AB73, 0xABCBA68D, 0xB833C67E, 0x4A3FCB80,
   0x2C4C517E, 0xDE405C80, 0xCDB83C73, 0x3FB4318D, 0xEA48FD95, 0x1844F06B, 0x0BBC9098, 0xF9B09D66,
   0xA5A97E59, 0x57A573A7, 0x445D1354, 0xB6511EAA, 0x63ADD2B2, 0x91A1DF4C, 0x8259BFBF, 0x7055B241,
   0x3A6A79C1, 0xC866743F, 0xDB9E14CC, 0x29921932, 0xFC6ED52A, 0x0E62D8D4, 0x1D9AB827, 0xEF96B5D9,
   0xB38F56E6, 0x41835B18, 0x527B3BEB, 0xA0773615, 0x758BFA0D, 0x8787F7F3, 0x947F9700, 0x66739AFE,
   0x5898A2FC, 0xAA94AF02, 0xB96CCFF1, 0x4B60C20F, 0x9E9C0E17, 0x6C9003E9, 0x7F68631A, 0x8D646EE4,
   0xD17D8DDB, 0x23718025, 0x3089E0D6, 0xC285ED28, 0x17792130, 0xE5752CCE, 0xF68D4C3D, 0x048141C3,
   0x4EBE8A43, 0xBCB287BD, 0xAF4AE74E, 0x5D46EAB0, 0x88BA26A8, 0x7AB62B56, 0x694E4BA5, 0x9B42465B,
   0xC75BA564, 0x3557A89A, 0x26AFC869, 0xD4A3C597, 0x015F098F, 0xF3530471, 0xE0AB6482, 0x12A7697C,
   0x74D4F382, 0x86D8FE7C, 0x95209E8F, 0x672C9371, 0xB2D05F69, 0x40DC5297, 0x53243264, 0xA1283F9A,
   0xFD31DCA5, 0x0F3DD15B, 0x1CC5B1A8, 0xEEC9BC56, 0x3B35704E, 0xC9397DB0, 0xDAC11D43, 0x28CD10BD,
   0x62F2DB3D, 0x90FED6C3, 0x8306B630, 0x710ABBCE, 0xA4F677D6, 0x56FA7A28, 0x45021ADB, 0xB70E1725,
   0xEB17F41A, 0x191BF9E4, 0x0AE39917, 0xF8EF94E9, 0x2D1358F1, 0xDF1F550F, 0xCCE735FC, 0x3EEB3802,
   0xB13145F8, 0x433D4806, 0x50C528F5, 0xA2C9250B, 0x7735E913, 0x8539E4ED, 0x96C1841E, 0x64CD89E0,
   0x38D46ADF, 0xCAD86721, 0xD92007D2, 0x2B2C0A2C, 0xFED0C634, 0x0CDCCBCA, 0x1F24AB39, 0xED28A6C7,
   0xA7176D47, 0x551B60B9, 0x46E3004A, 0xB4EF0DB4, 0x6113C1AC, 0x931FCC52, 0x80E7ACA1, 0x72EBA15F,
   0x2EF24260, 0xDCFE4F9E, 0xCF062F6D, 0x3D0A2293, 0xE8F6EE8B, 0x1AFAE375, 0x09028386, 0xFB0E8E78,
   0x9D7D1486, 0x6F711978, 0x7C89798B, 0x8E857475, 0x5B79B86D, 0xA975B593, 0xBA8DD560, 0x4881D89E,
   0x14983BA1, 0xE694365F, 0xF56C56AC, 0x07605B52, 0xD29C974A, 0x20909AB4, 0x3368FA47, 0xC164F7B9,
   0x8B5B3C39, 0x795731C7, 0x6AAF5134, 0x98A35CCA, 0x4D5F90D2, 0xBF539D2C, 0xACABFDDF, 0x5EA7F021,
   0x02BE131E, 0xF0B21EE0, 0xE34A7E13, 0x114673ED, 0xC4BABFF5, 0x36B6B20B, 0x254ED2F8, 0xD742DF06,
   0xE9A9E704, 0x1BA5EAFA, 0x085D8A09, 0xFA5187F7, 0x2FAD4BEF, 0xDDA14611, 0xCE5926E2, 0x3C552B1C,
   0x604CC823, 0x9240C5DD, 0x81B8A52E, 0x73B4A8D0, 0xA64864C8, 0x54446936, 0x47BC09C5, 0xB5B0043B,
   0xFF8FCFBB, 0x0D83C245, 0x1E7BA2B6, 0xEC77AF48, 0x398B6350, 0xCB876EAE, 0xD87F0E5D, 0x2A7303A3,
   0x766AE09C, 0x8466ED62, 0x979E8D91, 0x6592806F, 0xB06E4C77, 0x42624189, 0x519A217A, 0xA3962C84,
   0xC5E5B67A, 0x37E9BB84, 0x2411DB77, 0xD61DD689, 0x03E11A91, 0xF1ED176F, 0xE215779C, 0x10197A62,
   0x4C00995D, 0xBE0C94A3, 0xADF4F450, 0x5FF8F9AE, 0x8A0435B6, 0x78083848, 0x6BF058BB, 0x99FC5545,
   0xD3C39EC5, 0x21CF933B, 0x3237F3C8, 0xC03BFE36, 0x15C7322E, 0xE7CB3FD0, 0xF4335F23, 0x063F52DD,
   0x5A26B1E2, 0xA82ABC1C, 0xBBD2DCEF, 0x49DED111, 0x9C221D09, 0x6E2E10F7, 0x7DD67004, 0x8FDA7DFA}
};
ATF__PRIVATE const atf__crc32c_row *atf__crc32c__slices(void) { return atf__crc32c__table; }
/* end of generated tables */

/* end of the implementation */
#endif /* ATF_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 The atf.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this
software and associated documentation files (the "Software"), to deal in the Software
without restriction, including without limitation the rights to use, copy, modify, merge,
publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
to whom the Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
DEALINGS IN THE SOFTWARE.
*/
