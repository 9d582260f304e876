/* atf.h - v0.1.0 - ADA Trace Format (ATF v2): write, read and verify function-level traces.
 * SPDX-License-Identifier: MIT
 *
 * CONTENTS
 *   1. config           ATFDEF, ATF_STATIC, ATF_MALLOC/REALLOC/FREE, ATF_ASSERT, ATF_NO_*
 *   2. platform         OS / CPU / compiler detection (ATF__OS_*, ATF__ARCH_*, ATF__CC_*)
 *   3. bytes            little-endian load/store helpers, the only way bytes reach the disk
 *   4. result           atf_result codes, atf_result_str(), atf_error (first error, with detail)
 *   5. format           on-disk records of layout 1 (version byte 1) and layout 2 (version byte 2)
 *   6. crc32c           CRC32-C (Castagnoli): SSE4.2, ARMv8 and slicing-by-16 software paths
 *   7. clock            atf_now_ns(): the platform's continuous clock, and its clock_type
 *   8. ring             SPSC rings in caller memory, position-independent (shared-memory safe)
 *   9. writer           the per-thread wait-free producer: call/return/exception, detail
 *  10. session writer   session directory, drain, file writers, manifest, windowed detail
 *  11. readers          index, detail and thread readers over mmap: O(1) access, both-way links
 *  12. session reader   a pid_* directory: manifest, all threads merged by time, time seek
 *
 * QUICK START
 *   In exactly one .c file (never in a header):
 *       #define ATF_IMPLEMENTATION
 *       #include "atf.h"
 *   Everywhere else just #include "atf.h".
 *
 *       atf_thread_reader tr;
 *       if (atf_thread_reader_open(&tr, "session_x/pid_1/thread_0", NULL) == ATF_OK) {
 *           atf_index_event ev;
 *           for (uint64_t i = 0; i < tr.index.event_count; i++) {
 *               atf_index_reader_get(&tr.index, i, &ev);
 *               ... ev.timestamp_ns, ev.function_id, ev.kind ...
 *           }
 *           atf_thread_reader_close(&tr);
 *       }
 *
 * LICENSE: MIT, see the end of this file.
 */
#ifndef ATF_H_INCLUDED
#define ATF_H_INCLUDED

#define ATF_VERSION_MAJOR 0
#define ATF_VERSION_MINOR 1
#define ATF_VERSION_PATCH 0

/* ==== 1. config ====================================================================== */
/* ATF_STATIC: every function static (for a private copy in one translation unit).
 * ATFDEF:     storage class of every public function (default extern).
 * ATF_MALLOC / ATF_REALLOC / ATF_FREE: all three or none (default: the C library).
 * ATF_ASSERT: contract checks on the caller's arguments (default: assert()).
 * ATF_NO_HW_CRC: compile out the hardware CRC32-C paths.
 * ATF_NO_INSTRUMENT: attribute put on every function an instrumentation hook can reach. */
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
#endif

/* ==== 2. platform ==================================================================== */
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

#ifndef ATF_NO_INSTRUMENT
#  if defined(ATF__CC_CLANG) || defined(ATF__CC_GCC)
#    define ATF_NO_INSTRUMENT __attribute__((no_instrument_function))
#  else
#    define ATF_NO_INSTRUMENT
#  endif
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 3. bytes ======================================================================= */
/* Every on-disk integer goes through these, whatever the host's byte order. Byte-wise
 * shifts compile to single loads/stores on little-endian hosts and to correct swaps on
 * big-endian ones, with no alignment or aliasing assumptions. Inline because the
 * producer's hot path encodes records with them. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#  define ATF__INLINE static inline ATF_NO_INSTRUMENT
#else
#  define ATF__INLINE static __inline ATF_NO_INSTRUMENT
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

/* ==== 4. result ====================================================================== */
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
    X(ATF_E_STATE,     -15, "call not valid in the object's current state")

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

/* ==== 5. format ====================================================================== */
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
 * (ATF_E_VERSION), in that order, and fill *h even when they fail on version.
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

/* Names for printing ("call", "x86_64", "linux", "boottime"); "unknown" otherwise. */
ATFDEF const char *atf_event_kind_str(uint32_t kind);
ATFDEF const char *atf_arch_str(uint32_t arch);
ATFDEF const char *atf_os_str(uint32_t os);
ATFDEF const char *atf_clock_str(uint32_t clock_type);

/* ==== 6. crc32c ====================================================================== */
/* CRC32-C (Castagnoli, reflected polynomial 0x82F63B78), the check value of ATF footers.
 * Incremental: crc = 0; crc = atf_crc32c_update(crc, a, na); crc = atf_crc32c_update(crc,
 * b, nb); gives the CRC of a||b (the pre/post inversion is inside). */
