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
/* The ATF_CLOCK_* value of atf_now_ns() on this platform. Thread-safe. */
ATFDEF uint32_t atf_clock_type(void);
/* Wall-clock time (UTC) in nanoseconds since 1970, for timing anchors. Thread-safe. */
ATFDEF uint64_t atf_wall_ns(void);

/* ==== 8. ring ======================================================================== */
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

/* The shared part of a ring, at the start of its memory (256 bytes); data follows at
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

/* ==== 9. writer ====================================================================== */
/* The per-thread producer: one index ring, one optional detail ring, the call depth and
 * the sequence counters. Every call here is wait-free: no lock, no system call, no
 * allocation. A full ring drops the event and counts it; nothing else happens.
 *
 * Sequence numbers: an event's index_seq is the number of index events this writer
 * pushed before it (dropped events take no number), which is its position in index.atf.
 * In detail mode ALWAYS the detail record's number is known at once and both links are
 * written by the producer; in WINDOWED mode the index record is pushed with no link and
 * the drain writes the link when it decides to persist the detail (see the session).
 * Layout 1 stores links in 32 bits: a layout-1 writer stops attaching detail once either
 * number would reach 0xFFFFFFFF (the events are still recorded, detail_dropped counts). */
enum { ATF_DETAIL_OFF = 0, ATF_DETAIL_ALWAYS = 1, ATF_DETAIL_WINDOWED = 2 };

typedef struct atf_session atf_session;

/* One per producing thread. The fields are readable by that thread (e.g. `dropped` after
 * a push); nothing else may change them. */
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

/* Binds a writer to rings initialized with atf_ring_init (e.g. in shared memory);
 * detail_mem may be NULL (then detail_mode is OFF). For producers outside a session
 * (another process drains the rings with atf_session_attach_rings). One writer per ring
 * for the ring's lifetime. ATF_E_ARG / ATF_E_MAGIC / ATF_E_CORRUPT as atf_ring_attach. */
ATFDEF atf_result atf_writer_init(atf_writer *w, void *index_mem, size_t index_size,
                                  void *detail_mem, size_t detail_size, uint32_t detail_mode);
/* Marks the writer's rings closed: the drain finalizes the thread once they are empty.
 * Call from the producing thread (or once it has stopped). Wait-free. */
ATFDEF void atf_writer_close(atf_writer *w);

/* Pushes one index event linked to detail record `detail_seq` (ATF_NO_DETAIL for none).
 * ATF_OK, or ATF_E_FULL (dropped and counted). The record is complete before the release
 * store of head publishes it. Producer thread only. */
ATF__INLINE atf_result atf__writer_push_linked(atf_writer *w, uint32_t kind, uint64_t function_id,
                                               uint64_t timestamp_ns, uint32_t depth,
                                               uint64_t detail_seq) {
    atf_ring *r = &w->index;
    uint64_t pos = r->pos, third, fourth;
    uint8_t *slot;
    if (pos - r->other > r->mask) {
        r->other = atf__load_acquire_u64(&r->shared->tail);
        if (pos - r->other > r->mask) {
            w->dropped++;
            atf__store_release_u64(&r->shared->dropped, w->dropped);
            return ATF_E_FULL;
        }
    }
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
ATF__INLINE atf_result atf_writer_push(atf_writer *w, uint32_t kind, uint64_t function_id,
                                       uint64_t timestamp_ns, uint32_t depth) {
    return atf__writer_push_linked(w, kind, function_id, timestamp_ns, depth, ATF_NO_DETAIL);
}

/* Function entry at a caller-supplied timestamp (the library clock: pass atf_now_ns()).
 * The depth advances even when the event is dropped. Producer thread only. */
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
 * depth like call (kind ATF_EVENT_CALL) or return (any other kind). ATF_OK, or
 * ATF_E_FULL when the index event was dropped (then no detail was recorded either).
 * Producer thread only; wait-free. */
ATFDEF atf_result atf_writer_event_detail(atf_writer *w, uint32_t kind, uint64_t function_id,
                                          uint64_t ts, uint16_t type, const void *payload,
                                          size_t len);

/* ==== 10. session writer ============================================================= */
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
 * the first error (with errno) and reports it from pump, close and atf_session_error. */
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
    uint32_t drain_mode;         /* ATF_DRAIN_THREAD (default; ATF_E_UNSUPPORTED with
                                    ATF_NO_THREADS) or ATF_DRAIN_MANUAL */
    uint32_t drain_interval_us;  /* longest drain thread sleep when idle; default 1000 */
    uint32_t fsync_mode;         /* ATF_FSYNC_NONE (default) or ATF_FSYNC_CLOSE */
    uint64_t fsync_every_bytes;  /* also fdatasync each file every N bytes; default 0 (never) */
    uint32_t max_threads;        /* thread slots; default 1024 */
    const char *session_name;    /* directory name; default session_YYYYMMDD_HHMMSS. When
                                    <root>/<name>/pid_<pid> exists, _1, _2, ... is appended */
} atf_session_config;

/* Per-thread figures, as in the manifest. */
typedef struct atf_thread_stats {
    uint32_t slot;
    uint32_t thread_id;
    uint64_t events_written;     /* index events in index.atf */
    uint64_t events_dropped;     /* index ring full */
    uint64_t detail_written;     /* records in detail.atf */
    uint64_t detail_dropped;     /* detail ring full (ALWAYS) or released unpersisted */
    uint64_t events_lost_io;     /* drained but not written because the file failed */
    int finalized;               /* footer written, files closed */
} atf_thread_stats;

/* Creates the session directory, writes the first manifest and starts the drain.
 * `root` is created when missing. On failure *out is NULL. ATF_E_ARG for a bad config
 * value, ATF_E_IO when a directory or file cannot be made. Thread-safe. */
ATFDEF atf_result atf_session_open(atf_session **out, const char *root,
                                   const atf_session_config *cfg /* optional */);
