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
 *   7. readers          index, detail and thread readers over mmap: O(1) access, both-way links
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

/* ==== 7. readers ===================================================================== */
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

/* >>bytes: every on-disk integer goes through these, whatever the host's byte order.
 * Byte-wise shifts compile to single loads/stores on little-endian hosts and to correct
 * swaps on big-endian ones, with no alignment or aliasing assumptions. */
ATF__PRIVATE uint16_t atf__load_le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
ATF__PRIVATE uint32_t atf__load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
ATF__PRIVATE uint64_t atf__load_le64(const uint8_t *p) {
    return (uint64_t)atf__load_le32(p) | ((uint64_t)atf__load_le32(p + 4) << 32);
}
ATF__PRIVATE void atf__store_le16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
ATF__PRIVATE void atf__store_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
ATF__PRIVATE void atf__store_le64(uint8_t *p, uint64_t v) {
    atf__store_le32(p, (uint32_t)v);
    atf__store_le32(p + 4, (uint32_t)(v >> 32));
}

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