typedef enum atf_crc32c_impl {
    ATF_CRC32C_AUTO = 0,     /* best available: chosen once, on first use */
    ATF_CRC32C_SW = 1,       /* portable slicing-by-16 tables */
    ATF_CRC32C_SSE42 = 2,    /* x86-64 crc32 instruction, 3 streams + PCLMULQDQ merge */
    ATF_CRC32C_ARMV8 = 3     /* arm64 crc32c instructions */
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
/* "sw", "sse42", "armv8". */
ATFDEF const char *atf_crc32c_impl_str(atf_crc32c_impl impl);

/* ==== 7. clock ======================================================================= */
/* The trace clock: the platform's continuous clock (it keeps counting through sleep),
 * in nanoseconds. Linux/Android: CLOCK_BOOTTIME (clock_type 3); Apple:
 * mach_continuous_time (1); Windows: QueryPerformanceCounter (2). */

/* Nanoseconds on the trace clock. Thread-safe, wait-free, never fails. */
ATFDEF uint64_t atf_now_ns(void);
/* The ATF_CLOCK_* value of atf_now_ns() on this platform. */
ATFDEF uint32_t atf_clock_type(void);
/* Wall-clock time (UTC) in nanoseconds since 1970, for timing anchors. */
ATFDEF uint64_t atf_wall_ns(void);

/* ==== 8. ring ======================================================================== */
/* Single-producer single-consumer rings. The producer is the traced thread, the consumer
 * the drain. Ring memory holds only offsets and counters (no pointers), so it can live in
 * caller-supplied memory such as a MAP_SHARED mapping and be drained from another process.
 *
 *   index ring:  2^k fixed 32-byte slots holding index events already in on-disk form;
 *   detail ring: 2^k bytes of variable-length entries: an 8-byte entry header
 *                (u32 entry length, u32 flags) then the on-disk detail record, padded to 8.
 *
 * Positions (head, tail) count records (index) or bytes (detail) since the start and never
 * wrap; the producer publishes head with a release store, the consumer publishes tail the
 * same way, and each side caches the other's value and rereads it only when the cache says
 * full/empty, so the cache line moves only when it must. */
#define ATF_RING_MAGIC 0x52465441u   /* "ATFR" */
enum { ATF_RING_INDEX = 1, ATF_RING_DETAIL = 2 };

/* The shared part of a ring, at the start of its memory; data follows at data_offset. */
typedef struct atf_ring_header {
    uint32_t magic;              /* ATF_RING_MAGIC once initialized */
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
    uint64_t dropped;            /* events the producer dropped because the ring was full */
    uint64_t closed;             /* producer done: no more events will come */
    uint8_t pad3[48];
} atf_ring_header;

/* A process-local view of a ring: pointers into the ring memory plus cached positions. */
typedef struct atf_ring {
    atf_ring_header *shared;
    uint8_t *data;
    uint64_t mask;               /* capacity - 1 */
    uint64_t pos;                /* own position: head (producer) or tail (consumer) */
    uint64_t other;              /* cached position of the other side */
} atf_ring;

/* Bytes of memory a ring of `capacity` slots (index) or bytes (detail) needs; capacity
 * is rounded up to a power of two (index >= 64 slots, detail >= 4 KiB). */
ATFDEF size_t atf_ring_memory_size(uint32_t kind, uint64_t capacity);
/* Formats `mem` (size bytes, 64-byte aligned) as an empty ring. ATF_E_ARG when too small.
 * Not thread-safe: call before either side attaches. */
ATFDEF atf_result atf_ring_init(void *mem, size_t size, uint32_t kind, uint64_t capacity,
                                uint32_t layout, uint32_t thread_id);
/* Builds a local view of an initialized ring (as producer or consumer) after validating
 * its header against `size`: ATF_E_MAGIC / ATF_E_CORRUPT on a bad header. */
ATFDEF atf_result atf_ring_attach(atf_ring *r, void *mem, size_t size, int as_producer);

/* Private atomics for the hot path (release/acquire on 64-bit positions). */
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
#else
ATF__INLINE uint64_t atf__load_acquire_u64(const uint64_t *p) {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
ATF__INLINE void atf__store_release_u64(uint64_t *p, uint64_t v) {
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
#endif

/* ==== 9. writer ====================================================================== */
/* The per-thread producer: one index ring, one optional detail ring, the call depth and
 * the sequence counters. Every call here is wait-free: no lock, no system call, no
 * allocation. A full ring drops the event and counts it; nothing else happens.
 *
 * Sequence numbers: an event's index_seq is the number of index events this writer
 * pushed before it (dropped events take no number), which is its position in index.atf.
 * In detail mode ALWAYS the detail record's number is known at once and both links are
 * written by the producer; in WINDOWED mode the index record is pushed with no link and
 * the drain writes the link when it decides to persist the detail (see the session). */
enum { ATF_DETAIL_OFF = 0, ATF_DETAIL_ALWAYS = 1, ATF_DETAIL_WINDOWED = 2 };

typedef struct atf_session atf_session;

typedef struct atf_writer {
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
} atf_writer;

/* Binds a writer to rings in caller memory (e.g. shared memory); detail_mem may be NULL.
 * For producers outside a session (another process drains the rings). */
ATFDEF atf_result atf_writer_init(atf_writer *w, void *index_mem, size_t index_size,
                                  void *detail_mem, size_t detail_size, uint32_t detail_mode);
/* Marks the writer's rings closed: the drain finalizes the thread once they are empty. */
ATFDEF void atf_writer_close(atf_writer *w);

/* Pushes one index event linked to detail record `detail_seq` (ATF_NO_DETAIL for none).
 * ATF_OK, or ATF_E_FULL (dropped and counted). The record is complete before the release
 * store of head publishes it. */
ATF__INLINE atf_result atf__writer_push_linked(atf_writer *w, uint32_t kind, uint64_t function_id,
                                               uint64_t timestamp_ns, uint32_t depth,
                                               uint64_t detail_seq) {
    atf_ring *r = &w->index;
    uint8_t *slot;
    if (r->pos - r->other > r->mask) {
        r->other = atf__load_acquire_u64(&r->shared->tail);
        if (r->pos - r->other > r->mask) {
            w->dropped++;
            atf__store_release_u64(&r->shared->dropped, w->dropped);
            return ATF_E_FULL;
        }
    }
    slot = r->data + ((r->pos & r->mask) << 5);
    atf__store_le64(slot, timestamp_ns);
    atf__store_le64(slot + 8, function_id);
    if (w->layout == ATF_LAYOUT_2) {
        atf__store_le64(slot + 16, detail_seq);
        atf__store_le64(slot + 24, kind & 0xFFu);
    } else {
        atf__store_le32(slot + 16, w->thread_id);
        atf__store_le32(slot + 20, kind);
        atf__store_le32(slot + 24, depth);
        atf__store_le32(slot + 28, detail_seq >= ATF_NO_DETAIL_U32 ? ATF_NO_DETAIL_U32
                                                                   : (uint32_t)detail_seq);
    }
    atf__store_release_u64(&r->shared->head, ++r->pos);
    return ATF_OK;
}

/* Pushes one index event with no detail at an explicit depth. */
ATF__INLINE atf_result atf_writer_push(atf_writer *w, uint32_t kind, uint64_t function_id,
                                       uint64_t timestamp_ns, uint32_t depth) {
    return atf__writer_push_linked(w, kind, function_id, timestamp_ns, depth, ATF_NO_DETAIL);
}

/* Function entry at a caller-supplied timestamp (the library clock: pass atf_now_ns()). */
ATF__INLINE atf_result atf_writer_call(atf_writer *w, uint64_t function_id, uint64_t ts) {
    return atf_writer_push(w, ATF_EVENT_CALL, function_id, ts, w->depth++);
}
/* Function exit; the depth returns to that of the matching call. */
ATF__INLINE atf_result atf_writer_return(atf_writer *w, uint64_t function_id, uint64_t ts) {
    if (w->depth) w->depth--;
    return atf_writer_push(w, ATF_EVENT_RETURN, function_id, ts, w->depth);
}
/* An exception leaving `function_id`: like a return for the depth. */
ATF__INLINE atf_result atf_writer_exception(atf_writer *w, uint64_t function_id, uint64_t ts) {
    if (w->depth) w->depth--;
    return atf_writer_push(w, ATF_EVENT_EXCEPTION, function_id, ts, w->depth);
}

/* An event with a detail payload (`payload`, `len` bytes, e.g. an encoded
 * atf_detail_payload) of detail type `type`. The index event is kept even when the detail
 * ring is full (then detail_dropped counts it and the event carries no link). Adjusts the
 * depth like call/return/exception. ATF_OK or ATF_E_FULL when the index event dropped. */
ATFDEF atf_result atf_writer_event_detail(atf_writer *w, uint32_t kind, uint64_t function_id,
                                          uint64_t ts, uint16_t type, const void *payload,
                                          size_t len);

/* ==== 10. session writer ============================================================= */
/* A session is a directory <root>/session_YYYYMMDD_HHMMSS/pid_<pid>/ with one thread_<slot>/
 * per attached thread and manifest.json. A drain (a background thread, or
 * atf_session_pump() in manual mode) empties the rings in batches into the files, so each
 * file receives its thread's events in the order they were produced.
 *
 * Windowed detail (flight recorder): detail records stay in the detail ring; the drain
 * persists those whose timestamp falls in [t - pre_roll, t + post_roll] of a trigger t and
 * releases older ones. Persisted records get consecutive numbers (detail.atf is dense);
 * the drain writes that number into the index record's detail_seq: in the ring when the
 * index event is not drained yet, else in place in index.atf (and the footer CRC is then
 * recomputed from the file at close). */
enum { ATF_DRAIN_THREAD = 0, ATF_DRAIN_MANUAL = 1 };
enum { ATF_FSYNC_NONE = 0, ATF_FSYNC_CLOSE = 1 };

/* Zero is the default for every field. */
typedef struct atf_session_config {
    uint32_t layout;             /* ATF_LAYOUT_1 (default) or ATF_LAYOUT_2 */
    uint64_t index_ring_events;  /* index ring slots per thread; default 65536 (2 MiB) */
    uint64_t detail_ring_bytes;  /* detail ring bytes per thread; default 1 MiB */
    uint32_t detail_mode;        /* ATF_DETAIL_OFF (default), _ALWAYS, _WINDOWED */
    uint64_t pre_roll_ns;        /* windowed: detail kept before a trigger; default 0 */
    uint64_t post_roll_ns;       /* windowed: detail kept after a trigger; default 0 */
    uint32_t drain_mode;         /* ATF_DRAIN_THREAD (default) or ATF_DRAIN_MANUAL */
    uint32_t drain_interval_us;  /* drain thread sleep when idle; default 1000 */
    uint32_t fsync_mode;         /* ATF_FSYNC_NONE (default) or ATF_FSYNC_CLOSE */
    uint64_t fsync_every_bytes;  /* also fdatasync each file every N bytes; default 0 (never) */
    uint32_t max_threads;        /* thread slots; default 1024 */
    const char *session_name;    /* directory name; default session_YYYYMMDD_HHMMSS */
} atf_session_config;

/* Per-thread figures, as in the manifest. */
typedef struct atf_thread_stats {
    uint32_t slot;
    uint32_t thread_id;
    uint64_t events_written;     /* index events in index.atf */
    uint64_t events_dropped;     /* index ring full */
    uint64_t detail_written;     /* records in detail.atf */
    uint64_t detail_dropped;     /* detail ring full (ALWAYS) or pushed out unpersisted */
    uint64_t events_lost_io;     /* drained but not written because the file failed */
} atf_thread_stats;

/* Creates the session directory, writes the first manifest and starts the drain.
 * `root` is created when missing. On failure *out is NULL. */
ATFDEF atf_result atf_session_open(atf_session **out, const char *root,
                                   const atf_session_config *cfg /* optional */);
/* Stops the drain, drains every ring, finalizes every file (footer with CRC32-C, header
 * rewrite, optional fsync) and the manifest, then frees the session. Returns the first
 * error the session met (the files are finalized as far as they can be either way).
 * Every writer of the session becomes invalid; threads must have stopped producing. */
ATFDEF atf_result atf_session_close(atf_session *s);
/* The calling thread's writer, attaching the thread on first use (thread-local lookup;
 * the slot is released when the thread exits, after its events are drained). NULL when
 * the session is out of slots or memory (the failure is counted, see the manifest). */
ATFDEF atf_writer *atf_session_writer(atf_session *s);
/* Attaches the calling thread explicitly, with an optional name for the manifest. */
ATFDEF atf_result atf_session_attach(atf_session *s, const char *name, atf_writer **out);
/* Detaches the calling thread: its writer is closed and finalized by the drain. */
ATFDEF void atf_session_detach(atf_session *s);
/* Adds a thread slot whose rings live in caller memory (initialized with atf_ring_init),
 * e.g. filled by another process through shared memory. The memory must stay valid until
 * the session closes. */
ATFDEF atf_result atf_session_attach_rings(atf_session *s, void *index_mem, size_t index_size,
                                           void *detail_mem, size_t detail_size,
                                           const char *name, uint32_t *slot_out);
/* Manual drain: moves everything available into the files. Also allowed with a drain
 * thread (it then waits for the drain lock). Returns the first error so far. */
ATFDEF atf_result atf_session_pump(atf_session *s);
/* Windowed detail: persist detail recorded within [t - pre_roll, t + post_roll]. */
ATFDEF void atf_session_trigger(atf_session *s, uint64_t t_ns);
/* Registers a module (module_id 0 = main executable) and a symbol for the manifest. */
ATFDEF atf_result atf_session_add_module(atf_session *s, uint32_t module_id, const char *path,
                                         uint64_t base_address, uint64_t size);
ATFDEF atf_result atf_session_add_symbol(atf_session *s, uint64_t function_id, const char *name);
/* A timing anchor: host_ns on the trace clock corresponds to `value` on clock `name`,
 * which advances `rate` units per second (e.g. 48000 for an audio timeline). */
ATFDEF atf_result atf_session_add_anchor(atf_session *s, const char *name, uint64_t host_ns,
                                         double value, double rate);
/* The pid_<pid> directory path. Valid until close. */
ATFDEF const char *atf_session_path(const atf_session *s);
/* The first error the session met (ATF_OK if none). */
ATFDEF const atf_error *atf_session_error(const atf_session *s);
/* Figures of slot `slot` (ATF_E_RANGE past the last slot). */
ATFDEF atf_result atf_session_thread_stats(atf_session *s, uint32_t slot, atf_thread_stats *out);
/* Number of thread slots handed out so far. */
ATFDEF uint32_t atf_session_thread_count(const atf_session *s);

/* ==== 11. readers ===================================================================== */
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
 *      total_length walk (detail); a torn last record is ignored, never read. */
typedef enum atf_recovery {
    ATF_RECOVERY_FINALIZED = 0,       /* footer found through the header: a clean close */
    ATF_RECOVERY_FOOTER_AT_END = 1,   /* placeholder header, agreeing footer at the end */
    ATF_RECOVERY_FROM_SIZE = 2,       /* no usable footer: counted from the file size/walk */
    ATF_RECOVERY_FOOTER_MISMATCH = 3  /* a footer exists but disagrees; counted as in 2 */
} atf_recovery;

typedef enum atf_crc_state {
    ATF_CRC_NO_FOOTER = 0,       /* nothing to check against */
    ATF_CRC_NOT_COMPUTED = 1,    /* footer checksum 0: the writer did not compute one */
    ATF_CRC_UNCHECKED = 2,       /* a checksum exists and was not verified yet */
    ATF_CRC_OK = 3,
    ATF_CRC_MISMATCH = 4
} atf_crc_state;

ATFDEF const char *atf_recovery_str(atf_recovery r);
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

typedef struct atf_index_reader {
    /* read-only after open */
    atf_index_header header;
    atf_index_footer footer;     /* valid when has_footer */
    int has_footer;              /* a footer with the right magic was found */
    int layout;                  /* ATF_LAYOUT_1 or ATF_LAYOUT_2 */
    uint64_t event_count;        /* events readable, per the recovery rule */
    uint64_t torn_bytes;         /* bytes after the last whole event ignored (0 if none) */
    atf_recovery recovery;
    atf_crc_state crc_state;
    uint32_t crc_found;          /* computed CRC, valid when crc_state is OK/MISMATCH */
    atf_error error;             /* first error */
    char path[512];              /* the path (or name) given at open */
    /* private */
    atf__file_image image;
    const uint8_t *events;       /* image.data + events_offset */
} atf_index_reader;

/* Opens and validates an index file. On failure the reader holds nothing (no close
 * needed) and r->error says what and where. Not thread-safe per reader; different readers
 * are independent. After a successful open, get/raw/verify are safe from many threads
 * (verify_crc writes the crc fields once). */
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
/* The 32 raw bytes of event `seq`, or NULL when out of range. */
ATFDEF const uint8_t *atf_index_reader_raw(const atf_index_reader *r, uint64_t seq);
/* Checks the footer CRC over the events section: ATF_OK when it matches or is 0 (not
 * computed) or there is no footer; ATF_E_CRC (expected/found in r->error) otherwise. */
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
    atf_recovery recovery;
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

/* A thread directory: index.atf, and detail.atf when present. */
typedef struct atf_thread_reader {
    atf_index_reader index;
    atf_detail_reader detail;
    int has_detail;              /* detail.atf exists and opened */
    atf_error error;             /* first error of either file or of a link */
} atf_thread_reader;

ATFDEF atf_result atf_thread_reader_open(atf_thread_reader *t, const char *dir,
                                         const atf_reader_options *opt);
ATFDEF void atf_thread_reader_close(atf_thread_reader *t);
/* Forward link: the detail record of index event `index_seq`. ATF_E_NO_DETAIL when the
 * event has none; ATF_E_CORRUPT when the link points outside the file or the record does
 * not point back. */
ATFDEF atf_result atf_thread_reader_detail_of(const atf_thread_reader *t, uint64_t index_seq,
                                              atf_detail_event *out);
/* Backward link: the index event of detail record `detail_seq`, checked both ways. */
ATFDEF atf_result atf_thread_reader_index_of(const atf_thread_reader *t, uint64_t detail_seq,
                                             atf_index_event *out);
/* Checks every link in both directions; the first broken one is kept in t->error. */
ATFDEF atf_result atf_thread_reader_verify_links(atf_thread_reader *t);

/* ==== 12. session reader + merge ===================================================== */
/* Opens a pid_* directory: manifest.json when present (threads, has_detail, clock, layout,
 * symbols, drop counts), joined with a scan of the thread_* directories, which alone
 * decides when the manifest is missing or unreadable, and adds what it lists too few of.
 * A manifest entry whose directory (or index.atf) is missing is kept with `missing` set
 * and skipped by the merge. The merge yields every selected event of every thread in
 * (timestamp, slot, seq) order, also when a thread's file is not time-ordered (files of
 * the original tracer are not): such a thread is detected at open and merged through a
 * stably sorted permutation built on first use. */
typedef enum atf_manifest_state {
    ATF_MANIFEST_OK = 0,          /* manifest read and complete */
    ATF_MANIFEST_MISSING = 1,     /* no manifest.json: threads found by scanning */
    ATF_MANIFEST_UNREADABLE = 2,  /* manifest.json cannot be read, is not valid JSON (strict,
                                     nesting <= 32, <= 64 MiB), or has no "threads" array */
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
    uint64_t events_dropped;     /* from the manifest (0 when unknown) */
    int out_of_order;            /* timestamps decrease somewhere in index.atf */
    uint64_t time_min_ns;        /* smallest and largest timestamp in index.atf */
    uint64_t time_max_ns;        /*   (0, 0 when it has no events) */
    atf_thread_reader reader;    /* open when open_result is ATF_OK */
    uint64_t *order;             /* private: sorted permutation for out-of-order files */
} atf_session_thread;

typedef struct atf_session_symbol { uint64_t function_id; char *name; } atf_session_symbol;

typedef struct atf_session_reader {
    char path[1024];
    atf_manifest_state manifest;
    uint32_t format_version;             /* from the manifest, 0 when unknown */
    uint32_t layout, clock_type;         /* from the manifest, else the first thread's file */
    uint64_t time_start_ns, time_end_ns; /* the manifest's when it is OK and has them (the
                                            original tracer wrote 0), else the files' */
    atf_session_thread *threads;         /* sorted by slot, one per slot */
    size_t thread_count;
    atf_session_symbol *symbols;         /* sorted by function_id */
    size_t symbol_count;
    atf_error error;                     /* first error; also set by an open that succeeds
                                            when a thread's files failed to open */
} atf_session_reader;

/* Opens the pid_* directory `dir`. Succeeds when at least one thread opens; a thread
 * whose files are present but invalid is skipped (its open_result says why, and the first
 * such error is kept in r->error). Fails (ATF_E_NOT_FOUND, or the thread's own code) when
 * no thread opens; then nothing needs closing. Not thread-safe per reader. */
ATFDEF atf_result atf_session_reader_open(atf_session_reader *r, const char *dir,
                                          const atf_reader_options *opt /* optional */);
ATFDEF void atf_session_reader_close(atf_session_reader *r);
/* The symbol name of function_id from the manifest, or NULL. O(log n). Thread-safe. */
ATFDEF const char *atf_session_reader_symbol(const atf_session_reader *r, uint64_t function_id);
/* The thread with slot `slot`, or NULL. O(log n). Thread-safe. */
ATFDEF atf_session_thread *atf_session_reader_thread(atf_session_reader *r, uint32_t slot);

/* First position p in [0, count] whose event has timestamp >= t, by binary search over a
 * time-ordered index file: O(log n) probes. `probes` (optional) receives their number. */
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
} atf_merge_item;

typedef struct atf__merge_cursor {
    const uint8_t *events;       /* the thread's index events */
    const uint64_t *order;       /* its sorted permutation; NULL when the file is ordered */
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

/* Prepares a merge over `r`, which must stay open and outlive it. Builds the sorted
 * permutations of the out-of-order threads it selects, once per reader (ATF_E_NOMEM if
 * that fails): not thread-safe against other calls on the same reader. Afterwards any
 * number of merges may run over one reader, each used by one thread at a time. */
ATFDEF atf_result atf_merge_init(atf_merge *m, atf_session_reader *r,
                                 const atf_merge_filter *f /* optional */);
/* Private: the slow path of atf_merge_next (a new run); 0 at the end. */
ATFDEF int atf__merge_refill(atf_merge *m);

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
#ifndef ATF__MERGE_AHEAD
#  define ATF__MERGE_AHEAD 4096
#endif
#ifndef ATF__MERGE_KEY_AHEAD
#  define ATF__MERGE_KEY_AHEAD 256
#endif

/* The next event in (timestamp, slot, seq) order: ATF_OK, or ATF_E_RANGE at the end (and
 * at every later call). Inline: inside a thread's run of consecutive events a call is one
 * comparison and the decode, and the compiler drops the stores of fields the caller never
 * reads; when the lead changes it costs O(log threads) in atf__merge_refill. */
ATF__INLINE atf_result atf_merge_next(atf_merge *m, atf_merge_item *out) {
    for (;;) {
        atf__merge_cursor *c = m->run;
        if (c && c->pos < m->run_end) {
            uint64_t seq = c->order ? c->order[c->pos] : c->pos;
            const uint8_t *rec = c->events + seq * ATF_INDEX_EVENT_SIZE;
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
        if (!atf__merge_refill(m)) return ATF_E_RANGE;
    }
}

/* Repositions every thread at its first event with timestamp >= max(t, filter from_ns)
 * by binary search: at most ceil(log2(n + 1)) probes per thread of n events, counted in
 * m->probes. The next atf_merge_next returns the first such event in merge order. */
ATFDEF atf_result atf_merge_seek(atf_merge *m, uint64_t t_ns);
ATFDEF void atf_merge_deinit(atf_merge *m);

#ifdef __cplusplus
}
#endif
#endif /* ATF_H_INCLUDED */

/* ===================================================================================== */
/*                                   IMPLEMENTATION                                       */
/* ===================================================================================== */
#if defined(ATF_IMPLEMENTATION) && !defined(ATF__IMPLEMENTATION_DONE)
#define ATF__IMPLEMENTATION_DONE

/* >>config: the C library pieces the implementation uses, and the allocator hooks. */
#include <string.h>
#include <stdio.h>
#include <errno.h>
#ifndef ATF_MALLOC
#  include <stdlib.h>
#  define ATF_MALLOC(size) malloc(size)
#  define ATF_REALLOC(ptr, size) realloc(ptr, size)
#  define ATF_FREE(ptr) free(ptr)
#endif
#ifndef ATF_ASSERT
#  include <assert.h>
#  define ATF_ASSERT(cond) assert(cond)
#endif

#if defined(ATF_STATIC) && (defined(ATF__CC_GCC) || defined(ATF__CC_CLANG))
#  define ATF__UNUSED __attribute__((unused))
#else
#  define ATF__UNUSED
#endif
/* Private functions: static, and quiet about being unused when everything is static. */
#define ATF__PRIVATE static ATF__UNUSED ATF_NO_INSTRUMENT

/* >>platform: one family of functions per OS service, with the same signature on every OS.
 * Files are mapped read-only (mmap / MapViewOfFile) or read whole into memory; paths are
 * UTF-8 everywhere (converted to UTF-16 on Windows). */
#if defined(ATF__OS_WINDOWS)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#else
#  include <fcntl.h>
#  include <sys/mman.h>
#  include <sys/stat.h>
#  include <sys/types.h>
#  include <unistd.h>
#endif

enum { ATF__IMAGE_NONE = 0, ATF__IMAGE_BORROWED, ATF__IMAGE_MAPPED, ATF__IMAGE_HEAP };

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

/* >>result: names and texts from the one X-macro list, and the error line formatter. */
ATFDEF const char *atf_result_str(atf_result r) {
    switch (r) {
#define ATF__RESULT_TEXT(name, value, text) case name: return text;
        ATF_RESULT_LIST(ATF__RESULT_TEXT)
#undef ATF__RESULT_TEXT
    default: return "unknown result code";
    }
}

ATFDEF const char *atf_result_name(atf_result r) {
    switch (r) {
#define ATF__RESULT_NAME(name, value, text) case name: return #name;
        ATF_RESULT_LIST(ATF__RESULT_NAME)
#undef ATF__RESULT_NAME
    default: return "ATF_E_?";
    }
}

ATFDEF char *atf_error_format(const atf_error *e, char *buf, size_t cap) {
    char values[96] = "";
    char sys[64] = "";
    if (cap == 0) return buf;
    if (e->has_values)
        snprintf(values, sizeof values, " (expected %llu [0x%llx], found %llu [0x%llx])",
                 (unsigned long long)e->expected, (unsigned long long)e->expected,
                 (unsigned long long)e->found, (unsigned long long)e->found);
    if (e->sys_errno)
        snprintf(sys, sizeof sys, " (errno %d: %s)", e->sys_errno, strerror(e->sys_errno));
    snprintf(buf, cap, "%s: offset %llu: %s%s%s: %s", e->path[0] ? e->path : "-",
             (unsigned long long)e->offset, e->what ? e->what : "-", values, sys,
             atf_result_str(e->code));
    return buf;
}

/* >>format: encode/decode of every record of both layouts. Offsets are written out as
 * literals next to the field they address so that this section reads like the tables of
 * docs/FORMAT.md. Layout 1 (version 1) is the deployed struct layout of TRACE_SCHEMA.md;
 * layout 2 (version 2) is atf-format-spec.txt. */
ATF__PRIVATE void atf__store_magic(uint8_t *p, const char *magic) { memcpy(p, magic, 4); }

ATF__PRIVATE atf_result atf__check_identity(const uint8_t *in, const char *magic) {
    if (memcmp(in, magic, 4) != 0) return ATF_E_MAGIC;
    if (in[4] != ATF_ENDIAN_LITTLE) return ATF_E_ENDIAN;
    if (in[5] != ATF_LAYOUT_1 && in[5] != ATF_LAYOUT_2) return ATF_E_VERSION;
    return ATF_OK;
}

ATFDEF void atf_index_header_encode(const atf_index_header *h, uint8_t out[64]) {
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

ATFDEF atf_result atf_index_header_decode(const uint8_t in[64], atf_index_header *h) {
    atf_result rc = atf__check_identity(in, ATF_INDEX_MAGIC);
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

ATFDEF void atf_index_event_encode(int layout, const atf_index_event *e, uint8_t out[32]) {
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

ATFDEF void atf_index_event_decode(int layout, const uint8_t in[32], atf_index_event *e) {
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

ATFDEF void atf_index_footer_encode(const atf_index_footer *f, uint8_t out[64]) {
    memset(out, 0, 64);
    atf__store_magic(out, ATF_INDEX_FOOTER_MAGIC);
    atf__store_le32(out + 4, f->checksum);
    atf__store_le64(out + 8, f->event_count);
    atf__store_le64(out + 16, f->time_start_ns);
    atf__store_le64(out + 24, f->time_end_ns);
    atf__store_le64(out + 32, f->bytes_written);
}

ATFDEF atf_result atf_index_footer_decode(const uint8_t in[64], atf_index_footer *f) {
    memset(f, 0, sizeof *f);
    if (memcmp(in, ATF_INDEX_FOOTER_MAGIC, 4) != 0) return ATF_E_MAGIC;
    f->checksum = atf__load_le32(in + 4);
    f->event_count = atf__load_le64(in + 8);
    f->time_start_ns = atf__load_le64(in + 16);
    f->time_end_ns = atf__load_le64(in + 24);
    f->bytes_written = atf__load_le64(in + 32);
    return ATF_OK;
}

ATFDEF void atf_detail_header_encode(const atf_detail_header *h, uint8_t out[64]) {
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

ATFDEF atf_result atf_detail_header_decode(const uint8_t in[64], atf_detail_header *h) {
    atf_result rc = atf__check_identity(in, ATF_DETAIL_MAGIC);
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

ATFDEF void atf_detail_event_header_encode(int layout, const atf_detail_event_header *e,
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

ATFDEF void atf_detail_event_header_decode(int layout, const uint8_t in[24],
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

ATFDEF void atf_detail_footer_encode(const atf_detail_footer *f, uint8_t out[64]) {
    memset(out, 0, 64);
    atf__store_magic(out, ATF_DETAIL_FOOTER_MAGIC);
    atf__store_le32(out + 4, f->checksum);
    atf__store_le64(out + 8, f->event_count);
    atf__store_le64(out + 16, f->bytes_length);
    atf__store_le64(out + 24, f->time_start_ns);
    atf__store_le64(out + 32, f->time_end_ns);
}

ATFDEF atf_result atf_detail_footer_decode(const uint8_t in[64], atf_detail_footer *f) {
    memset(f, 0, sizeof *f);
    if (memcmp(in, ATF_DETAIL_FOOTER_MAGIC, 4) != 0) return ATF_E_MAGIC;
    f->checksum = atf__load_le32(in + 4);
    f->event_count = atf__load_le64(in + 8);
    f->bytes_length = atf__load_le64(in + 16);
    f->time_start_ns = atf__load_le64(in + 24);
    f->time_end_ns = atf__load_le64(in + 32);
    return ATF_OK;
}

ATFDEF size_t atf_detail_payload_encode(const atf_detail_payload *p, uint8_t *out, size_t cap) {
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

ATFDEF atf_result atf_detail_payload_decode(const uint8_t *in, size_t len, atf_detail_payload *p) {
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

ATFDEF const char *atf_event_kind_str(uint32_t kind) {
    switch (kind) {
    case ATF_EVENT_CALL: return "call";
    case ATF_EVENT_RETURN: return "return";
    case ATF_EVENT_EXCEPTION: return "exception";
    default: return "unknown";
    }
}

ATFDEF const char *atf_arch_str(uint32_t arch) {
    switch (arch) {
    case ATF_ARCH_X86_64: return "x86_64";
    case ATF_ARCH_ARM64: return "arm64";
    default: return "unknown";
    }
}

ATFDEF const char *atf_os_str(uint32_t os) {
    switch (os) {
    case ATF_OS_IOS: return "ios";
    case ATF_OS_ANDROID: return "android";
    case ATF_OS_MACOS: return "macos";
    case ATF_OS_LINUX: return "linux";
    case ATF_OS_WINDOWS: return "windows";
    default: return "unknown";
    }
}

ATFDEF const char *atf_clock_str(uint32_t clock_type) {
    switch (clock_type) {
    case ATF_CLOCK_MACH_CONTINUOUS: return "mach_continuous";
    case ATF_CLOCK_QPC: return "qpc";
    case ATF_CLOCK_BOOTTIME: return "boottime";
    default: return "unknown";
    }
}

/* >>crc32c: CRC32-C with one dispatch chosen once at run time (placeholder: software only;
 * the hardware paths land in this section). */
ATF__PRIVATE uint32_t atf__crc32c__bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    while (n--) {
        int k;
        crc ^= *p++;
        for (k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}
ATFDEF uint32_t atf_crc32c_update(uint32_t crc, const void *buf, size_t len) {
    return len ? atf__crc32c__bitwise(crc, (const uint8_t *)buf, len) : crc;
}
ATFDEF uint32_t atf_crc32c(const void *buf, size_t len) { return atf_crc32c_update(0, buf, len); }
/* >>crc32c-end */


/* >>platform-write: the services the recording side needs, one family per OS: file
 * creation and positioned writes, directories, atomic rename, ids, threads, locks. */
#if defined(ATF__OS_WINDOWS)
typedef HANDLE atf__fd;
#  define ATF__FD_NONE INVALID_HANDLE_VALUE
#else
#  include <time.h>
#  if !defined(ATF_NO_THREADS)
#    include <pthread.h>
#  endif
#  if defined(ATF__OS_LINUX)
#    include <sys/syscall.h>
#  endif
#  if defined(ATF__OS_APPLE)
#    include <mach/mach_time.h>
#  endif
typedef int atf__fd;
#  define ATF__FD_NONE (-1)
#endif

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
ATF__PRIVATE int atf__fd_pwrite(atf__fd fd, const void *buf, size_t n, uint64_t off) {
    const uint8_t *p = (const uint8_t *)buf;
    while (n) {
        OVERLAPPED ov;
        DWORD chunk = n > 0x40000000u ? 0x40000000u : (DWORD)n, done = 0;
        memset(&ov, 0, sizeof ov);
        ov.Offset = (DWORD)off;
        ov.OffsetHigh = (DWORD)(off >> 32);
        if (!WriteFile(fd, p, chunk, &done, &ov) || done == 0) return -1;
        p += done;
        n -= done;
        off += done;
    }
    return 0;
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
ATF__PRIVATE int atf__mkdir(const char *path) {
    wchar_t *w = atf__utf8_to_wide(path);
    int ok;
    if (!w) return -1;
    ok = CreateDirectoryW(w, NULL) || GetLastError() == ERROR_ALREADY_EXISTS;
    ATF_FREE(w);
    return ok ? 0 : -1;
}
ATF__PRIVATE int atf__rename_replace(const char *from, const char *to) {
    wchar_t *a = atf__utf8_to_wide(from), *b = atf__utf8_to_wide(to);
    int ok = a && b && MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    ATF_FREE(a);
    ATF_FREE(b);
    return ok ? 0 : -1;
}
ATF__PRIVATE uint32_t atf__os_thread_id(void) { return (uint32_t)GetCurrentThreadId(); }
ATF__PRIVATE uint32_t atf__os_pid(void) { return (uint32_t)GetCurrentProcessId(); }
ATF__PRIVATE void atf__sleep_us(uint32_t us) { Sleep(us < 1000 ? 1 : us / 1000); }
ATF__PRIVATE void atf__local_time_name(char *buf, size_t cap) {
    SYSTEMTIME t;
    GetLocalTime(&t);
    snprintf(buf, cap, "session_%04u%02u%02u_%02u%02u%02u", t.wYear, t.wMonth, t.wDay, t.wHour,
             t.wMinute, t.wSecond);
}
#else
ATF__PRIVATE int atf__last_os_error(void) { return errno; }

ATF__PRIVATE atf__fd atf__fd_create(const char *path) {
    int fd;
    do fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); while (fd < 0 && errno == EINTR);
    return fd;
}
ATF__PRIVATE int atf__fd_pwrite(atf__fd fd, const void *buf, size_t n, uint64_t off) {
    const uint8_t *p = (const uint8_t *)buf;
    while (n) {
        ssize_t done = pwrite(fd, p, n, (off_t)off);
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
ATF__PRIVATE int atf__fd_truncate(atf__fd fd, uint64_t size) { return ftruncate(fd, (off_t)size); }
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
ATF__PRIVATE int atf__mkdir(const char *path) {
    return (mkdir(path, 0755) == 0 || errno == EEXIST) ? 0 : -1;
}
ATF__PRIVATE int atf__rename_replace(const char *from, const char *to) { return rename(from, to); }
ATF__PRIVATE uint32_t atf__os_thread_id(void) {
#  if defined(ATF__OS_LINUX)
    return (uint32_t)syscall(SYS_gettid);
#  elif defined(ATF__OS_APPLE) && !defined(ATF_NO_THREADS)
    uint64_t id = 0;
    pthread_threadid_np(NULL, &id);
    return (uint32_t)id;
#  else
    return (uint32_t)getpid();
#  endif
}
ATF__PRIVATE uint32_t atf__os_pid(void) { return (uint32_t)getpid(); }
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

/* Locks and threads; with ATF_NO_THREADS the lock is a no-op and there is no drain thread. */
#if defined(ATF_NO_THREADS)
typedef int atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { *m = 0; }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { (void)m; }
#elif defined(ATF__OS_WINDOWS)
typedef CRITICAL_SECTION atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { InitializeCriticalSection(m); }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { DeleteCriticalSection(m); }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { EnterCriticalSection(m); }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { LeaveCriticalSection(m); }
typedef HANDLE atf__thread;
typedef struct atf__thread_start_ctx { void (*fn)(void *); void *arg; } atf__thread_start_ctx;
ATF__PRIVATE DWORD WINAPI atf__thread_trampoline(LPVOID p) {
    atf__thread_start_ctx *c = (atf__thread_start_ctx *)p;
    c->fn(c->arg);
    return 0;
}
ATF__PRIVATE int atf__thread_start(atf__thread *t, atf__thread_start_ctx *ctx) {
    *t = CreateThread(NULL, 0, atf__thread_trampoline, ctx, 0, NULL);
    return *t ? 0 : -1;
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

/* 64-byte aligned blocks for rings (cache-line separation of head and tail). */
ATF__PRIVATE void *atf__alloc_aligned(size_t size, void **raw) {
    uint8_t *p = (uint8_t *)ATF_MALLOC(size + 64);
    *raw = p;
    if (!p) return NULL;
    return p + (64 - ((uintptr_t)p & 63u));
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

/* >>clock: the platform's continuous clock in nanoseconds, and wall time for anchors.
 * Conversions from tick counters split seconds and remainder so that no multiplication
 * overflows however long the machine has been up. */
#if defined(ATF__OS_WINDOWS)
ATFDEF uint64_t atf_now_ns(void) {
    static LONGLONG freq; /* benign race: every thread stores the same value */
    LARGE_INTEGER now;
    LONGLONG f = freq;
    if (!f) {
        LARGE_INTEGER q;
        QueryPerformanceFrequency(&q);
        freq = f = q.QuadPart;
    }
    QueryPerformanceCounter(&now);
    return (uint64_t)(now.QuadPart / f) * 1000000000u +
           (uint64_t)(now.QuadPart % f) * 1000000000u / (uint64_t)f;
}
ATFDEF uint32_t atf_clock_type(void) { return ATF_CLOCK_QPC; }
ATFDEF uint64_t atf_wall_ns(void) {
    FILETIME ft;
    uint64_t t;
    GetSystemTimePreciseAsFileTime(&ft);
    t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime; /* 100 ns since 1601 */
    return (t - 116444736000000000ull) * 100u;
}
#elif defined(ATF__OS_APPLE)
ATFDEF uint64_t atf_now_ns(void) {
    static mach_timebase_info_data_t tb; /* benign race: every thread stores the same value */
    uint64_t ticks = mach_continuous_time();
    if (!tb.denom) mach_timebase_info(&tb);
    if (tb.numer == tb.denom) return ticks;
    return ticks / tb.denom * tb.numer + ticks % tb.denom * tb.numer / tb.denom;
}
ATFDEF uint32_t atf_clock_type(void) { return ATF_CLOCK_MACH_CONTINUOUS; }
ATFDEF uint64_t atf_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#else
ATFDEF uint64_t atf_now_ns(void) {
    struct timespec ts;
#  if defined(CLOCK_BOOTTIME)
    clock_gettime(CLOCK_BOOTTIME, &ts);
#  else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#  endif
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
ATFDEF uint32_t atf_clock_type(void) {
#  if defined(CLOCK_BOOTTIME)
    return ATF_CLOCK_BOOTTIME;
#  else
    return ATF_CLOCK_UNKNOWN;
#  endif
}
ATFDEF uint64_t atf_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* >>ring: formatting and attaching SPSC rings in caller memory. The push side lives
 * inline in the declarations (atf_writer_push); the pop side is the drain's. A ring's
 * header is validated on attach so a foreign or damaged mapping is refused, not used. */
#define ATF__RING_DATA_OFFSET ((uint64_t)sizeof(atf_ring_header))
#define ATF__DETAIL_ENTRY_HEADER 8u
#define ATF__DETAIL_ENTRY_PAD 1u   /* entry flag: filler up to the end of the ring */

ATF__PRIVATE uint64_t atf__pow2_at_least(uint64_t v, uint64_t floor) {
    uint64_t p = floor;
    while (p < v && p < (1ull << 40)) p <<= 1;
    return p;
}

ATF__PRIVATE uint64_t atf__ring_capacity(uint32_t kind, uint64_t capacity) {
    return kind == ATF_RING_INDEX ? atf__pow2_at_least(capacity, 64) : atf__pow2_at_least(capacity, 4096);
}

ATFDEF size_t atf_ring_memory_size(uint32_t kind, uint64_t capacity) {
    uint64_t cap = atf__ring_capacity(kind, capacity);
    return (size_t)(ATF__RING_DATA_OFFSET + (kind == ATF_RING_INDEX ? cap * ATF_INDEX_EVENT_SIZE : cap));
}

ATFDEF atf_result atf_ring_init(void *mem, size_t size, uint32_t kind, uint64_t capacity,
                                uint32_t layout, uint32_t thread_id) {
    atf_ring_header *h = (atf_ring_header *)mem;
    if (!mem || (kind != ATF_RING_INDEX && kind != ATF_RING_DETAIL) || ((uintptr_t)mem & 63u))
        return ATF_E_ARG;
    if (size < atf_ring_memory_size(kind, capacity)) return ATF_E_ARG;
    memset(h, 0, sizeof *h);
    h->kind = kind;
    h->capacity = atf__ring_capacity(kind, capacity);
    h->data_offset = ATF__RING_DATA_OFFSET;
    h->layout = layout ? layout : ATF_LAYOUT_1;
    h->thread_id = thread_id;
    atf__store_release_u64(&h->head, 0);
    h->magic = ATF_RING_MAGIC;
    return ATF_OK;
}

ATFDEF atf_result atf_ring_attach(atf_ring *r, void *mem, size_t size, int as_producer) {
    atf_ring_header *h = (atf_ring_header *)mem;
    uint64_t unit;
    memset(r, 0, sizeof *r);
    if (!mem || size < sizeof *h) return ATF_E_ARG;
    if (h->magic != ATF_RING_MAGIC) return ATF_E_MAGIC;
    unit = h->kind == ATF_RING_INDEX ? ATF_INDEX_EVENT_SIZE : 1;
    if ((h->kind != ATF_RING_INDEX && h->kind != ATF_RING_DETAIL) || h->capacity == 0 ||
        (h->capacity & (h->capacity - 1)) || h->data_offset < sizeof *h ||
        h->capacity > (size - h->data_offset) / unit ||
        (h->layout != ATF_LAYOUT_1 && h->layout != ATF_LAYOUT_2))
        return ATF_E_CORRUPT;
    r->shared = h;
    r->data = (uint8_t *)mem + h->data_offset;
    r->mask = h->capacity - 1;
    if (as_producer) {
        r->pos = atf__load_acquire_u64(&h->head);
        r->other = atf__load_acquire_u64(&h->tail);
    } else {
        r->pos = atf__load_acquire_u64(&h->tail);
        r->other = atf__load_acquire_u64(&h->head);
    }
    return ATF_OK;
}

/* >>writer: the producer calls that are not inline (detail payloads, binding to caller
 * memory). The inline index push is in the declarations; everything here is wait-free
 * too: bounded loops, no locks, no allocation. */
ATFDEF atf_result atf_writer_init(atf_writer *w, void *index_mem, size_t index_size,
                                  void *detail_mem, size_t detail_size, uint32_t detail_mode) {
    atf_result rc;
    memset(w, 0, sizeof *w);
    rc = atf_ring_attach(&w->index, index_mem, index_size, 1);
    if (rc != ATF_OK) return rc;
    if (w->index.shared->kind != ATF_RING_INDEX) return ATF_E_ARG;
    if (detail_mem) {
        rc = atf_ring_attach(&w->detail, detail_mem, detail_size, 1);
        if (rc != ATF_OK) return rc;
        if (w->detail.shared->kind != ATF_RING_DETAIL) return ATF_E_ARG;
    }
    w->layout = w->index.shared->layout;
    w->thread_id = w->index.shared->thread_id;
    w->detail_mode = detail_mem ? detail_mode : (uint32_t)ATF_DETAIL_OFF;
    return ATF_OK;
}

ATFDEF void atf_writer_close(atf_writer *w) {
    if (w->detail.shared) atf__store_release_u64(&w->detail.shared->closed, 1);
    atf__store_release_u64(&w->index.shared->closed, 1);
}

/* Room for `need` more units at the producer's position, rereading the consumer's
 * position only when the cached one says there is none. */
ATF__PRIVATE int atf__ring_has_room(atf_ring *r, uint64_t need) {
    uint64_t cap = r->mask + 1;
    if (cap - (r->pos - r->other) >= need) return 1;
    r->other = atf__load_acquire_u64(&r->shared->tail);
    return cap - (r->pos - r->other) >= need;
}

/* Writes one detail entry (and a filler when it would straddle the end of the ring);
 * returns 0 when there is no room. The record's index_seq is the index event about to be
 * pushed. */
ATF__PRIVATE int atf__writer_put_detail(atf_writer *w, uint64_t ts, uint16_t type,
                                        const void *payload, size_t len) {
    atf_ring *r = &w->detail;
    uint64_t cap = r->mask + 1, record = ATF_DETAIL_EVENT_HEADER_SIZE + (uint64_t)len;
    uint64_t entry = (ATF__DETAIL_ENTRY_HEADER + record + 7u) & ~(uint64_t)7u;
    uint64_t to_end = cap - (r->pos & r->mask);
    uint64_t need = entry <= to_end ? entry : to_end + entry;
    atf_detail_event_header h;
    uint8_t *at;
    if (record > UINT32_MAX || entry > cap / 2 || !atf__ring_has_room(r, need)) return 0;
    if (entry > to_end) {
        at = r->data + (r->pos & r->mask);
        atf__store_le32(at, (uint32_t)to_end);
        atf__store_le32(at + 4, ATF__DETAIL_ENTRY_PAD);
        r->pos += to_end;
    }
    at = r->data + (r->pos & r->mask);
    atf__store_le32(at, (uint32_t)entry);
    atf__store_le32(at + 4, 0);
    h.total_length = (uint32_t)record;
    h.type = type;
    h.flags = 0;
    h.index_seq = w->index.pos;
    h.thread_id = w->thread_id;
    h.timestamp_ns = ts;
    atf_detail_event_header_encode((int)w->layout, &h, at + ATF__DETAIL_ENTRY_HEADER);
    if (len) memcpy(at + ATF__DETAIL_ENTRY_HEADER + ATF_DETAIL_EVENT_HEADER_SIZE, payload, len);
    r->pos += entry;
    atf__store_release_u64(&r->shared->head, r->pos);
    return 1;
}

ATFDEF atf_result atf_writer_event_detail(atf_writer *w, uint32_t kind, uint64_t function_id,
                                          uint64_t ts, uint16_t type, const void *payload,
                                          size_t len) {
    uint64_t detail_seq = ATF_NO_DETAIL;
    uint32_t depth;
    if (!atf__ring_has_room(&w->index, 1)) {
        /* dropped as a whole: a detail record must never name a missing index event */
        w->dropped++;
        atf__store_release_u64(&w->index.shared->dropped, w->dropped);
        return ATF_E_FULL;
    }
    if (kind == ATF_EVENT_CALL) depth = w->depth++;
    else depth = w->depth ? --w->depth : 0;
    if (w->detail_mode != ATF_DETAIL_OFF && w->detail.data) {
        if (atf__writer_put_detail(w, ts, type, payload, len)) {
            if (w->detail_mode == ATF_DETAIL_ALWAYS) detail_seq = w->detail_count;
            w->detail_count++;
        } else {
            w->detail_dropped++;
            atf__store_release_u64(&w->detail.shared->dropped, w->detail_dropped);
        }
    }
    return atf__writer_push_linked(w, kind, function_id, ts, depth, detail_seq);
}

/* >>file-writer: one output file: placeholder header at open, events appended, footer
 * and header rewrite at finalize. The CRC32-C is kept incrementally over what is appended;
 * an in-place patch (windowed detail links) marks it stale and finalize recomputes it
 * from the file. A failed write stops the file: it is cut back to the last whole batch so
 * that what is on disk stays readable, and every later append is counted as lost. */
typedef struct atf__file_writer {
    atf__fd fd;
    int is_open, failed, crc_stale, is_detail;
    uint32_t layout, thread_id;
    uint32_t crc;
    uint64_t bytes;              /* events section bytes on disk */
    uint64_t count;              /* records on disk */
    uint64_t time_start, time_end;
    uint64_t seq_first, seq_last; /* detail: index_seq range covered */
    uint64_t synced_bytes;
    uint64_t lost;               /* records that could not be written */
    char path[1024];
} atf__file_writer;

ATF__PRIVATE atf_result atf__file_writer_fail(atf__file_writer *f, atf_error *err, const char *what) {
    int code = atf__last_os_error();
    f->failed = 1;
    atf__error_set_errno(err, ATF_E_IO, f->path, what, code);
    err->offset = ATF_HEADER_SIZE + f->bytes;
    /* a partial write may have left part of a record: cut back to the last whole one */
    atf__fd_truncate(f->fd, ATF_HEADER_SIZE + f->bytes);
    return ATF_E_IO;
}

ATF__PRIVATE void atf__file_writer_header(const atf__file_writer *f, uint8_t out[64], int final,
                                          int has_detail) {
    if (f->is_detail) {
        atf_detail_header h;
        memset(&h, 0, sizeof h);
        h.endian = ATF_ENDIAN_LITTLE;
        h.version = (uint8_t)f->layout;
        h.arch = ATF__ARCH_CODE;
        h.os = ATF__OS_CODE;
        h.thread_id = f->thread_id;
        h.events_offset = ATF_HEADER_SIZE;
        if (final) {
            h.event_count = f->count;
            h.bytes_length = f->bytes;
            h.index_seq_start = f->seq_first;
            h.index_seq_end = f->seq_last;
        }
        atf_detail_header_encode(&h, out);
    } else {
        atf_index_header h;
        memset(&h, 0, sizeof h);
        h.endian = ATF_ENDIAN_LITTLE;
        h.version = (uint8_t)f->layout;
        h.arch = ATF__ARCH_CODE;
        h.os = ATF__OS_CODE;
        h.flags = has_detail ? ATF_INDEX_FLAG_HAS_DETAIL_FILE : 0;
        h.thread_id = f->thread_id;
        h.clock_type = (uint8_t)atf_clock_type();
        h.event_size = ATF_INDEX_EVENT_SIZE;
        h.events_offset = ATF_HEADER_SIZE;
        if (final) {
            h.event_count = f->count;
            h.footer_offset = ATF_HEADER_SIZE + f->bytes;
            h.time_start_ns = f->time_start;
            h.time_end_ns = f->time_end;
        }
        atf_index_header_encode(&h, out);
    }
}

ATF__PRIVATE atf_result atf__file_writer_open(atf__file_writer *f, const char *path, int is_detail,
                                              uint32_t layout, uint32_t thread_id, atf_error *err) {
    uint8_t header[ATF_HEADER_SIZE];
    memset(f, 0, sizeof *f);
    atf__copy_str(f->path, sizeof f->path, path);
    f->is_detail = is_detail;
    f->layout = layout;
    f->thread_id = thread_id;
    f->fd = atf__fd_create(path);
    if (f->fd == ATF__FD_NONE) {
        f->failed = 1;
        return atf__error_set_errno(err, ATF_E_IO, path, "create", atf__last_os_error());
    }
    f->is_open = 1;
    atf__file_writer_header(f, header, 0, 0);
    if (atf__fd_pwrite(f->fd, header, sizeof header, 0) != 0)
        return atf__file_writer_fail(f, err, "write placeholder header");
    return ATF_OK;
}

/* Appends `count` whole records (n bytes) whose timestamps span [t_first, t_last]. */
ATF__PRIVATE atf_result atf__file_writer_append(atf__file_writer *f, const uint8_t *data, size_t n,
                                                uint64_t count, uint64_t t_first, uint64_t t_last,
                                                uint64_t fsync_every, atf_error *err) {
    if (!f->is_open || f->failed) {
        f->lost += count;
        return ATF_E_IO;
    }
    if (atf__fd_pwrite(f->fd, data, n, ATF_HEADER_SIZE + f->bytes) != 0) {
        f->lost += count;
        return atf__file_writer_fail(f, err, "write events");
    }
    f->crc = atf_crc32c_update(f->crc, data, n);
    if (f->count == 0) f->time_start = t_first;
    f->time_end = t_last;
    f->bytes += n;
    f->count += count;
    if (fsync_every && f->bytes - f->synced_bytes >= fsync_every) {
        atf__fd_sync(f->fd);
        f->synced_bytes = f->bytes;
    }
    return ATF_OK;
}

/* Overwrites bytes inside the events section already on disk. */
ATF__PRIVATE atf_result atf__file_writer_patch(atf__file_writer *f, uint64_t offset,
                                               const uint8_t *data, size_t n, atf_error *err) {
    if (!f->is_open || f->failed) return ATF_E_IO;
    if (atf__fd_pwrite(f->fd, data, n, ATF_HEADER_SIZE + offset) != 0)
        return atf__file_writer_fail(f, err, "patch index record");
    f->crc_stale = 1;
    return ATF_OK;
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

/* Footer, then the real header, then (optionally) a sync; closes the file. A failed file
 * is left as a crash would leave it (readers recover it by size or walk). */
ATF__PRIVATE atf_result atf__file_writer_finalize(atf__file_writer *f, int has_detail, int sync,
                                                  atf_error *err) {
    uint8_t footer[ATF_FOOTER_SIZE], header[ATF_HEADER_SIZE];
    atf_result rc = ATF_OK;
    if (!f->is_open) return ATF_OK;
    if (!f->failed) {
        uint32_t crc = f->crc;
        int ok = 1;
        if (f->crc_stale) crc = atf__file_writer_crc_from_disk(f, &ok);
        if (!ok) {
            rc = atf__file_writer_fail(f, err, "read back for CRC");
        } else {
            if (f->is_detail) {
                atf_detail_footer d;
                memset(&d, 0, sizeof d);
                d.checksum = crc;
                d.event_count = f->count;
                d.bytes_length = f->bytes;
                d.time_start_ns = f->time_start;
                d.time_end_ns = f->time_end;
                atf_detail_footer_encode(&d, footer);
            } else {
                atf_index_footer x;
                memset(&x, 0, sizeof x);
                x.checksum = crc;
                x.event_count = f->count;
                x.time_start_ns = f->time_start;
                x.time_end_ns = f->time_end;
                x.bytes_written = f->bytes;
                atf_index_footer_encode(&x, footer);
            }
            atf__file_writer_header(f, header, 1, has_detail);
            /* footer first: a crash between the two leaves a placeholder header and an
             * agreeing footer at the end, which readers accept */
            if (atf__fd_pwrite(f->fd, footer, sizeof footer, ATF_HEADER_SIZE + f->bytes) != 0)
                rc = atf__file_writer_fail(f, err, "write footer");
            else if (atf__fd_pwrite(f->fd, header, sizeof header, 0) != 0)
                rc = atf__file_writer_fail(f, err, "rewrite header");
        }
    }
    if (sync && atf__fd_sync(f->fd) != 0 && rc == ATF_OK)
        rc = atf__error_set_errno(err, ATF_E_IO, f->path, "fsync", atf__last_os_error());
    atf__fd_close(f->fd);
    f->is_open = 0;
    return rc;
}

/* >>session: thread slots, the drain, windowed detail and the manifest. Attaching takes
 * the session lock (never on the hot path); the drain walks the published slots, moves
 * each ring's events into its files in large batches, and finalizes a slot once its
 * producer has closed and its rings are empty. */
typedef struct atf__window { uint64_t lo, hi; } atf__window;
typedef struct atf__patch { uint64_t index_seq, detail_seq; } atf__patch;

typedef struct atf__slot {
    atf_writer writer;           /* the producer's view (used by the traced thread only) */
    atf_ring index_c, detail_c;  /* the drain's views */
    void *index_raw, *detail_raw; /* owned ring memory, NULL when the caller owns it */
    atf__file_writer index_file, detail_file;
    atf__patch *patches;         /* windowed: links waiting for their index event */
    size_t patch_head, patch_len, patch_cap;
    uint64_t detail_released;    /* windowed: detail records released unpersisted */
    uint64_t ring_dropped;       /* copies of the rings' drop counters, taken by the drain */
    uint64_t ring_detail_dropped;
    uint32_t thread_id, slot;
    int finalized, has_detail_ring;
    atf_error error;             /* first error of this slot's files */
    char name[64];
} atf__slot;

typedef struct atf__symbol { uint64_t function_id; char *name; } atf__symbol;
typedef struct atf__module { uint32_t module_id; char *path; uint64_t base, size; } atf__module;
typedef struct atf__anchor { char name[64]; uint64_t host_ns; double value, rate; } atf__anchor;

struct atf_session {
    atf_session_config cfg;
    uint64_t id;                 /* distinguishes sessions in thread-local caches */
    char dir[1024];              /* <root>/<session>/pid_<pid> */
    atf__mutex lock;             /* slots, metadata, triggers, error */
    atf__mutex drain_lock;       /* one drain pass at a time */
    atf__slot **slots;
    uint64_t slot_count;         /* published with a release store */
    atf__module *modules;
    size_t module_count, module_cap;
    atf__symbol *symbols;
    size_t symbol_count, symbol_cap;
    atf__anchor *anchors;
    size_t anchor_count, anchor_cap;
    atf__window windows[64];     /* windowed detail triggers, oldest first */
    size_t window_count;
    uint64_t attach_failures;
    int manifest_dirty;
    atf_error error;
#if !defined(ATF_NO_THREADS)
    atf__thread drain_thread;
    atf__thread_start_ctx drain_ctx;
    int drain_running;
#endif
    uint64_t stop;               /* set once: the drain thread exits */
    uint8_t *stage;              /* drain staging buffer for detail records */
    size_t stage_cap;
};

ATF__PRIVATE void atf__session_fail(atf_session *s, const atf_error *e) {
    atf__mutex_lock(&s->lock);
    atf__error_adopt(&s->error, e);
    atf__mutex_unlock(&s->lock);
}

/* ---- windowed detail -------------------------------------------------------------- */

ATF__PRIVATE int atf__in_windows(const atf__window *w, size_t n, uint64_t ts) {
    size_t i;
    for (i = 0; i < n; i++)
        if (ts >= w[i].lo && ts <= w[i].hi) return 1;
    return 0;
}

ATF__PRIVATE int atf__slot_queue_patch(atf__slot *sl, uint64_t index_seq, uint64_t detail_seq) {
    if (sl->patch_head + sl->patch_len == sl->patch_cap) {
        if (sl->patch_head) { /* compact before growing */
            memmove(sl->patches, sl->patches + sl->patch_head, sl->patch_len * sizeof *sl->patches);
            sl->patch_head = 0;
        }
        if (sl->patch_len == sl->patch_cap) {
            size_t cap = sl->patch_cap ? sl->patch_cap * 2 : 256;
            atf__patch *p = (atf__patch *)ATF_REALLOC(sl->patches, cap * sizeof *p);
            if (!p) return 0;
            sl->patches = p;
            sl->patch_cap = cap;
        }
    }
    sl->patches[sl->patch_head + sl->patch_len].index_seq = index_seq;
    sl->patches[sl->patch_head + sl->patch_len].detail_seq = detail_seq;
    sl->patch_len++;
    return 1;
}

/* Writes a detail_seq into a 32-byte index record in its layout. */
ATF__PRIVATE void atf__link_into_record(uint8_t *rec, uint32_t layout, uint64_t detail_seq) {
    if (layout == ATF_LAYOUT_2) atf__store_le64(rec + 16, detail_seq);
    else atf__store_le32(rec + 28, (uint32_t)detail_seq);
}

/* Applies queued links to index events already on disk (in place) or in [tail, head)
 * of the ring (in the slot, before the drain writes it). Later ones wait. */
ATF__PRIVATE void atf__slot_apply_patches(atf__slot *sl, uint64_t head) {
    uint32_t layout = sl->index_file.layout;
    size_t width = layout == ATF_LAYOUT_2 ? 8 : 4, field = layout == ATF_LAYOUT_2 ? 16 : 28;
    while (sl->patch_len) {
        atf__patch *p = &sl->patches[sl->patch_head];
        if (p->index_seq < sl->index_file.count) {
            uint8_t rec[32];
            atf__link_into_record(rec, layout, p->detail_seq);
            atf__file_writer_patch(&sl->index_file, p->index_seq * ATF_INDEX_EVENT_SIZE + field,
                                   rec + field, width, &sl->error);
        } else if (p->index_seq >= sl->index_file.count + sl->index_file.lost) {
            if (p->index_seq >= head) return; /* not pushed yet */
            atf__link_into_record(sl->index_c.data + ((p->index_seq & sl->index_c.mask) << 5),
                                  layout, p->detail_seq);
        } /* else: the index event was lost to a write error; nothing to link */
        sl->patch_head++;
        sl->patch_len--;
    }
    sl->patch_head = 0;
}

/* ---- draining a slot -------------------------------------------------------------- */

/* Opens thread_<slot>/<leaf> for a slot's file. */
ATF__PRIVATE atf_result atf__slot_open_file(atf_session *s, atf__slot *sl, atf__file_writer *f,
                                            const char *leaf, int is_detail) {
    char path[1024];
    if (snprintf(path, sizeof path, "%s/thread_%u/%s", s->dir, sl->slot, leaf) >= (int)sizeof path)
        return atf__error_set(&sl->error, ATF_E_ARG, s->dir, 0, "path too long");
    return atf__file_writer_open(f, path, is_detail, sl->index_c.shared->layout, sl->thread_id,
                                 &sl->error);
}

/* Hands the staged detail records to detail.atf (opened on the first one). */
ATF__PRIVATE void atf__slot_flush_stage(atf_session *s, atf__slot *sl, size_t bytes, uint64_t count,
                                        uint64_t t_first, uint64_t t_last) {
    if (!count) return;
    if (!sl->detail_file.is_open && !sl->detail_file.failed)
        atf__slot_open_file(s, sl, &sl->detail_file, "detail.atf", 1);
    atf__file_writer_append(&sl->detail_file, s->stage, bytes, count, t_first, t_last,
                            s->cfg.fsync_every_bytes, &sl->error);
}

/* An entry header the producer could not have written means the ring memory is damaged
 * (shared memory is only as trustworthy as the other process): stop reading it. */
ATF__PRIVATE int atf__detail_entry_ok(const atf_ring *r, uint64_t at, uint64_t head, uint32_t entry) {
    uint64_t cap = r->mask + 1;
    return entry >= ATF__DETAIL_ENTRY_HEADER && (entry & 7u) == 0 && entry <= head - at &&
           (at & r->mask) + entry <= cap;
}

/* Moves detail records out of the ring: all of them in ALWAYS mode; in WINDOWED mode
 * those inside a trigger window are persisted, those that no future trigger can reach
 * (older than `horizon`) are released, and the rest stay pending unless the ring is more
 * than half full. `final` releases everything that is not persisted. */
ATF__PRIVATE uint64_t atf__slot_drain_detail(atf_session *s, atf__slot *sl, const atf__window *win,
                                             size_t nwin, uint64_t horizon, int final) {
    atf_ring *r = &sl->detail_c;
    uint64_t head = atf__load_acquire_u64(&r->shared->head), at = r->pos, moved = 0;
    uint64_t staged_count = 0, t_first = 0, t_last = 0, cap = r->mask + 1;
    size_t staged = 0;
    int windowed = sl->writer.detail_mode == ATF_DETAIL_WINDOWED;
    while (at < head) {
        const uint8_t *e = r->data + (at & r->mask);
        uint32_t entry = atf__load_le32(e), length;
        const uint8_t *rec = e + ATF__DETAIL_ENTRY_HEADER;
        uint64_t ts, index_seq;
        int persist;
        if (!atf__detail_entry_ok(r, at, head, entry) ||
            (!(atf__load_le32(e + 4) & ATF__DETAIL_ENTRY_PAD) &&
             ((length = atf__load_le32(rec)) < ATF_DETAIL_EVENT_HEADER_SIZE ||
              length > entry - ATF__DETAIL_ENTRY_HEADER))) {
            atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, at,
                                  "detail ring entry", 0, entry);
            at = head; /* give up on this ring's content rather than read garbage */
            break;
        }
        if (atf__load_le32(e + 4) & ATF__DETAIL_ENTRY_PAD) {
            at += entry;
            continue;
        }
        length = atf__load_le32(rec);
        ts = atf__load_le64(rec + 16);
        index_seq = sl->index_c.shared->layout == ATF_LAYOUT_2 ? atf__load_le64(rec + 8)
                                                                : atf__load_le32(rec + 8);
        persist = !windowed || atf__in_windows(win, nwin, ts);
        if (!persist && !final && ts >= horizon && head - at <= cap / 2) break; /* pending */
        if (persist) {
            if (staged + length > s->stage_cap) {
                atf__slot_flush_stage(s, sl, staged, staged_count, t_first, t_last);
                staged = 0;
                staged_count = 0;
            }
            if (windowed && !sl->detail_file.failed &&
                !atf__slot_queue_patch(sl, index_seq, sl->detail_file.count + staged_count)) {
                atf__error_set(&sl->error, ATF_E_NOMEM, sl->index_file.path, 0, "link queue");
            }
            if (staged_count == 0) t_first = ts;
            t_last = ts;
            if (sl->detail_file.count == 0 && staged_count == 0) sl->detail_file.seq_first = index_seq;
            sl->detail_file.seq_last = index_seq;
            memcpy(s->stage + staged, rec, length);
            staged += length;
            staged_count++;
        } else {
            sl->detail_released++;
        }
        at += entry;
        moved++;
    }
    atf__slot_flush_stage(s, sl, staged, staged_count, t_first, t_last);
    r->pos = at;
    atf__store_release_u64(&r->shared->tail, at);
    return moved;
}

/* Writes the index events in [tail, head) straight from the ring (at most two chunks),
 * after giving pending links their detail numbers. Small batches wait unless `all`. */
ATF__PRIVATE uint64_t atf__slot_drain_index(atf__slot *sl, uint64_t fsync_every, int all) {
    atf_ring *r = &sl->index_c;
    uint64_t head = atf__load_acquire_u64(&r->shared->head), start = r->pos;
    if (head - start > r->mask + 1) { /* impossible from a sane producer */
        atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, 0,
                              "index ring head beyond capacity", r->mask + 1, head - start);
        return 0;
    }
    if (head == start || (!all && head - start < 2048)) return 0;
    atf__slot_apply_patches(sl, head);
    while (r->pos < head) {
        uint64_t first = r->pos & r->mask;
        uint64_t n = head - r->pos < r->mask + 1 - first ? head - r->pos : r->mask + 1 - first;
        const uint8_t *data = r->data + (first << 5);
        atf__file_writer_append(&sl->index_file, data, (size_t)(n << 5), n, atf__load_le64(data),
                                atf__load_le64(data + ((n - 1) << 5)), fsync_every, &sl->error);
        r->pos += n;
    }
    atf__store_release_u64(&r->shared->tail, r->pos);
    return head - start;
}

ATF__PRIVATE void atf__slot_finalize(atf_session *s, atf__slot *sl) {
    int sync = s->cfg.fsync_mode == ATF_FSYNC_CLOSE;
    if (sl->finalized) return;
    atf__file_writer_finalize(&sl->detail_file, 0, sync, &sl->error);
    atf__file_writer_finalize(&sl->index_file, sl->detail_file.count > 0, sync, &sl->error);
    ATF_FREE(sl->patches);
    sl->patches = NULL;
    sl->patch_len = sl->patch_cap = sl->patch_head = 0;
    if (sl->index_raw) { /* the ring memory is ours: nobody produces into it any more */
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        sl->index_raw = sl->detail_raw = NULL;
    }
    sl->finalized = 1;
    atf__mutex_lock(&s->lock);
    s->manifest_dirty = 1;
    atf__mutex_unlock(&s->lock);
}

/* One pass over every slot. Returns how many records moved. */
ATF__PRIVATE uint64_t atf__session_drain(atf_session *s, int all, int final) {
    atf__window win[64];
    size_t nwin, i;
    uint64_t horizon, moved = 0, count;
    atf__mutex_lock(&s->drain_lock);
    atf__mutex_lock(&s->lock);
    /* a trigger registered after this point has t >= now, so it cannot reach records
     * older than now - pre_roll: those can be released */
    horizon = atf_now_ns();
    horizon = horizon > s->cfg.pre_roll_ns ? horizon - s->cfg.pre_roll_ns : 0;
    nwin = s->window_count;
    memcpy(win, s->windows, nwin * sizeof *win);
    atf__mutex_unlock(&s->lock);
    count = atf__load_acquire_u64(&s->slot_count);
    for (i = 0; i < count; i++) {
        atf__slot *sl = s->slots[i];
        int closed;
        if (sl->finalized) continue;
        closed = atf__load_acquire_u64(&sl->index_c.shared->closed) != 0;
        if (sl->has_detail_ring)
            moved += atf__slot_drain_detail(s, sl, win, nwin, horizon, final || closed);
        moved += atf__slot_drain_index(sl, s->cfg.fsync_every_bytes, all || final || closed);
        sl->ring_dropped = atf__load_acquire_u64(&sl->index_c.shared->dropped);
        if (sl->has_detail_ring)
            sl->ring_detail_dropped = atf__load_acquire_u64(&sl->detail_c.shared->dropped);
        if (sl->error.code != ATF_OK) atf__session_fail(s, &sl->error);
        if (closed && sl->index_c.pos == atf__load_acquire_u64(&sl->index_c.shared->head))
            atf__slot_finalize(s, sl);
    }
    atf__mutex_unlock(&s->drain_lock);
    return moved;
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
}

/* ---- manifest.json ---------------------------------------------------------------- */

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

ATF__PRIVATE void atf__text_u64(atf__text *t, uint64_t v) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    atf__text_add(t, buf, (size_t)n);
}

/* A JSON string with every character that needs it escaped (quotes, backslash, control
 * characters); bytes >= 0x80 pass through, so UTF-8 stays UTF-8. */
ATF__PRIVATE void atf__text_json(atf__text *t, const char *s) {
    static const char hex[] = "0123456789abcdef";
    atf__text_add(t, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[6] = {'\\', 'u', '0', '0', 0, 0};
        if (c == '"' || c == '\\') {
            esc[1] = (char)c;
            atf__text_add(t, esc, 2);
        } else if (c == '\n') {
            atf__text_add(t, "\\n", 2);
        } else if (c == '\r') {
            atf__text_add(t, "\\r", 2);
        } else if (c == '\t') {
            atf__text_add(t, "\\t", 2);
        } else if (c < 0x20) {
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            atf__text_add(t, esc, 6);
        } else {
            atf__text_add(t, (const char *)&c, 1);
        }
    }
    atf__text_add(t, "\"", 1);
}

/* "key": unsigned number, with a leading comma unless first. */
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

ATF__PRIVATE void atf__manifest_threads(atf_session *s, atf__text *t, uint64_t *t0, uint64_t *t1,
                                        uint64_t *dropped_total) {
    uint64_t i, count = atf__load_acquire_u64(&s->slot_count);
    atf__text_str(t, ",\"threads\":[");
    for (i = 0; i < count; i++) {
        atf_thread_stats st;
        atf__slot *sl = s->slots[i];
        atf__slot_stats(sl, &st);
        if (st.events_written) {
            if (*t0 == 0 || sl->index_file.time_start < *t0) *t0 = sl->index_file.time_start;
            if (sl->index_file.time_end > *t1) *t1 = sl->index_file.time_end;
        }
        *dropped_total += st.events_dropped;
        atf__text_str(t, i ? ",{\"id\":" : "{\"id\":");
        atf__text_u64(t, i);
        atf__text_str(t, st.detail_written ? ",\"has_detail\":true" : ",\"has_detail\":false");
        atf__text_key_u64(t, "os_thread_id", st.thread_id);
        if (sl->name[0]) atf__text_key_str(t, "name", sl->name);
        atf__text_key_u64(t, "events_written", st.events_written);
        atf__text_key_u64(t, "events_dropped", st.events_dropped);
        atf__text_key_u64(t, "detail_written", st.detail_written);
        atf__text_key_u64(t, "detail_dropped", st.detail_dropped);
        atf__text_key_u64(t, "events_lost_io", st.events_lost_io);
        atf__text_str(t, sl->finalized ? ",\"finalized\":true}" : ",\"finalized\":false}");
    }
    atf__text_str(t, "]");
}

ATF__PRIVATE void atf__manifest_metadata(atf_session *s, atf__text *t) {
    size_t i;
    char buf[64];
    atf__text_str(t, ",\"modules\":[");
    for (i = 0; i < s->module_count; i++) {
        atf__module *m = &s->modules[i];
        atf__text_str(t, i ? ",{\"module_id\":" : "{\"module_id\":");
        atf__text_u64(t, m->module_id);
        atf__text_key_str(t, "path", m->path);
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)m->base);
        atf__text_key_str(t, "base_address", buf);
        atf__text_key_u64(t, "size", m->size);
        atf__text_str(t, "}");
    }
    atf__text_str(t, "],\"symbols\":[");
    for (i = 0; i < s->symbol_count; i++) {
        atf__symbol *y = &s->symbols[i];
        snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)y->function_id);
        atf__text_str(t, i ? ",{\"function_id\":" : "{\"function_id\":");
        atf__text_json(t, buf);
        atf__text_key_u64(t, "module_id", y->function_id >> 32);
        atf__text_key_u64(t, "symbol_index", y->function_id & 0xFFFFFFFFu);
        atf__text_key_str(t, "name", y->name);
        atf__text_str(t, "}");
    }
    atf__text_str(t, "],\"timing_anchors\":[");
    for (i = 0; i < s->anchor_count; i++) {
        atf__anchor *a = &s->anchors[i];
        atf__text_str(t, i ? ",{\"name\":" : "{\"name\":");
        atf__text_json(t, a->name);
        atf__text_key_u64(t, "host_ns", a->host_ns);
        if (snprintf(buf, sizeof buf, ",\"value\":%.17g,\"rate\":%.17g}", a->value, a->rate) <
            (int)sizeof buf)
            atf__text_str(t, buf);
    }
    atf__text_str(t, "]");
}

/* Writes manifest.json.tmp and renames it over manifest.json, so that readers (and a
 * crash) only ever see a whole manifest. Caller holds s->lock. */
ATF__PRIVATE atf_result atf__manifest_write(atf_session *s, int closed) {
    atf__text t = {NULL, 0, 0, 0};
    char path[1100], tmp[1100], buf[96];
    uint64_t t0 = 0, t1 = 0, dropped = 0;
    atf__fd fd;
    atf_result rc = ATF_OK;
    atf__text_str(&t, "{\"format_version\":2");
    atf__text_key_u64(&t, "layout", s->cfg.layout);
    atf__text_key_u64(&t, "clock_type", atf_clock_type());
    atf__text_key_str(&t, "clock", atf_clock_str(atf_clock_type()));
    atf__text_key_u64(&t, "pid", atf__os_pid());
    atf__text_key_str(&t, "arch", atf_arch_str(ATF__ARCH_CODE));
    atf__text_key_str(&t, "os", atf_os_str(ATF__OS_CODE));
    atf__text_key_str(&t, "state", closed ? "closed" : "recording");
    atf__manifest_threads(s, &t, &t0, &t1, &dropped);
    atf__text_key_u64(&t, "time_start_ns", t0);
    atf__text_key_u64(&t, "time_end_ns", t1);
    atf__text_key_u64(&t, "events_dropped", dropped);
    atf__text_key_u64(&t, "attach_failures", s->attach_failures);
    atf__manifest_metadata(s, &t);
    if (s->error.code != ATF_OK) atf__text_key_str(&t, "error", atf_error_format(&s->error, buf, sizeof buf));
    atf__text_str(&t, "}\n");
    if (t.failed) {
        ATF_FREE(t.p);
        return atf__error_set(&s->error, ATF_E_NOMEM, s->dir, 0, "manifest text");
    }
    snprintf(path, sizeof path, "%s/manifest.json", s->dir);
    snprintf(tmp, sizeof tmp, "%s/manifest.json.tmp", s->dir);
    fd = atf__fd_create(tmp);
    if (fd == ATF__FD_NONE || atf__fd_pwrite(fd, t.p, t.len, 0) != 0) {
        rc = atf__error_set_errno(&s->error, ATF_E_IO, tmp, "write manifest", atf__last_os_error());
    } else if (closed && s->cfg.fsync_mode == ATF_FSYNC_CLOSE) {
        atf__fd_sync(fd);
    }
    if (fd != ATF__FD_NONE) atf__fd_close(fd);
    if (rc == ATF_OK && atf__rename_replace(tmp, path) != 0)
        rc = atf__error_set_errno(&s->error, ATF_E_IO, path, "rename manifest", atf__last_os_error());
    if (rc == ATF_OK) s->manifest_dirty = 0;
    ATF_FREE(t.p);
    return rc;
}

/* ---- session API ------------------------------------------------------------------ */

#if defined(ATF__CC_MSVC)
#  define ATF__THREAD_LOCAL __declspec(thread)
#else
#  define ATF__THREAD_LOCAL __thread
#endif
/* The calling thread's writer for the session whose id is atf__tls_session. A thread
 * that detached keeps the id with a NULL writer, so late events are ignored instead of
 * re-attaching a thread that is on its way out. */
static ATF__THREAD_LOCAL uint64_t atf__tls_session;
static ATF__THREAD_LOCAL atf_writer *atf__tls_writer;
static uint64_t atf__session_ids;

ATF__PRIVATE uint64_t atf__next_session_id(void) {
#if defined(ATF__CC_MSVC)
    return (uint64_t)_InterlockedIncrement64((volatile __int64 *)&atf__session_ids);
#else
    return __atomic_add_fetch(&atf__session_ids, 1, __ATOMIC_RELAXED);
#endif
}

/* Creates a slot: rings (owned, or the caller's), consumer views, thread directory and
 * index.atf. Publishes it last, so the drain never sees a half-made slot. */
ATF__PRIVATE atf_result atf__session_add_slot(atf_session *s, void *index_mem, size_t index_size,
                                              void *detail_mem, size_t detail_size,
                                              const char *name, uint32_t thread_id,
                                              atf__slot **out) {
    atf__slot *sl;
    char dir[1100];
    atf_result rc;
    uint64_t n = s->slot_count;
    if (n >= s->cfg.max_threads) return ATF_E_FULL;
    sl = (atf__slot *)ATF_MALLOC(sizeof *sl);
    if (!sl) return ATF_E_NOMEM;
    memset(sl, 0, sizeof *sl);
    sl->slot = (uint32_t)n;
    sl->thread_id = thread_id;
    atf__copy_str(sl->name, sizeof sl->name, name);
    if (!index_mem) {
        uint32_t layout = s->cfg.layout;
        index_size = atf_ring_memory_size(ATF_RING_INDEX, s->cfg.index_ring_events);
        index_mem = atf__alloc_aligned(index_size, &sl->index_raw);
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
        atf_ring_init(index_mem, index_size, ATF_RING_INDEX, s->cfg.index_ring_events, layout, thread_id);
        if (detail_mem)
            atf_ring_init(detail_mem, detail_size, ATF_RING_DETAIL, s->cfg.detail_ring_bytes, layout,
                          thread_id);
    }
    rc = atf_writer_init(&sl->writer, index_mem, index_size, detail_mem, detail_size,
                         s->cfg.detail_mode);
    if (rc == ATF_OK) rc = atf_ring_attach(&sl->index_c, index_mem, index_size, 0);
    if (rc == ATF_OK && detail_mem) rc = atf_ring_attach(&sl->detail_c, detail_mem, detail_size, 0);
    if (rc == ATF_OK) {
        if (!sl->index_raw) sl->thread_id = sl->index_c.shared->thread_id;
        sl->has_detail_ring = detail_mem != NULL;
        if (!sl->has_detail_ring) sl->writer.detail_mode = ATF_DETAIL_OFF;
        sl->writer.session = s;
        sl->writer.slot = sl->slot;
        snprintf(dir, sizeof dir, "%s/thread_%u", s->dir, sl->slot);
        if (atf__mkdir(dir) != 0)
            rc = atf__error_set_errno(&s->error, ATF_E_IO, dir, "mkdir", atf__last_os_error());
        else
            rc = atf__slot_open_file(s, sl, &sl->index_file, "index.atf", 0);
        if (rc != ATF_OK) atf__error_adopt(&s->error, &sl->error);
    }
    if (rc != ATF_OK) {
        if (sl->index_file.is_open) atf__fd_close(sl->index_file.fd);
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        ATF_FREE(sl);
        return rc;
    }
    s->slots[n] = sl;
    atf__store_release_u64(&s->slot_count, n + 1);
    s->manifest_dirty = 1;
    *out = sl;
    return ATF_OK;
}

ATF__PRIVATE void atf__drain_main(void *arg) {
    atf_session *s = (atf_session *)arg;
    uint32_t sleep_us = 50, cycle = 0;
    uint64_t last_manifest = atf_now_ns();
    while (!atf__load_acquire_u64(&s->stop)) {
        uint64_t moved = atf__session_drain(s, (++cycle & 15u) == 0, 0), now;
        /* lazy polling: sleep a little while busy, back off to the configured interval
         * when idle, so an idle session costs almost nothing */
        sleep_us = moved ? 50 : (sleep_us * 2 > s->cfg.drain_interval_us ? s->cfg.drain_interval_us
                                                                        : sleep_us * 2);
        now = atf_now_ns();
        if (now - last_manifest > 100000000u) {
            atf__mutex_lock(&s->drain_lock);
            atf__mutex_lock(&s->lock);
            if (s->manifest_dirty) atf__manifest_write(s, 0);
            atf__mutex_unlock(&s->lock);
            atf__mutex_unlock(&s->drain_lock);
            last_manifest = now;
        }
        atf__sleep_us(sleep_us);
    }
}

ATF__PRIVATE void atf__session_free(atf_session *s) {
    size_t i;
    for (i = 0; i < s->slot_count; i++) {
        atf__slot *sl = s->slots[i];
        ATF_FREE(sl->patches);
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        ATF_FREE(sl);
    }
    for (i = 0; i < s->module_count; i++) ATF_FREE(s->modules[i].path);
    for (i = 0; i < s->symbol_count; i++) ATF_FREE(s->symbols[i].name);
    ATF_FREE(s->modules);
    ATF_FREE(s->symbols);
    ATF_FREE(s->anchors);
    ATF_FREE(s->slots);
    ATF_FREE(s->stage);
    atf__mutex_destroy(&s->lock);
    atf__mutex_destroy(&s->drain_lock);
    ATF_FREE(s);
}

ATF__PRIVATE void atf__session_defaults(atf_session_config *c) {
    if (c->layout != ATF_LAYOUT_2) c->layout = ATF_LAYOUT_1;
    if (!c->index_ring_events) c->index_ring_events = 65536;
    if (!c->detail_ring_bytes) c->detail_ring_bytes = 1u << 20;
    if (!c->drain_interval_us) c->drain_interval_us = 1000;
    if (!c->max_threads) c->max_threads = 1024;
}

/* Creates <root>/<name>/pid_<pid>, each level in turn. */
ATF__PRIVATE atf_result atf__session_make_dirs(atf_session *s, const char *root) {
    char name[256];
    if (s->cfg.session_name) atf__copy_str(name, sizeof name, s->cfg.session_name);
    else atf__local_time_name(name, sizeof name);
    if (atf__mkdir(root) != 0)
        return atf__error_set_errno(&s->error, ATF_E_IO, root, "mkdir root", atf__last_os_error());
    snprintf(s->dir, sizeof s->dir, "%s/%s", root, name);
    if (atf__mkdir(s->dir) != 0)
        return atf__error_set_errno(&s->error, ATF_E_IO, s->dir, "mkdir session", atf__last_os_error());
    snprintf(s->dir + strlen(s->dir), sizeof s->dir - strlen(s->dir), "/pid_%u", atf__os_pid());
    if (atf__mkdir(s->dir) != 0)
        return atf__error_set_errno(&s->error, ATF_E_IO, s->dir, "mkdir pid", atf__last_os_error());
    return ATF_OK;
}

ATFDEF atf_result atf_session_open(atf_session **out, const char *root, const atf_session_config *cfg) {
    atf_session *s;
    atf_result rc;
    if (!out || !root) return ATF_E_ARG;
    *out = NULL;
    if (cfg && cfg->drain_mode == ATF_DRAIN_THREAD && cfg->detail_mode > ATF_DETAIL_WINDOWED)
        return ATF_E_ARG;
    s = (atf_session *)ATF_MALLOC(sizeof *s);
    if (!s) return ATF_E_NOMEM;
    memset(s, 0, sizeof *s);
    if (cfg) s->cfg = *cfg;
    s->cfg.session_name = NULL;
    atf__session_defaults(&s->cfg);
    if (cfg) s->cfg.session_name = cfg->session_name; /* used only while opening */
    s->id = atf__next_session_id();
    atf__mutex_init(&s->lock);
    atf__mutex_init(&s->drain_lock);
    s->slots = (atf__slot **)ATF_MALLOC(s->cfg.max_threads * sizeof *s->slots);
    s->stage_cap = s->cfg.detail_ring_bytes;
    s->stage = s->cfg.detail_mode != ATF_DETAIL_OFF ? (uint8_t *)ATF_MALLOC(s->stage_cap) : NULL;
    if (!s->slots || (s->cfg.detail_mode != ATF_DETAIL_OFF && !s->stage)) {
        atf__session_free(s);
        return ATF_E_NOMEM;
    }
    rc = atf__session_make_dirs(s, root);
    s->cfg.session_name = NULL;
    if (rc == ATF_OK) rc = atf_session_add_anchor(s, "wall_clock_ns", atf_now_ns(), (double)atf_wall_ns(), 1e9);
    if (rc == ATF_OK) rc = atf__manifest_write(s, 0);
#if defined(ATF_NO_THREADS)
    if (rc == ATF_OK && s->cfg.drain_mode == ATF_DRAIN_THREAD) rc = ATF_E_UNSUPPORTED;
#else
    if (rc == ATF_OK && s->cfg.drain_mode == ATF_DRAIN_THREAD) {
        s->drain_ctx.fn = atf__drain_main;
        s->drain_ctx.arg = s;
        if (atf__thread_start(&s->drain_thread, &s->drain_ctx) != 0)
            rc = atf__error_set(&s->error, ATF_E_IO, s->dir, 0, "start drain thread");
        else
            s->drain_running = 1;
    }
#endif
    if (rc != ATF_OK) {
        atf__session_free(s);
        return rc;
    }
    *out = s;
    return ATF_OK;
}

ATFDEF atf_result atf_session_close(atf_session *s) {
    uint64_t i;
    atf_result rc;
    if (!s) return ATF_E_ARG;
    atf__store_release_u64(&s->stop, 1);
#if !defined(ATF_NO_THREADS)
    if (s->drain_running) atf__thread_join(s->drain_thread);
#endif
    for (i = 0; i < s->slot_count; i++)
        if (!s->slots[i]->finalized) atf_writer_close(&s->slots[i]->writer);
    atf__session_drain(s, 1, 1);
    for (i = 0; i < s->slot_count; i++) {
        atf__slot_finalize(s, s->slots[i]);
        atf__error_adopt(&s->error, &s->slots[i]->error);
    }
    atf__manifest_write(s, 1);
    rc = s->error.code;
    if (atf__tls_session == s->id) atf__tls_writer = NULL;
    atf__session_free(s);
    return rc;
}

ATFDEF atf_result atf_session_attach(atf_session *s, const char *name, atf_writer **out) {
    atf__slot *sl = NULL;
    atf_result rc;
    atf__mutex_lock(&s->lock);
    rc = atf__session_add_slot(s, NULL, 0, NULL, 0, name, atf__os_thread_id(), &sl);
    if (rc != ATF_OK) s->attach_failures++;
    atf__mutex_unlock(&s->lock);
    if (rc != ATF_OK) return rc;
    atf__tls_session = s->id;
    atf__tls_writer = &sl->writer;
    if (out) *out = &sl->writer;
    return ATF_OK;
}

ATFDEF atf_writer *atf_session_writer(atf_session *s) {
    atf_writer *w = NULL;
    if (atf__tls_session == s->id) return atf__tls_writer;
    if (atf_session_attach(s, NULL, &w) != ATF_OK) {
        atf__tls_session = s->id; /* do not retry on every event */
        atf__tls_writer = NULL;
    }
    return w;
}

ATFDEF void atf_session_detach(atf_session *s) {
    if (atf__tls_session != s->id || !atf__tls_writer) return;
    atf_writer_close(atf__tls_writer);
    atf__tls_writer = NULL;
}

ATFDEF atf_result atf_session_attach_rings(atf_session *s, void *index_mem, size_t index_size,
                                           void *detail_mem, size_t detail_size,
                                           const char *name, uint32_t *slot_out) {
    atf__slot *sl = NULL;
    atf_result rc;
    if (!index_mem) return ATF_E_ARG;
    atf__mutex_lock(&s->lock);
    rc = atf__session_add_slot(s, index_mem, index_size, detail_mem, detail_size, name, 0, &sl);
    atf__mutex_unlock(&s->lock);
    if (rc == ATF_OK && slot_out) *slot_out = sl->slot;
    return rc;
}

ATFDEF atf_result atf_session_pump(atf_session *s) {
    atf_result rc;
    atf__session_drain(s, 1, 0);
    atf__mutex_lock(&s->drain_lock);
    atf__mutex_lock(&s->lock);
    if (s->manifest_dirty) atf__manifest_write(s, 0);
    rc = s->error.code;
    atf__mutex_unlock(&s->lock);
    atf__mutex_unlock(&s->drain_lock);
    return rc;
}

ATFDEF void atf_session_trigger(atf_session *s, uint64_t t_ns) {
    atf__window w;
    w.lo = t_ns > s->cfg.pre_roll_ns ? t_ns - s->cfg.pre_roll_ns : 0;
    w.hi = t_ns + s->cfg.post_roll_ns;
    atf__mutex_lock(&s->lock);
    if (s->window_count == sizeof s->windows / sizeof s->windows[0]) {
        /* full: merge into the newest window rather than forget a trigger */
        atf__window *last = &s->windows[s->window_count - 1];
        if (w.lo < last->lo) last->lo = w.lo;
        if (w.hi > last->hi) last->hi = w.hi;
    } else {
        s->windows[s->window_count++] = w;
    }
    atf__mutex_unlock(&s->lock);
}

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

ATFDEF atf_result atf_session_add_module(atf_session *s, uint32_t module_id, const char *path,
                                         uint64_t base_address, uint64_t size) {
    atf__module *m;
    char *copy = atf__strdup(path);
    atf_result rc = ATF_E_NOMEM;
    atf__mutex_lock(&s->lock);
    if (copy && atf__grow((void **)&s->modules, &s->module_cap, s->module_count, sizeof *m)) {
        m = &s->modules[s->module_count++];
        m->module_id = module_id;
        m->path = copy;
        m->base = base_address;
        m->size = size;
        s->manifest_dirty = 1;
        copy = NULL;
        rc = ATF_OK;
    }
    atf__mutex_unlock(&s->lock);
    ATF_FREE(copy);
    return rc;
}

ATFDEF atf_result atf_session_add_symbol(atf_session *s, uint64_t function_id, const char *name) {
    char *copy = atf__strdup(name);
    atf_result rc = ATF_E_NOMEM;
    atf__mutex_lock(&s->lock);
    if (copy && atf__grow((void **)&s->symbols, &s->symbol_cap, s->symbol_count, sizeof *s->symbols)) {
        s->symbols[s->symbol_count].function_id = function_id;
        s->symbols[s->symbol_count++].name = copy;
        s->manifest_dirty = 1;
        copy = NULL;
        rc = ATF_OK;
    }
    atf__mutex_unlock(&s->lock);
    ATF_FREE(copy);
    return rc;
}

ATFDEF atf_result atf_session_add_anchor(atf_session *s, const char *name, uint64_t host_ns,
                                         double value, double rate) {
    atf_result rc = ATF_E_NOMEM;
    atf__mutex_lock(&s->lock);
    if (atf__grow((void **)&s->anchors, &s->anchor_cap, s->anchor_count, sizeof *s->anchors)) {
        atf__anchor *a = &s->anchors[s->anchor_count++];
        atf__copy_str(a->name, sizeof a->name, name);
        a->host_ns = host_ns;
        a->value = value;
        a->rate = rate;
        s->manifest_dirty = 1;
        rc = ATF_OK;
    }
    atf__mutex_unlock(&s->lock);
    return rc;
}

ATFDEF const char *atf_session_path(const atf_session *s) { return s->dir; }
ATFDEF const atf_error *atf_session_error(const atf_session *s) { return &s->error; }
ATFDEF uint32_t atf_session_thread_count(const atf_session *s) {
    return (uint32_t)atf__load_acquire_u64(&s->slot_count);
}

ATFDEF atf_result atf_session_thread_stats(atf_session *s, uint32_t slot, atf_thread_stats *out) {
    if (slot >= atf_session_thread_count(s)) return ATF_E_RANGE;
    atf__mutex_lock(&s->drain_lock);
    atf__slot_stats(s->slots[slot], out);
    atf__mutex_unlock(&s->drain_lock);
    return ATF_OK;
}

/* >>readers: index, detail and thread readers. Opening validates the header, picks the
 * event count by the recovery rules (authoritative footer, else file size / record walk),
 * and, for detail files, builds the record offset table; after that every access is O(1)
 * and bounds-checked against the count, never against the bytes again. */
ATFDEF const char *atf_recovery_str(atf_recovery r) {
    switch (r) {
    case ATF_RECOVERY_FINALIZED: return "finalized";
    case ATF_RECOVERY_FOOTER_AT_END: return "footer at end (placeholder header)";
    case ATF_RECOVERY_FROM_SIZE: return "recovered (no footer)";
    case ATF_RECOVERY_FOOTER_MISMATCH: return "footer disagrees with file";
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
                                          atf_result identity, const uint8_t *bytes,
                                          uint64_t events_offset) {
    if (identity == ATF_E_MAGIC)
        return atf__error_set(err, ATF_E_MAGIC, name, 0, "magic");
    if (identity == ATF_E_ENDIAN)
        return atf__error_set_values(err, ATF_E_ENDIAN, name, 4, "endian byte", 1, bytes[4]);
    if (identity == ATF_E_VERSION)
        return atf__error_set_values(err, ATF_E_VERSION, name, 5, "version byte (1 or 2)", 2,
                                     bytes[5]);
    if (events_offset < ATF_HEADER_SIZE)
        return atf__error_set_values(err, ATF_E_CORRUPT, name, 32, "events_offset below header",
                                     ATF_HEADER_SIZE, events_offset);
    if (events_offset > size)
        return atf__error_set_values(err, ATF_E_TRUNCATED, name, 32, "events_offset beyond end",
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
    rc = atf__check_header(&r->error, name, img->size, rc, img->data, r->header.events_offset);
    if (rc != ATF_OK) return rc;
    if (r->header.event_size != ATF_INDEX_EVENT_SIZE)
        return atf__error_set_values(&r->error, ATF_E_CORRUPT, name, r->header.version == 2 ? 20 : 24,
                                     "event_size", ATF_INDEX_EVENT_SIZE, r->header.event_size);
    r->layout = r->header.version;
    r->events = img->data + r->header.events_offset;
    footer_pos = atf__find_footer(img, r->header.events_offset, r->header.footer_offset,
                                  ATF_INDEX_FOOTER_MAGIC, &via_header);
    span = img->size - r->header.events_offset;
    r->recovery = ATF_RECOVERY_FROM_SIZE;
    r->crc_state = ATF_CRC_NO_FOOTER;
    if (footer_pos != UINT64_MAX) {
        atf_index_footer_decode(img->data + footer_pos, &r->footer);
        r->has_footer = 1;
        span = footer_pos - r->header.events_offset;
        if (r->footer.bytes_written == span && r->footer.event_count <= span / ATF_INDEX_EVENT_SIZE &&
            r->footer.event_count * ATF_INDEX_EVENT_SIZE == span) {
            r->recovery = via_header ? ATF_RECOVERY_FINALIZED : ATF_RECOVERY_FOOTER_AT_END;
            r->crc_state = atf__crc_state_of(r->footer.checksum);
        } else {
            r->recovery = ATF_RECOVERY_FOOTER_MISMATCH;
        }
    }
    r->event_count = span / ATF_INDEX_EVENT_SIZE;
    r->torn_bytes = span % ATF_INDEX_EVENT_SIZE;
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
        atf__file_unmap(&r->image);
        memset(r, 0, sizeof *r);
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
    atf__file_unmap(&r->image);
    memset(r, 0, sizeof *r);
}

ATFDEF const uint8_t *atf_index_reader_raw(const atf_index_reader *r, uint64_t seq) {
    return seq < r->event_count ? r->events + seq * ATF_INDEX_EVENT_SIZE : NULL;
}

ATFDEF atf_result atf_index_reader_get(const atf_index_reader *r, uint64_t seq,
                                       atf_index_event *out) {
    if (seq >= r->event_count) return ATF_E_RANGE;
    atf_index_event_decode(r->layout, r->events + seq * ATF_INDEX_EVENT_SIZE, out);
    return ATF_OK;
}

ATFDEF atf_result atf_index_reader_verify_crc(atf_index_reader *r) {
    uint32_t crc;
    if (r->crc_state == ATF_CRC_OK || r->crc_state == ATF_CRC_NOT_COMPUTED ||
        r->crc_state == ATF_CRC_NO_FOOTER)
        return ATF_OK;
    if (r->crc_state == ATF_CRC_MISMATCH) return ATF_E_CRC;
    crc = atf_crc32c(r->events, (size_t)(r->event_count * ATF_INDEX_EVENT_SIZE));
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
    rc = atf__check_header(&r->error, name, img->size, rc, img->data, r->header.events_offset);
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
    r->recovery = ATF_RECOVERY_FROM_SIZE;
    r->crc_state = ATF_CRC_NO_FOOTER;
    if (footer_pos != UINT64_MAX) {
        atf_detail_footer_decode(img->data + footer_pos, &r->footer);
        r->has_footer = 1;
        if (r->footer.bytes_length == end - start && stop == end && r->footer.event_count == count) {
            r->recovery = via_header ? ATF_RECOVERY_FINALIZED : ATF_RECOVERY_FOOTER_AT_END;
            r->crc_state = atf__crc_state_of(r->footer.checksum);
        } else {
            r->recovery = ATF_RECOVERY_FOOTER_MISMATCH;
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

/* dir + "/" + leaf into buf; ATF_E_ARG when it does not fit. */
ATF__PRIVATE atf_result atf__path_join(char *buf, size_t cap, const char *dir, const char *leaf) {
    size_t a = strlen(dir), b = strlen(leaf);
    if (a + 1 + b + 1 > cap) return ATF_E_ARG;
    memcpy(buf, dir, a);
    buf[a] = '/';
    memcpy(buf + a + 1, leaf, b + 1);
    return ATF_OK;
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
    return rc;
}

ATFDEF void atf_thread_reader_close(atf_thread_reader *t) {
    if (!t) return;
    atf_index_reader_close(&t->index);
    atf_detail_reader_close(&t->detail);
    t->has_detail = 0;
}

ATFDEF atf_result atf_thread_reader_detail_of(const atf_thread_reader *t, uint64_t index_seq,
                                              atf_detail_event *out) {
    atf_index_event ev;
    atf_result rc = atf_index_reader_get(&t->index, index_seq, &ev);
    if (rc != ATF_OK) return rc;
    if (ev.detail_seq == ATF_NO_DETAIL) return ATF_E_NO_DETAIL;
    if (!t->has_detail || atf_detail_reader_get(&t->detail, ev.detail_seq, out) != ATF_OK)
        return ATF_E_CORRUPT;
    return out->header.index_seq == index_seq ? ATF_OK : ATF_E_CORRUPT;
}

ATFDEF atf_result atf_thread_reader_index_of(const atf_thread_reader *t, uint64_t detail_seq,
                                             atf_index_event *out) {
    atf_detail_event d;
    atf_result rc = atf_detail_reader_get(&t->detail, detail_seq, &d);
    if (rc != ATF_OK) return rc;
    if (atf_index_reader_get(&t->index, d.header.index_seq, out) != ATF_OK) return ATF_E_CORRUPT;
    return out->detail_seq == detail_seq ? ATF_OK : ATF_E_CORRUPT;
}

ATFDEF atf_result atf_thread_reader_verify_links(atf_thread_reader *t) {
    uint64_t i;
    atf_index_event ev;
    atf_detail_event d;
    for (i = 0; i < t->index.event_count; i++) {
        atf_result rc;
        atf_index_reader_get(&t->index, i, &ev);
        if (ev.detail_seq == ATF_NO_DETAIL) continue;
        rc = atf_thread_reader_detail_of(t, i, &d);
        if (rc != ATF_OK)
            return atf__error_set_values(&t->error, rc, t->index.path,
                                         t->index.header.events_offset + i * ATF_INDEX_EVENT_SIZE,
                                         "detail_seq of this index event does not lead back to it",
                                         i, ev.detail_seq);
    }
    /* Every forward link checked above is also a backward one; what is left are detail
     * records that no index event names. */
    for (i = 0; t->has_detail && i < t->detail.event_count; i++) {
        atf_result rc = atf_thread_reader_index_of(t, i, &ev);
        if (rc != ATF_OK) {
            atf_detail_reader_get(&t->detail, i, &d);
            return atf__error_set_values(&t->error, rc, t->detail.path, d.offset,
                                         "index_seq of this detail record does not lead back to it",
                                         i, d.header.index_seq);
        }
    }
    return ATF_OK;
}


/* >>json: a small strict JSON reader for manifest.json. One validating pass checks the
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
} atf__json;

ATF__PRIVATE size_t atf__json_space(const atf__json *j, size_t i) {
    while (i < j->n && (j->s[i] == ' ' || j->s[i] == '\n' || j->s[i] == '\r' || j->s[i] == '\t')) i++;
    return i;
}

ATF__PRIVATE int atf__json_is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

ATF__PRIVATE unsigned atf__json_hex(char c) {
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* A string starting at its opening quote: the offset after its closing quote, or NONE. */
ATF__PRIVATE size_t atf__json_check_string(const atf__json *j, size_t i) {
    for (i++; i < j->n; i++) {
        unsigned char c = (unsigned char)j->s[i];
        if (c == '"') return i + 1;
        if (c < 0x20) return ATF__JSON_NONE;
        if (c != '\\') continue;
        if (++i >= j->n) return ATF__JSON_NONE;
        switch (j->s[i]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
        case 'u':
            if (j->n - i < 5 || !atf__json_is_hex(j->s[i + 1]) || !atf__json_is_hex(j->s[i + 2]) ||
                !atf__json_is_hex(j->s[i + 3]) || !atf__json_is_hex(j->s[i + 4]))
                return ATF__JSON_NONE;
            i += 4;
            break;
        default: return ATF__JSON_NONE;
        }
    }
    return ATF__JSON_NONE;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: the offset after it, or NONE. */
ATF__PRIVATE size_t atf__json_check_number(const atf__json *j, size_t i) {
#define ATF__JSON_DIGIT(k) ((k) < j->n && j->s[k] >= '0' && j->s[k] <= '9')
    if (i < j->n && j->s[i] == '-') i++;
    if (!ATF__JSON_DIGIT(i)) return ATF__JSON_NONE;
    if (j->s[i++] != '0')
        while (ATF__JSON_DIGIT(i)) i++;
    if (i < j->n && j->s[i] == '.') {
        if (!ATF__JSON_DIGIT(i + 1)) return ATF__JSON_NONE;
        for (i++; ATF__JSON_DIGIT(i); i++) {}
    }
    if (i < j->n && (j->s[i] == 'e' || j->s[i] == 'E')) {
        i++;
        if (i < j->n && (j->s[i] == '+' || j->s[i] == '-')) i++;
        if (!ATF__JSON_DIGIT(i)) return ATF__JSON_NONE;
        while (ATF__JSON_DIGIT(i)) i++;
    }
    return i;
#undef ATF__JSON_DIGIT
}

/* A value starting at i (no leading space): the offset after it, or NONE. Recursion is
 * bounded by ATF__JSON_MAX_DEPTH. */
ATF__PRIVATE size_t atf__json_check_value(const atf__json *j, size_t i, int depth) {
    char c;
    if (i >= j->n) return ATF__JSON_NONE;
    c = j->s[i];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        if (depth >= ATF__JSON_MAX_DEPTH) return ATF__JSON_NONE;
        i = atf__json_space(j, i + 1);
        if (i < j->n && j->s[i] == close) return i + 1;
        for (;;) {
            if (c == '{') {
                if (i >= j->n || j->s[i] != '"') return ATF__JSON_NONE;
                i = atf__json_check_string(j, i);
                if (i == ATF__JSON_NONE) return i;
                i = atf__json_space(j, i);
                if (i >= j->n || j->s[i] != ':') return ATF__JSON_NONE;
                i = atf__json_space(j, i + 1);
            }
            i = atf__json_check_value(j, i, depth + 1);
            if (i == ATF__JSON_NONE) return i;
            i = atf__json_space(j, i);
            if (i >= j->n) return ATF__JSON_NONE;
            if (j->s[i] == close) return i + 1;
            if (j->s[i] != ',') return ATF__JSON_NONE;
            i = atf__json_space(j, i + 1);
        }
    }
    if (c == '"') return atf__json_check_string(j, i);
    if (c == '-' || (c >= '0' && c <= '9')) return atf__json_check_number(j, i);
    if (j->n - i >= 4 && memcmp(j->s + i, "true", 4) == 0) return i + 4;
    if (j->n - i >= 5 && memcmp(j->s + i, "false", 5) == 0) return i + 5;
    if (j->n - i >= 4 && memcmp(j->s + i, "null", 4) == 0) return i + 4;
    return ATF__JSON_NONE;
}

/* Checks the whole text: 1 when it is one JSON value with only space around it; the
 * root value is then at offset *root. */
ATF__PRIVATE int atf__json_parse(atf__json *j, const char *text, size_t len, size_t *root) {
    size_t end;
    j->s = text;
    j->n = len;
    if (len > ATF__JSON_MAX_TEXT) return 0;
    *root = atf__json_space(j, 0);
    end = atf__json_check_value(j, *root, 0);
    return end != ATF__JSON_NONE && atf__json_space(j, end) == len;
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
        end = atf__json_check_number(j, i);
        if (end == ATF__JSON_NONE) return 0;
    }
    if (i >= end) return 0;
    for (; i < end; i++) {
        char c = j->s[i];
        uint64_t d;
        if (c >= '0' && c <= '9') d = (uint64_t)(c - '0');
        else if (base == 16 && atf__json_is_hex(c)) d = atf__json_hex(c);
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

/* >>session-reader: a pid_* directory opened through its manifest and a scan of its
 * thread_* directories, joined into one list sorted by slot; then the k-way merge: a
 * loser tree of 64-bit keys (timestamp above thread index, branch-free min/max) picks the
 * next thread, and a thread that wins twice in a row keeps going while its timestamps
 * stay below the runner-up's, one comparison per event in the inline atf_merge_next, so
 * bursty interleavings cost close to a sequential scan. */
#if defined(ATF__OS_WINDOWS)
/* Calls fn(ctx, slot) for every thread_<N> directory of dir (N decimal, no leading 0). */
ATF__PRIVATE int atf__scan_thread_dirs(const char *dir, void (*fn)(void *, uint32_t), void *ctx) {
    char pattern[1100];
    wchar_t *w;
    WIN32_FIND_DATAW fd;
    HANDLE h;
    snprintf(pattern, sizeof pattern, "%s\\thread_*", dir);
    w = atf__utf8_to_wide(pattern);
    if (!w) return -1;
    h = FindFirstFileW(w, &fd);
    ATF_FREE(w);
    if (h == INVALID_HANDLE_VALUE) return GetLastError() == ERROR_FILE_NOT_FOUND ? 0 : -1;
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
#  include <dirent.h>
ATF__PRIVATE int atf__scan_thread_dirs(const char *dir, void (*fn)(void *, uint32_t), void *ctx) {
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        uint64_t v = 0;
        int digits = 0;
        if (strncmp(n, "thread_", 7) != 0) continue;
        n += 7;
        if (n[0] == '0' && n[1] != '\0') continue; /* thread_07 is not thread_7 */
        for (; *n >= '0' && *n <= '9' && digits < 10; n++, digits++) v = v * 10 + (uint64_t)(*n - '0');
        if (digits && !*n && v <= UINT32_MAX) fn(ctx, (uint32_t)v);
    }
    closedir(d);
    return 0;
}
#endif

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

ATF__PRIVATE void atf__session_reader_found(void *ctx, uint32_t slot) {
    atf__thread_list *l = (atf__thread_list *)ctx;
    if (!atf__grow((void **)&l->found, &l->found_cap, l->found_count, sizeof *l->found)) {
        l->failed = 1;
        return;
    }
    l->found[l->found_count++] = slot;
}

ATF__PRIVATE int atf__symbol_cmp(const void *a, const void *b) {
    uint64_t x = ((const atf_session_symbol *)a)->function_id;
    uint64_t y = ((const atf_session_symbol *)b)->function_id;
    return x < y ? -1 : x > y;
}

ATF__PRIVATE void atf__session_reader_symbols(atf_session_reader *r, atf__thread_list *l,
                                              const atf__json *j, size_t root) {
    size_t it, cap = 0, n = 0;
    for (it = atf__json_first(j, atf__json_get(j, root, "symbols")); it != ATF__JSON_NONE;
         it = atf__json_next(j, it)) {
        uint64_t fid;
        char *name;
        if (!atf__json_u64(j, atf__json_get(j, it, "function_id"), &fid)) continue;
        name = atf__json_strdup(j, atf__json_get(j, it, "name"));
        if (!name) name = atf__strdup("");
        if (!name || !atf__grow((void **)&r->symbols, &cap, n, sizeof *r->symbols)) {
            ATF_FREE(name);
            l->failed = 1;
            break;
        }
        r->symbols[n].function_id = fid;
        r->symbols[n++].name = name;
    }
    r->symbol_count = n;
    if (n) qsort(r->symbols, n, sizeof *r->symbols, atf__symbol_cmp);
}

/* Reads manifest.json into r: session fields, the listed threads, symbols. */
ATF__PRIVATE void atf__session_reader_manifest(atf_session_reader *r, atf__thread_list *l,
                                               const atf_reader_options *opt) {
    char path[1100];
    atf__file_image img;
    atf_error ignored;
    atf__json j;
    size_t root, threads, it;
    atf_result rc;
    memset(&ignored, 0, sizeof ignored);
    snprintf(path, sizeof path, "%s/manifest.json", r->path);
    rc = atf__file_map(&img, path, opt ? opt->no_mmap : 0, &ignored);
    if (rc != ATF_OK) {
        r->manifest = rc == ATF_E_NOT_FOUND ? ATF_MANIFEST_MISSING : ATF_MANIFEST_UNREADABLE;
        return;
    }
    if (img.size > ATF__JSON_MAX_TEXT || !atf__json_parse(&j, (const char *)img.data, (size_t)img.size, &root) ||
        j.s[root] != '{' || (threads = atf__json_get(&j, root, "threads")) == ATF__JSON_NONE ||
        j.s[threads] != '[') {
        r->manifest = ATF_MANIFEST_UNREADABLE;
        atf__file_unmap(&img);
        return;
    }
    r->manifest = ATF_MANIFEST_OK;
    atf__json_u32(&j, atf__json_get(&j, root, "format_version"), &r->format_version);
    atf__json_u32(&j, atf__json_get(&j, root, "layout"), &r->layout);
    atf__json_u32(&j, atf__json_get(&j, root, "clock_type"), &r->clock_type);
    atf__json_u64(&j, atf__json_get(&j, root, "time_start_ns"), &r->time_start_ns);
    atf__json_u64(&j, atf__json_get(&j, root, "time_end_ns"), &r->time_end_ns);
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
        atf__json_u64(&j, atf__json_get(&j, it, "events_dropped"), &t->events_dropped);
        atf__json_string(&j, atf__json_get(&j, it, "name"), t->name, sizeof t->name);
    }
    atf__session_reader_symbols(r, l, &j, root);
    atf__file_unmap(&img);
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

/* One pass over an index file: whether its timestamps ever decrease, and their range. */
ATF__PRIVATE void atf__session_thread_times(atf_session_thread *t) {
    const atf_index_reader *ix = &t->reader.index;
    uint64_t i, n = ix->event_count, prev = 0, lo = UINT64_MAX, hi = 0;
    int unordered = 0;
    for (i = 0; i < n; i++) {
        uint64_t ts = atf__load_le64(ix->events + i * ATF_INDEX_EVENT_SIZE);
        unordered |= ts < prev;
        lo = ts < lo ? ts : lo;
        hi = ts > hi ? ts : hi;
        prev = ts;
    }
    t->out_of_order = unordered;
    t->time_min_ns = n ? lo : 0;
    t->time_max_ns = hi;
}

/* Opens every listed or found thread. A thread without index.atf is `missing`; one whose
 * files fail to open keeps the reason in open_result (the first also in r->error). */
ATF__PRIVATE atf_result atf__session_reader_open_threads(atf_session_reader *r,
                                                         const atf_reader_options *opt) {
    size_t i, present = 0;
    atf_result first = ATF_E_NOT_FOUND;
    uint64_t lo = UINT64_MAX, hi = 0;
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
        if (rc != ATF_OK) {
            if (r->error.code == ATF_OK) first = rc;
            atf__error_adopt(&r->error, &t->reader.error);
            continue;
        }
        present++;
        if (!t->os_thread_id) t->os_thread_id = t->reader.index.header.thread_id;
        if (!r->clock_type) r->clock_type = t->reader.index.header.clock_type;
        if (!r->layout) r->layout = (uint32_t)t->reader.index.layout;
        atf__session_thread_times(t);
        if (t->reader.index.event_count) {
            lo = t->time_min_ns < lo ? t->time_min_ns : lo;
            hi = t->time_max_ns > hi ? t->time_max_ns : hi;
        }
    }
    /* The manifest's range when it has one and lists everything (the original tracer
     * wrote 0), else the files' own. */
    if (r->manifest != ATF_MANIFEST_OK || (r->time_start_ns == 0 && r->time_end_ns == 0)) {
        r->time_start_ns = lo == UINT64_MAX ? 0 : lo;
        r->time_end_ns = hi;
    }
    if (present) return ATF_OK;
    if (first == ATF_E_NOT_FOUND)
        return atf__error_set(&r->error, ATF_E_NOT_FOUND, r->path, 0, "no readable thread_N/index.atf");
    return first;
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
    scan = atf__scan_thread_dirs(dir, atf__session_reader_found, &list);
    if (scan != 0 && r->manifest != ATF_MANIFEST_OK)
        rc = atf__error_set_errno(&r->error, ATF_E_NOT_FOUND, dir, "open directory", atf__last_os_error());
    else if (list.failed || !atf__session_reader_join(r, &list))
        rc = atf__error_set(&r->error, ATF_E_NOMEM, dir, 0, "thread list");
    else
        rc = atf__session_reader_open_threads(r, opt);
    ATF_FREE(list.found);
    if (rc != ATF_OK) {
        atf_error keep = r->error;
        atf_session_reader_close(r);
        r->error = keep;
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
    ATF_FREE(r->threads);
    ATF_FREE(r->symbols);
    memset(r, 0, sizeof *r);
}

ATFDEF const char *atf_session_reader_symbol(const atf_session_reader *r, uint64_t function_id) {
    size_t lo = 0, hi = r->symbol_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->symbols[mid].function_id < function_id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->symbol_count && r->symbols[lo].function_id == function_id ? r->symbols[lo].name : NULL;
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
        if (atf__load_le64(r->events + mid * ATF_INDEX_EVENT_SIZE) < t_ns) lo = mid + 1;
        else hi = mid;
    }
    if (probes) *probes = n;
    return lo;
}

/* ---- merge ------------------------------------------------------------------------ */

#define ATF__EVENT_TS(events, seq) atf__load_le64((events) + (seq) * ATF_INDEX_EVENT_SIZE)

/* The end of the non-decreasing run of seq[] that starts at a. */
ATF__PRIVATE uint64_t atf__sort_run_end(const uint64_t *seq, uint64_t a, uint64_t n,
                                        const uint8_t *events) {
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
ATF__PRIVATE void atf__sort_by_time(uint64_t *seq, uint64_t *tmp, uint64_t n, const uint8_t *events) {
    uint64_t *from = seq, *to = tmp;
    for (;;) {
        uint64_t a = 0, runs = 0;
        while (a < n) {
            uint64_t b = atf__sort_run_end(from, a, n, events), c = b, o = a, x = a, y = b;
            if (b < n) c = atf__sort_run_end(from, b, n, events);
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
    atf__sort_by_time(t->order, tmp, n, t->reader.index.events);
    ATF_FREE(tmp);
    return ATF_OK;
}

/* Timestamp of the cursor's event at position p of its time order. */
ATF__PRIVATE uint64_t atf__cursor_ts(const atf__merge_cursor *c, uint64_t p) {
    return ATF__EVENT_TS(c->events, c->order ? c->order[p] : p);
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
    if (!c->order) ATF__PREFETCH(c->events + p * ATF_INDEX_EVENT_SIZE, ATF__MERGE_KEY_AHEAD);
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
        if (atf__thread_build_order(t) != ATF_OK) {
            atf_merge_deinit(m);
            return ATF_E_NOMEM;
        }
        c = &m->cursors[m->cursor_count++];
        memset(c, 0, sizeof *c);
        c->thread = t;
        c->index = m->cursor_count - 1;
        c->layout = t->reader.index.layout;
        c->events = t->reader.index.events;
        c->order = t->order;
        c->end = t->reader.index.event_count;
        if (m->to_ns && m->to_ns < UINT64_MAX) c->end = atf__cursor_search(c, c->end, m->to_ns + 1, &ignored);
    }
    atf__merge_keys(m);
    return atf_merge_seek(m, m->from_ns);
}

ATFDEF void atf_merge_deinit(atf_merge *m) {
    if (!m) return;
    ATF_FREE(m->cursors);
    ATF_FREE(m->tree);
    memset(m, 0, sizeof *m);
}

ATFDEF atf_result atf_merge_seek(atf_merge *m, uint64_t t_ns) {
    size_t i;
    if (t_ns < m->from_ns) t_ns = m->from_ns;
    m->probes = 0;
    for (i = 0; i < m->cursor_count; i++) {
        m->cursors[i].pos = atf__cursor_search(&m->cursors[i], m->cursors[i].end, t_ns, &m->probes);
        m->cursors[i].key_pos = UINT64_MAX; /* no key computed */
    }
    if (!m->linear) m->tree[0] = atf__merge_build(m, 1);
    m->run = NULL;
    m->run_end = 0;
    return ATF_OK;
}

/* >>impl-end */
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