/* Stops the drain, drains every ring, finalizes every file (footer with CRC32-C, header
 * rewrite, optional fsync) and the manifest, then frees the session. Returns the first
 * error the session met (the files are finalized as far as they can be either way).
 * Every writer of the session becomes invalid; threads must have stopped producing. */
ATFDEF atf_result atf_session_close(atf_session *s);
/* The same, also copying the first error with its detail (path, errno) into *error_out
 * (optional), which atf_session_error can no longer give once the session is freed. */
ATFDEF atf_result atf_session_close_ex(atf_session *s, atf_error *error_out);
/* The calling thread's writer, attaching the thread on first use (thread-local lookup;
 * when the thread exits, its writer is closed and the drain finalizes its files). NULL
 * when the session is out of slots or memory (counted as attach_failures in the
 * manifest), or after the thread detached. Thread-safe; wait-free once attached. */
ATFDEF atf_writer *atf_session_writer(atf_session *s);
/* Attaches the calling thread explicitly, with an optional name for the manifest. When
 * the thread is attached already, *out receives its writer (the name is ignored).
 * ATF_E_FULL when out of slots, ATF_E_NOMEM, ATF_E_IO. Thread-safe. */
ATFDEF atf_result atf_session_attach(atf_session *s, const char *name, atf_writer **out);
/* Detaches the calling thread: its writer is closed and finalized by the drain, and
 * atf_session_writer returns NULL in this thread afterwards. Thread-safe. */
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
 * producer hot path). */
ATFDEF void atf_session_trigger(atf_session *s, uint64_t t_ns);
/* Registers a module (module_id 0 = main executable) and a symbol for the manifest.
 * ATF_E_NOMEM on allocation failure. Thread-safe. */
ATFDEF atf_result atf_session_add_module(atf_session *s, uint32_t module_id, const char *path,
                                         uint64_t base_address, uint64_t size);
ATFDEF atf_result atf_session_add_symbol(atf_session *s, uint64_t function_id, const char *name);
/* A timing anchor: host_ns on the trace clock corresponds to `value` on clock `name`,
 * which advances `rate` units per second (e.g. 48000 for an audio timeline). Thread-safe. */
ATFDEF atf_result atf_session_add_anchor(atf_session *s, const char *name, uint64_t host_ns,
                                         double value, double rate);
/* The pid_<pid> directory path. Valid until close. Thread-safe. */
ATFDEF const char *atf_session_path(const atf_session *s);
/* The first error the session met (ATF_OK if none). Read it while no drain runs (manual
 * mode, or after atf_session_pump returned an error); it stays valid until close. */
ATFDEF const atf_error *atf_session_error(const atf_session *s);
/* Figures of slot `slot` (ATF_E_RANGE past the last slot). Thread-safe. */
ATFDEF atf_result atf_session_thread_stats(atf_session *s, uint32_t slot, atf_thread_stats *out);
/* Number of thread slots handed out so far. Thread-safe. */
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
 * creation and positioned writes, directories, atomic rename, ids, sleeping, locks,
 * threads and the thread-exit hook that closes a departing thread's writer. */
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
ATF__PRIVATE int atf__rename_replace(const char *from, const char *to) {
    wchar_t *a = atf__utf8_to_wide(from), *b = atf__utf8_to_wide(to);
    int ok = a && b && MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    ATF_FREE(a);
    ATF_FREE(b);
    return ok ? 0 : -1;
}
ATF__PRIVATE uint32_t atf__os_thread_id(void) { return (uint32_t)GetCurrentThreadId(); }
ATF__PRIVATE uint32_t atf__os_pid(void) { return (uint32_t)GetCurrentProcessId(); }
#  if !defined(ATF_NO_THREADS)
ATF__PRIVATE void atf__sleep_us(uint32_t us) { Sleep(us < 1000 ? 1 : us / 1000); }
#  endif
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
#  if !defined(ATF_NO_THREADS)
ATF__PRIVATE void atf__sleep_us(uint32_t us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u);
    ts.tv_nsec = (long)(us % 1000000u) * 1000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
#  endif
ATF__PRIVATE void atf__local_time_name(char *buf, size_t cap) {
    time_t now = time(NULL);
    struct tm t;
    localtime_r(&now, &t);
    snprintf(buf, cap, "session_%04d%02d%02d_%02d%02d%02d", t.tm_year + 1900, t.tm_mon + 1,
             t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
}
#endif

/* Locks and threads; with ATF_NO_THREADS the locks are no-ops and there is no drain
 * thread. The global lock guards the registry of live sessions that thread-exit hooks
 * consult; it is statically initialized so that no setup call is needed. */
#if defined(ATF_NO_THREADS)
typedef int atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { *m = 0; }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { (void)m; }
ATF__PRIVATE void atf__global_lock(void) {}
ATF__PRIVATE void atf__global_unlock(void) {}
#elif defined(ATF__OS_WINDOWS)
typedef CRITICAL_SECTION atf__mutex;
ATF__PRIVATE void atf__mutex_init(atf__mutex *m) { InitializeCriticalSection(m); }
ATF__PRIVATE void atf__mutex_destroy(atf__mutex *m) { DeleteCriticalSection(m); }
ATF__PRIVATE void atf__mutex_lock(atf__mutex *m) { EnterCriticalSection(m); }
ATF__PRIVATE void atf__mutex_unlock(atf__mutex *m) { LeaveCriticalSection(m); }
static SRWLOCK atf__global_srw = SRWLOCK_INIT;
ATF__PRIVATE void atf__global_lock(void) { AcquireSRWLockExclusive(&atf__global_srw); }
ATF__PRIVATE void atf__global_unlock(void) { ReleaseSRWLockExclusive(&atf__global_srw); }
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
static pthread_mutex_t atf__global_mutex = PTHREAD_MUTEX_INITIALIZER;
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
static DWORD atf__fls_index = FLS_OUT_OF_INDEXES;
static INIT_ONCE atf__fls_once = INIT_ONCE_STATIC_INIT;
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
static pthread_key_t atf__exit_key;
static int atf__exit_key_ok;
static pthread_once_t atf__exit_once = PTHREAD_ONCE_INIT;
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
 * overflows however long the machine has been up; the tick rate is read once and cached
 * with a relaxed atomic (every thread computes the same value). */
#if defined(ATF__OS_WINDOWS)
static LONGLONG volatile atf__qpc_freq;
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
static uint64_t atf__mach_ratio; /* numer << 32 | denom, 0 until known */
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

/* >>ring: formatting and attaching SPSC rings in caller memory. The push side lives
 * inline in the declarations (atf_writer_push); the pop side is the drain's. A ring's
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

/* >>writer: the producer calls that are not inline (detail payloads, binding to caller
 * memory). The inline index push is in the declarations; everything here is wait-free
 * too: bounded loops, no locks, no allocation, no system calls. */
ATFDEF ATF_NO_INSTRUMENT atf_result atf_writer_init(atf_writer *w, void *index_mem,
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

/* Marks the rings closed (the session's own path: no thread-local bookkeeping). */
ATF__PRIVATE void atf__writer_close_rings(atf_writer *w) {
    if (w->detail.shared) atf__store_release_u64(&w->detail.shared->closed, 1);
    if (w->index.shared) atf__store_release_u64(&w->index.shared->closed, 1);
}

ATF__PRIVATE void atf__session_forget_writer(atf_writer *w);

ATFDEF ATF_NO_INSTRUMENT void atf_writer_close(atf_writer *w) {
    if (!w) return;
    if (w->session) atf__session_forget_writer(w); /* no second close at thread exit */
    atf__writer_close_rings(w);
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
ATF__PRIVATE int atf__writer_put_detail(atf_writer *w, uint64_t ts, uint16_t type,
                                        const void *payload, size_t len, uint32_t entry_flags) {
    atf_ring *r = &w->detail;
    uint64_t cap = r->mask + 1, record, entry, to_end, need;
    uint8_t *at;
    if ((uint64_t)len > cap) return 0;
    record = ATF_DETAIL_EVENT_HEADER_SIZE + (uint64_t)len;
    entry = (ATF__DETAIL_ENTRY_HEADER + record + 7u) & ~(uint64_t)7u;
    if (record > UINT32_MAX || entry > cap / 2) return 0;
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

ATFDEF ATF_NO_INSTRUMENT atf_result atf_writer_event_detail(atf_writer *w, uint32_t kind,
                                                            uint64_t function_id, uint64_t ts,
                                                            uint16_t type, const void *payload,
                                                            size_t len) {
    uint64_t detail_seq = ATF_NO_DETAIL;
    uint32_t depth;
    if (kind == ATF_EVENT_CALL) depth = w->depth++;
    else depth = w->depth ? --w->depth : 0;
    if (!atf__ring_has_room(&w->index, 1)) {
        /* dropped as a whole: a detail record must never name a missing index event */
        w->dropped++;
        atf__store_release_u64(&w->index.shared->dropped, w->dropped);
        return ATF_E_FULL;
    }
    if (w->detail_mode != ATF_DETAIL_OFF && w->detail.data) {
        int windowed = w->detail_mode == ATF_DETAIL_WINDOWED;
        int fits = w->layout == ATF_LAYOUT_2 ||
                   (w->index.pos <= 0xFFFFFFFFu && w->detail_count < ATF_NO_DETAIL_U32);
        if (fits && atf__writer_put_detail(w, ts, type, payload, len,
                                           windowed ? ATF__DETAIL_ENTRY_UNLINKED : 0u)) {
            if (!windowed) detail_seq = w->detail_count;
            w->detail_count++;
        } else {
            w->detail_dropped++;
            atf__store_release_u64(&w->detail.shared->dropped, w->detail_dropped);
        }
    }
    return atf__writer_push_linked(w, kind, function_id, ts, depth, detail_seq);
}

/* >>file-writer: one output file: created whole (placeholder header under a temporary
 * name, then renamed), events appended, footer and header rewrite at finalize. The
 * CRC32-C is kept incrementally over what is appended; an in-place patch (windowed detail
 * links) adds its linear correction, so finalize never rereads the file for it. A failed
 * write stops the file: the records that reached it whole are kept, it is cut back after
 * the last of them, and every later append is counted as lost. */
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
    char path[1024];
} atf__file_writer;

#define ATF__CRC32C_POLY 0x82F63B78u
#define ATF__WRITE_PIECE ((size_t)1 << 18)  /* index appends: CRC each piece right after writing it */

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

ATF__PRIVATE atf_result atf__file_writer_fail(atf__file_writer *f, atf_error *err, const char *what,
                                              int code) {
    f->stopped = 1;
    if (err->code == ATF_OK) {
        atf__error_set_errno(err, ATF_E_IO, f->path, what, code);
        err->offset = ATF_HEADER_SIZE + f->bytes;
    }
    /* a partial write may have left part of a record: cut back after the last whole one */
    if (f->fd != ATF__FD_NONE) f->dirty = atf__fd_truncate(f->fd, ATF_HEADER_SIZE + f->bytes) != 0;
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
    atf__file_writer_header(f, header, 0, 0);
    if (atf__fd_pwrite(f->fd, header, sizeof header, 0, NULL) != 0 ||
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
    if (f->is_detail) {
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
            size_t piece = n - at < ATF__WRITE_PIECE ? n - at : ATF__WRITE_PIECE, done = 0;
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
    if (fsync_every && f->bytes - f->synced_bytes >= fsync_every) {
        if (atf__fd_sync(f->fd) != 0)
            atf__error_set_errno(err, ATF_E_IO, f->path, "periodic fsync", atf__last_os_error());
        f->synced_bytes = f->bytes;
    }
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
    if (!f->is_open || f->dirty || n > sizeof delta || offset + n > f->bytes) return ATF_E_IO;
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
            if (atf__fd_pwrite(f->fd, footer, sizeof footer, ATF_HEADER_SIZE + f->bytes, NULL) != 0)
                rc = atf__file_writer_fail(f, err, "write footer", atf__last_os_error());
            else if (atf__fd_pwrite(f->fd, header, sizeof header, 0, NULL) != 0)
                rc = atf__error_set_errno(err, ATF_E_IO, f->path, "rewrite header", atf__last_os_error());
        }
    }
    if (sync && atf__fd_sync(f->fd) != 0 && rc == ATF_OK)
        rc = atf__error_set_errno(err, ATF_E_IO, f->path, "fsync", atf__last_os_error());
    atf__fd_close(f->fd);
    f->fd = ATF__FD_NONE;
    f->is_open = 0;
    f->stopped = 1;
    return rc;
}

/* >>session: thread slots, the drain, windowed detail, links and the manifest. Attaching
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

typedef struct atf__slot {
    atf_writer writer;           /* the producer's view (used by the traced thread only) */
    atf_ring index_c, detail_c;  /* the drain's views */
    void *index_raw, *detail_raw; /* owned ring memory, NULL when the caller owns it */
    atf__file_writer index_file, detail_file;
    atf__link *links;            /* [link_head, link_head + link_len) */
    size_t link_head, link_len, link_cap;
    uint64_t detail_released;    /* detail records released unpersisted */
    uint64_t ring_dropped;       /* copies of the rings' drop counters, taken by the drain */
    uint64_t ring_detail_dropped;
    uint32_t thread_id, slot;
    int finalized, has_detail_ring;
    int detail_stopped;          /* detail.atf takes no more records (numbering untrusted) */
    int error_reported;          /* error handed to the session */
    atf_error error;             /* first error of this slot's files */
    char name[128];
} atf__slot;

typedef struct atf__symbol { uint64_t function_id; char *name; } atf__symbol;
typedef struct atf__module { uint32_t module_id; char *path; uint64_t base, size; } atf__module;
typedef struct atf__anchor { char name[128]; uint64_t host_ns; double value, rate; } atf__anchor;

#define ATF__MAX_WINDOWS 4096
#define ATF__INDEX_BATCH 2048     /* the drain thread leaves smaller index batches waiting */
#define ATF__DRAIN_BUSY 16384     /* a pass that moved this many records: no sleep */
#define ATF__TRIGGER_SLACK_NS 100000000u /* how late a trigger may name its time t */

struct atf_session {
    atf_session_config cfg;
    uint64_t id;                 /* distinguishes sessions in thread-local caches */
    char dir[1024];              /* <root>/<session>/pid_<pid> */
    atf__mutex lock;             /* slots, metadata, triggers, error */
    atf__mutex drain_lock;       /* one drain pass at a time; taken before `lock` */
    atf__slot **slots;
    uint64_t slot_count;         /* published with a release store */
    atf__module *modules;
    size_t module_count, module_cap;
    atf__symbol *symbols;
    size_t symbol_count, symbol_cap;
    atf__anchor *anchors;
    size_t anchor_count, anchor_cap;
    atf__window *windows;        /* triggers: sorted, disjoint (under `lock`) */
    size_t window_count;
    uint64_t window_gen;         /* bumped on every change */
    atf__window *drain_windows;  /* the drain's copy (under `drain_lock`) */
    size_t drain_window_count;
    uint64_t drain_window_gen;
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
    atf_session *live_next;      /* registry of open sessions (under the global lock) */
};

/* ---- thread-local writers --------------------------------------------------------- */

#if defined(ATF_NO_THREADS)
#  define ATF__THREAD_LOCAL
#elif defined(ATF__CC_MSVC)
#  define ATF__THREAD_LOCAL __declspec(thread)
#else
#  define ATF__THREAD_LOCAL __thread
#endif

/* One per (thread, session) the thread met; the most recently used one first. A NULL
 * writer means "do not attach again" (detached, or attaching failed). */
typedef struct atf__tls_entry {
    uint64_t session_id;
    atf_writer *writer;
    struct atf__tls_entry *next;
} atf__tls_entry;

static ATF__THREAD_LOCAL atf__tls_entry *atf__tls_list;
static ATF__THREAD_LOCAL int atf__tls_armed;   /* thread-exit hook installed */
static ATF__THREAD_LOCAL int atf__tls_no_attach; /* exiting, a drain, or inside the library */
static atf_session *atf__live_sessions;         /* under the global lock */
static uint64_t atf__session_ids;

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
        if (e->writer && atf__session_live(e->session_id)) atf__writer_close_rings(e->writer);
        ATF_FREE(e);
    }
    atf__tls_list = NULL;
    atf__global_unlock();
}

/* atf_writer_close on a session writer from its thread: forget it, so that thread exit
 * does not close it a second time after the drain released its rings. */
ATF__PRIVATE void atf__session_forget_writer(atf_writer *w) {
    atf__tls_entry *e;
    for (e = atf__tls_list; e; e = e->next)
        if (e->writer == w) e->writer = NULL;
}

ATF__PRIVATE void atf__session_fail(atf_session *s, const atf_error *e) {
    atf__session_lock(s);
    atf__error_adopt(&s->error, e);
    atf__session_unlock(s);
}

/* ---- windowed detail -------------------------------------------------------------- */

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

/* ---- links between detail records and index events -------------------------------- */

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
 * ring gets the link in the ring before it is written; when index.atf stopped, the
 * records whose events cannot reach it are cut from detail.atf. */
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
        } else if (ix->stopped) {
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

/* Detail records collected for one write. */
typedef struct atf__stage { size_t bytes; uint64_t count, t_first, t_last, seq_last; } atf__stage;

/* Writes the staged records to detail.atf (opened on the first one); the links of records
 * that did not reach it are dropped. */
ATF__PRIVATE void atf__slot_flush(atf_session *s, atf__slot *sl, atf__stage *st) {
    atf__file_writer *f = &sl->detail_file;
    if (!st->count) return;
    if (!f->is_open && !f->stopped && !sl->detail_stopped)
        atf__slot_open_file(s, sl, f, "detail.atf", 1);
    atf__file_writer_append(f, s->stage, st->bytes, st->count, st->t_first, st->t_last,
                            s->cfg.fsync_every_bytes, &sl->error);
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
    if (st->bytes + length > s->stage_cap) {
        atf__slot_flush(s, sl, st);
        if (atf__slot_detail_closed(sl)) return 0;
        if (length > s->stage_cap) {
            size_t want = length < ((size_t)1 << 20) ? ((size_t)1 << 20) : (size_t)length;
            uint8_t *p = (uint8_t *)ATF_REALLOC(s->stage, want);
            if (!p) return 0;
            s->stage = p;
            s->stage_cap = want;
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
    memcpy(s->stage + st->bytes, rec, length);
    if (!st->count) st->t_first = ts;
    st->t_last = ts;
    st->seq_last = index_seq;
    st->bytes += length;
    st->count++;
    return 1;
}

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
                  atf__in_windows(s->drain_windows, s->drain_window_count, ts);
        if (!persist && !final && ts >= horizon && head - at <= cap / 2) break; /* pending */
        if (!persist) {
            sl->detail_released++;
        } else if (atf__slot_detail_closed(sl)) {
            f->lost++;
        } else if (!atf__slot_stage(s, sl, &st, rec, length, index_seq, ts,
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

/* Writes the index events in [tail, head) straight from the ring (at most two runs),
 * after giving pending links their detail numbers. Small batches wait unless `all`. */
ATF__PRIVATE uint64_t atf__slot_drain_index(atf_session *s, atf__slot *sl, uint64_t head, int all) {
    atf_ring *r = &sl->index_c;
    uint64_t start = r->pos;
    atf__slot_settle_links(sl, head);
    if (head == start || (!all && head - start < ATF__INDEX_BATCH)) return 0;
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
    while (r->pos < head) {
        uint64_t first = r->pos & r->mask;
        uint64_t n = head - r->pos < r->mask + 1 - first ? head - r->pos : r->mask + 1 - first;
        const uint8_t *data = r->data + (first << 5);
        atf__file_writer_append(&sl->index_file, data, (size_t)(n << 5), n, 0, 0,
                                s->cfg.fsync_every_bytes, &sl->error);
        r->pos += n;
    }
    atf__store_release_u64(&r->shared->tail, r->pos);
    atf__slot_settle_links(sl, head);
    return head - start;
}

ATF__PRIVATE void atf__slot_finalize(atf_session *s, atf__slot *sl) {
    int sync = s->cfg.fsync_mode == ATF_FSYNC_CLOSE;
    if (sl->finalized) return;
    atf__slot_settle_links(sl, sl->index_c.pos);
    if (sl->link_len) atf__slot_cut_detail(sl, &sl->links[sl->link_head]); /* never indexed */
    atf__file_writer_finalize(&sl->detail_file, 0, sync, &sl->error);
    atf__file_writer_finalize(&sl->index_file, sl->detail_file.count > 0, sync, &sl->error);
    if (sync) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/thread_%u", s->dir, sl->slot);
        atf__dir_sync(dir);
    }
    ATF_FREE(sl->links);
    sl->links = NULL;
    sl->link_len = sl->link_cap = sl->link_head = 0;
    if (sl->index_raw) { /* the ring memory is ours: nobody produces into it any more */
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        sl->index_raw = sl->detail_raw = NULL;
    }
    sl->finalized = 1;
    atf__session_lock(s);
    s->manifest_dirty = 1;
    atf__session_unlock(s);
}

/* One slot: detail first (up to the index head read now), then the index events. */
ATF__PRIVATE uint64_t atf__slot_drain(atf_session *s, atf__slot *sl, uint64_t horizon, int all,
                                      int final) {
    int closed = atf__load_acquire_u64(&sl->index_c.shared->closed) != 0;
    uint64_t head = atf__load_acquire_u64(&sl->index_c.shared->head), moved = 0;
    if (head - sl->index_c.pos > sl->index_c.mask + 1) { /* impossible from a sane producer */
        atf__error_set_values(&sl->error, ATF_E_CORRUPT, sl->index_file.path, 0,
                              "index ring head beyond capacity", sl->index_c.mask + 1,
                              head - sl->index_c.pos);
        atf__slot_finalize(s, sl);
        return 0;
    }
    final = final || closed; /* closed was read first: head is the last one */
    if (sl->has_detail_ring) moved += atf__slot_drain_detail(s, sl, head, horizon, final);
    moved += atf__slot_drain_index(s, sl, head, all || final);
    sl->ring_dropped = atf__load_acquire_u64(&sl->index_c.shared->dropped);
    if (sl->has_detail_ring)
        sl->ring_detail_dropped = atf__load_acquire_u64(&sl->detail_c.shared->dropped);
    if (closed) atf__slot_finalize(s, sl);
    return moved;
}

/* One pass over every slot. Returns how many records moved. */
ATF__PRIVATE uint64_t atf__session_drain(atf_session *s, int all, int final) {
    uint64_t horizon, moved = 0, count, i;
    atf__mutex_lock(&s->drain_lock);
    atf__session_lock(s);
    /* a trigger registered after this point names a time t >= now - slack, so it cannot
     * reach records older than now - slack - pre_roll: those can be released */
    horizon = atf_now_ns();
    horizon = horizon > s->cfg.pre_roll_ns + ATF__TRIGGER_SLACK_NS
                  ? horizon - s->cfg.pre_roll_ns - ATF__TRIGGER_SLACK_NS : 0;
    if (s->drain_window_gen != s->window_gen && !s->drain_windows) /* the drain's own copy */
        s->drain_windows = (atf__window *)ATF_MALLOC((ATF__MAX_WINDOWS + 1) * sizeof(atf__window));
    if (s->drain_window_gen != s->window_gen && s->drain_windows) {
        memcpy(s->drain_windows, s->windows, s->window_count * sizeof *s->windows);
        s->drain_window_count = s->window_count;
        s->drain_window_gen = s->window_gen;
    }
    atf__session_unlock(s);
    count = atf__load_acquire_u64(&s->slot_count);
    for (i = 0; i < count; i++) {
        atf__slot *sl = s->slots[i];
        if (sl->finalized) continue;
        moved += atf__slot_drain(s, sl, horizon, all, final);
        if (sl->error.code != ATF_OK && !sl->error_reported) {
            atf__session_fail(s, &sl->error);
            sl->error_reported = 1;
        }
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
    out->finalized = sl->finalized;
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

/* Length (1-4) of the well-formed UTF-8 sequence at s, 0 when it is not one. Reads past
 * s[0] only while the bytes so far are valid, so never past the terminating NUL. */
ATF__PRIVATE size_t atf__utf8_len(const unsigned char *s) {
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
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

/* A JSON string with everything escaped that needs it: quote, backslash, control
 * characters (\b \f \n \r \t or \u00XX) and DEL; well-formed UTF-8 passes through as is,
 * and a byte that is not part of it becomes U+FFFD, so the file is always valid JSON. */
ATF__PRIVATE void atf__text_json(atf__text *t, const char *str) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    atf__text_add(t, "\"", 1);
    while (*s) {
        unsigned char c = *s;
        size_t n = atf__utf8_len(s);
        char esc[6] = {'\\', 'u', '0', '0', 0, 0};
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

ATF__PRIVATE void atf__manifest_threads(atf_session *s, atf__text *t, uint64_t *t0, uint64_t *t1,
                                        uint64_t *dropped_total) {
    uint64_t i, count = atf__load_acquire_u64(&s->slot_count);
    int have_time = 0;
    atf__text_str(t, ",\"threads\":[");
    for (i = 0; i < count; i++) {
        atf_thread_stats st;
        atf__slot *sl = s->slots[i];
        atf__slot_stats(sl, &st);
        if (st.events_written) {
            if (!have_time || sl->index_file.time_start < *t0) *t0 = sl->index_file.time_start;
            if (!have_time || sl->index_file.time_end > *t1) *t1 = sl->index_file.time_end;
            have_time = 1;
        }
        *dropped_total += st.events_dropped;
        atf__text_str(t, i ? ",{\"id\":" : "{\"id\":");
        atf__text_u64(t, i);
        atf__text_str(t, st.detail_written ? ",\"has_detail\":true" : ",\"has_detail\":false");
        atf__text_key_u64(t, "os_thread_id", st.thread_id);
        atf__text_key_str(t, "name", sl->name);
        atf__text_key_u64(t, "events_written", st.events_written);
        atf__text_key_u64(t, "events_dropped", st.events_dropped);
        atf__text_key_u64(t, "detail_written", st.detail_written);
        atf__text_key_u64(t, "detail_dropped", st.detail_dropped);
        atf__text_key_u64(t, "events_lost_io", st.events_lost_io);
        atf__text_str(t, st.finalized ? ",\"finalized\":true}" : ",\"finalized\":false}");
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
        atf__text_str(t, ",\"value\":");
        atf__text_double(t, a->value);
        atf__text_str(t, ",\"rate\":");
        atf__text_double(t, a->rate);
        atf__text_str(t, "}");
    }
    atf__text_str(t, "]");
}

/* Writes manifest.json.tmp and renames it over manifest.json, so that readers (and a
 * crash) only ever see a whole manifest. Caller holds s->lock (or is alone). */
ATF__PRIVATE atf_result atf__manifest_write(atf_session *s, int closed) {
    atf__text t = {NULL, 0, 0, 0};
    char path[1100], tmp[1100], buf[800];
    uint64_t t0 = 0, t1 = 0, dropped = 0;
    atf__fd fd;
    atf_result rc = ATF_OK;
    int sync = closed && s->cfg.fsync_mode == ATF_FSYNC_CLOSE;
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
    if (s->error.code != ATF_OK) {
        atf__text_key_str(&t, "error", atf_error_format(&s->error, buf, sizeof buf));
        atf__text_key_u64(&t, "error_errno", (uint64_t)(uint32_t)s->error.sys_errno);
    }
    atf__text_str(&t, "}\n");
    if (t.failed) {
        ATF_FREE(t.p);
        return atf__error_set(&s->error, ATF_E_NOMEM, s->dir, 0, "manifest text");
    }
    snprintf(path, sizeof path, "%s/manifest.json", s->dir);
    snprintf(tmp, sizeof tmp, "%s/manifest.json.tmp", s->dir);
    fd = atf__fd_create(tmp);
    if (fd == ATF__FD_NONE || atf__fd_pwrite(fd, t.p, t.len, 0, NULL) != 0 ||
        (sync && atf__fd_sync(fd) != 0))
        rc = atf__error_set_errno(&s->error, ATF_E_IO, tmp, "write manifest", atf__last_os_error());
    if (fd != ATF__FD_NONE) atf__fd_close(fd);
    if (rc == ATF_OK && atf__rename_replace(tmp, path) != 0)
        rc = atf__error_set_errno(&s->error, ATF_E_IO, path, "rename manifest", atf__last_os_error());
    if (rc == ATF_OK) {
        s->manifest_dirty = 0;
        if (sync) atf__dir_sync(s->dir);
    } else if (fd != ATF__FD_NONE) {
        atf__file_remove(tmp);
    }
    ATF_FREE(t.p);
    return rc;
}

/* ---- session API ------------------------------------------------------------------ */

/* Creates a slot: rings (owned, or the caller's), consumer views, thread directory and
 * index.atf. Publishes it last, so the drain never sees a half-made slot. Caller holds
 * s->lock. */
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
    atf__copy_utf8(sl->name, sizeof sl->name, name);
    if (!index_mem) {
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
        atf_ring_init(index_mem, index_size, ATF_RING_INDEX, s->cfg.index_ring_events,
                      s->cfg.layout, thread_id);
        if (detail_mem)
            atf_ring_init(detail_mem, detail_size, ATF_RING_DETAIL, s->cfg.detail_ring_bytes,
                          s->cfg.layout, thread_id);
    }
    rc = atf_writer_init(&sl->writer, index_mem, index_size, detail_mem, detail_size,
                         sl->index_raw ? s->cfg.detail_mode : (uint32_t)ATF_DETAIL_OFF);
    if (rc == ATF_OK) rc = atf_ring_attach(&sl->index_c, index_mem, index_size, 0);
    if (rc == ATF_OK && detail_mem) rc = atf_ring_attach(&sl->detail_c, detail_mem, detail_size, 0);
    if (rc == ATF_OK && !sl->index_raw &&
        (sl->index_c.pos != 0 || (detail_mem && sl->detail_c.pos != 0)))
        rc = ATF_E_STATE; /* positions would not match file positions */
    if (rc == ATF_OK) {
        if (!sl->index_raw) sl->thread_id = sl->index_c.shared->thread_id;
        sl->has_detail_ring = detail_mem != NULL;
        sl->writer.session = s;
        sl->writer.slot = sl->slot;
        snprintf(dir, sizeof dir, "%s/thread_%u", s->dir, sl->slot);
        if (atf__mkdir(dir) < 0)
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

#if !defined(ATF_NO_THREADS)
ATF__PRIVATE void atf__drain_main(void *arg) {
    atf_session *s = (atf_session *)arg;
    uint32_t sleep_us = 50, cycle = 0;
    uint64_t last_manifest = atf_now_ns(), moved_since = 0;
    atf__tls_no_attach = 1; /* the drain is never a traced thread */
    while (!atf__load_acquire_u64(&s->stop)) {
        uint64_t moved = atf__session_drain(s, (++cycle & 15u) == 0, 0), now;
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
            atf__mutex_lock(&s->drain_lock);
            atf__session_lock(s);
            if (s->manifest_dirty || (moved_since && now - last_manifest > 1000000000u)) {
                atf__manifest_write(s, 0);
                moved_since = 0;
                last_manifest = now;
            }
            atf__session_unlock(s);
            atf__mutex_unlock(&s->drain_lock);
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
        ATF_FREE(sl->index_raw);
        ATF_FREE(sl->detail_raw);
        ATF_FREE(sl);
    }
    for (i = 0; i < s->module_count; i++) ATF_FREE(s->modules[i].path);
    for (i = 0; i < s->symbol_count; i++) ATF_FREE(s->symbols[i].name);
    ATF_FREE(s->modules);
    ATF_FREE(s->symbols);
    ATF_FREE(s->anchors);
    ATF_FREE(s->windows);
    ATF_FREE(s->drain_windows);
    ATF_FREE(s->slots);
    ATF_FREE(s->stage);
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

/* Creates <root>/<name>/pid_<pid>; when that exists already (another session of this
 * process in the same second), tries <name>_1, <name>_2, ... so no file is overwritten. */
ATF__PRIVATE atf_result atf__session_make_dirs(atf_session *s, const char *root, const char *name) {
    char base[256];
    unsigned k;
    if (name) atf__copy_str(base, sizeof base, name);
    else atf__local_time_name(base, sizeof base);
    if (atf__mkdir_all(root) != 0)
        return atf__error_set_errno(&s->error, ATF_E_IO, root, "mkdir root", atf__last_os_error());
    for (k = 0; k < 1000; k++) {
        int made, n = k ? snprintf(s->dir, sizeof s->dir, "%s/%s_%u", root, base, k)
                        : snprintf(s->dir, sizeof s->dir, "%s/%s", root, base);
        if (n < 0 || (size_t)n + 24 >= sizeof s->dir)
            return atf__error_set(&s->error, ATF_E_ARG, root, 0, "session path too long");
        if (atf__mkdir(s->dir) < 0)
            return atf__error_set_errno(&s->error, ATF_E_IO, s->dir, "mkdir session", atf__last_os_error());
        snprintf(s->dir + n, sizeof s->dir - (size_t)n, "/pid_%u", atf__os_pid());
        made = atf__mkdir(s->dir);
        if (made == 0) return ATF_OK;
        if (made < 0)
            return atf__error_set_errno(&s->error, ATF_E_IO, s->dir, "mkdir pid", atf__last_os_error());
    }
    return atf__error_set(&s->error, ATF_E_IO, s->dir, 0, "no free session directory name");
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_open(atf_session **out, const char *root,
                                                     const atf_session_config *cfg) {
    atf_session *s;
    atf_result rc;
    if (!out) return ATF_E_ARG;
    *out = NULL;
    if (!root || (cfg && (cfg->layout > ATF_LAYOUT_2 || cfg->detail_mode > ATF_DETAIL_WINDOWED ||
                          cfg->drain_mode > ATF_DRAIN_MANUAL || cfg->fsync_mode > ATF_FSYNC_CLOSE ||
                          cfg->index_ring_events > ATF__RING_MAX_CAPACITY ||
                          cfg->detail_ring_bytes > ATF__RING_MAX_CAPACITY)))
        return ATF_E_ARG;
#if defined(ATF_NO_THREADS)
    if (!cfg || cfg->drain_mode == ATF_DRAIN_THREAD) return ATF_E_UNSUPPORTED;
#endif
    s = (atf_session *)ATF_MALLOC(sizeof *s);
    if (!s) return ATF_E_NOMEM;
    memset(s, 0, sizeof *s);
    if (cfg) s->cfg = *cfg;
    s->cfg.session_name = NULL; /* used only while opening */
    atf__session_defaults(&s->cfg);
    s->id = atf__next_session_id();
    atf__mutex_init(&s->lock);
    atf__mutex_init(&s->drain_lock);
    s->slots = (atf__slot **)ATF_MALLOC(s->cfg.max_threads * sizeof *s->slots);
    if (!s->slots) {
        atf__session_free(s);
        return ATF_E_NOMEM;
    }
    rc = atf__session_make_dirs(s, root, cfg ? cfg->session_name : NULL);
    if (rc == ATF_OK)
        rc = atf_session_add_anchor(s, "wall_clock_ns", atf_now_ns(), (double)atf_wall_ns(), 1e9);
    if (rc == ATF_OK) rc = atf__manifest_write(s, 0);
    if (rc == ATF_OK) {
        atf__global_lock();
        s->live_next = atf__live_sessions;
        atf__live_sessions = s;
        atf__global_unlock();
    }
#if !defined(ATF_NO_THREADS)
    if (rc == ATF_OK && s->cfg.drain_mode == ATF_DRAIN_THREAD) {
        s->drain_ctx.fn = atf__drain_main;
        s->drain_ctx.arg = s;
        if (atf__thread_start(&s->drain_thread, &s->drain_ctx) != 0) {
            atf_session_close(s);
            return ATF_E_IO;
        }
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
        if (!s->slots[i]->finalized) atf__writer_close_rings(&s->slots[i]->writer);
    atf__session_drain(s, 1, 1);
    for (i = 0; i < count; i++) {
        atf__slot_finalize(s, s->slots[i]);
        atf__error_adopt(&s->error, &s->slots[i]->error);
    }
    atf__manifest_write(s, 1);
    if (error_out) *error_out = s->error;
    rc = s->error.code;
    atf__session_free(s);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_close(atf_session *s) {
    return atf_session_close_ex(s, NULL);
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_attach(atf_session *s, const char *name,
                                                       atf_writer **out) {
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
    atf__session_lock(s);
    rc = atf__session_add_slot(s, NULL, 0, NULL, 0, name, atf__os_thread_id(), &sl);
    if (rc != ATF_OK) s->attach_failures++;
    atf__session_unlock(s);
    if (rc != ATF_OK) return rc;
    e->writer = &sl->writer;
    if (out) *out = e->writer;
    return ATF_OK;
}

ATF__PRIVATE atf_writer *atf__session_writer_slow(atf_session *s) {
    atf__tls_entry *e = atf__tls_find(s->id);
    atf_writer *w = NULL;
    if (e) return e->writer;
    if (atf__tls_no_attach) return NULL;
    atf_session_attach(s, NULL, &w); /* on failure the entry stays, with no writer */
    return w;
}

ATFDEF ATF_NO_INSTRUMENT atf_writer *atf_session_writer(atf_session *s) {
    atf__tls_entry *e = atf__tls_list;
    if (e && e->session_id == s->id) return e->writer;
    return atf__session_writer_slow(s);
}

ATFDEF ATF_NO_INSTRUMENT void atf_session_detach(atf_session *s) {
    atf__tls_entry *e = s ? atf__tls_find(s->id) : NULL;
    if (!e || !e->writer) return;
    atf__writer_close_rings(e->writer);
    e->writer = NULL;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_attach_rings(atf_session *s, void *index_mem,
                                                             size_t index_size, void *detail_mem,
                                                             size_t detail_size, const char *name,
                                                             uint32_t *slot_out) {
    atf__slot *sl = NULL;
    atf_result rc;
    if (!s || !index_mem) return ATF_E_ARG;
    atf__session_lock(s);
    rc = atf__session_add_slot(s, index_mem, index_size, detail_mem, detail_size, name, 0, &sl);
    atf__session_unlock(s);
    if (rc == ATF_OK && slot_out) *slot_out = sl->slot;
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_pump(atf_session *s) {
    atf_result rc;
    if (!s) return ATF_E_ARG;
    atf__session_drain(s, 1, 0);
    atf__mutex_lock(&s->drain_lock);
    atf__session_lock(s);
    if (s->manifest_dirty) atf__manifest_write(s, 0);
    rc = s->error.code;
    atf__session_unlock(s);
    atf__mutex_unlock(&s->drain_lock);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT void atf_session_trigger(atf_session *s, uint64_t t_ns) {
    uint64_t lo = t_ns > s->cfg.pre_roll_ns ? t_ns - s->cfg.pre_roll_ns : 0;
    uint64_t hi = t_ns + s->cfg.post_roll_ns < t_ns ? UINT64_MAX : t_ns + s->cfg.post_roll_ns;
    size_t bytes = (ATF__MAX_WINDOWS + 1) * sizeof(atf__window);
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

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_module(atf_session *s, uint32_t module_id,
                                                           const char *path, uint64_t base_address,
                                                           uint64_t size) {
    atf__module *m;
    char *copy = atf__strdup(path);
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
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
    atf__session_unlock(s);
    ATF_FREE(copy);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_symbol(atf_session *s, uint64_t function_id,
                                                           const char *name) {
    char *copy = atf__strdup(name);
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
    if (copy && atf__grow((void **)&s->symbols, &s->symbol_cap, s->symbol_count, sizeof *s->symbols)) {
        s->symbols[s->symbol_count].function_id = function_id;
        s->symbols[s->symbol_count++].name = copy;
        s->manifest_dirty = 1;
        copy = NULL;
        rc = ATF_OK;
    }
    atf__session_unlock(s);
    ATF_FREE(copy);
    return rc;
}

ATFDEF ATF_NO_INSTRUMENT atf_result atf_session_add_anchor(atf_session *s, const char *name,
                                                           uint64_t host_ns, double value,
                                                           double rate) {
    atf_result rc = ATF_E_NOMEM;
    atf__session_lock(s);
    if (atf__grow((void **)&s->anchors, &s->anchor_cap, s->anchor_count, sizeof *s->anchors)) {
        atf__anchor *a = &s->anchors[s->anchor_count++];
        atf__copy_utf8(a->name, sizeof a->name, name);
        a->host_ns = host_ns;
        a->value = value;
        a->rate = rate;
        s->manifest_dirty = 1;
        rc = ATF_OK;
    }
    atf__session_unlock(s);
    return rc;
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
