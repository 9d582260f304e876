/* gen_model.h - the event content of `atf gen`: what thread slot k produces for a seed, a
 * number of events and a detail setting. tools/gen_cmd.c records it; tests/crash_trials.c
 * regenerates it to check what reached the disk. Everything but the timestamps is here.
 * SPDX-License-Identifier: MIT
 *
 * Event i of a thread: a call while the stack is empty, a return when the events left are
 * just enough to close the open calls, otherwise a call or a return at random. With detail
 * on, every detail_every-th event (i % detail_every == 0) carries an encoded
 * atf_detail_payload: the registers and a GEN_STACK_WINDOW-byte stack window. The random
 * draws are taken whether or not the writer keeps the event, so the content of event i
 * never depends on what was dropped. Include after atf.h. */
#ifndef ATF_TOOLS_GEN_MODEL_H
#define ATF_TOOLS_GEN_MODEL_H

#include "atf.h"

#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define GEN_UNUSED __attribute__((unused))
#else
#  define GEN_UNUSED
#endif

#define GEN_FUNCTIONS 8
#define GEN_MAX_DEPTH 64
#define GEN_STACK_WINDOW 32          /* bytes of stack in each detail payload */

static const char *const gen_function_names[GEN_FUNCTIONS] = {
    "gen_main", "gen_parse", "gen_lookup", "gen_alloc",
    "gen_hash", "gen_compare", "gen_write", "gen_flush",
};

/* function_id of function j: module 0 (the main executable), symbol index j + 1. */
static GEN_UNUSED uint64_t gen_function_id(unsigned j) { return (uint64_t)(j + 1u); }

/* splitmix64: seeds the per-thread generator; xorshift64* then draws. */
static GEN_UNUSED uint64_t gen_splitmix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static GEN_UNUSED uint64_t gen_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* The state of one thread's sequence. */
typedef struct gen_model {
    uint64_t rng;
    uint64_t events;                 /* events in the whole sequence */
    uint64_t detail_every;           /* 0: no detail */
    uint64_t i;                      /* events generated so far */
    uint64_t stack[GEN_MAX_DEPTH];
    unsigned depth;
} gen_model;

/* One event. `depth` is the call depth the writer records with it (layout 1): a call's
 * depth before it, a return's after it. The payload is set only when has_detail is. */
typedef struct gen_event {
    uint64_t function_id;
    int call;                        /* 1 call, 0 return */
    uint32_t depth;
    int has_detail;
    size_t payload_len;
    uint8_t payload[ATF_DETAIL_PAYLOAD_SIZE + GEN_STACK_WINDOW];
} gen_event;

/* The sequence of slot `slot` for `seed`: `events` events, detail on every
 * detail_every-th (0 = detail off). */
static GEN_UNUSED void gen_model_init(gen_model *m, uint64_t seed, uint32_t slot, uint64_t events,
                                      uint64_t detail_every) {
    memset(m, 0, sizeof *m);
    m->rng = gen_splitmix(seed ^ gen_splitmix((uint64_t)slot + 1u));
    if (m->rng == 0) m->rng = 1;     /* xorshift's one fixed point */
    m->events = events;
    m->detail_every = detail_every;
}

/* The next event into *ev: 1, or 0 once the sequence is over. */
static GEN_UNUSED int gen_model_next(gen_model *m, gen_event *ev) {
    uint64_t left, r;
    if (m->i >= m->events) return 0;
    left = m->events - m->i;
    r = gen_next(&m->rng);
    if (m->depth == 0) ev->call = 1;
    else if (m->depth + 2u > left || m->depth == GEN_MAX_DEPTH) ev->call = 0;
    else ev->call = (int)(r & 1u);
    if (ev->call) {
        ev->function_id = gen_function_id((unsigned)(r >> 8) % GEN_FUNCTIONS);
        ev->depth = m->depth;
        m->stack[m->depth++] = ev->function_id;
    } else {
        ev->function_id = m->stack[--m->depth];
        ev->depth = m->depth;
    }
    ev->has_detail = m->detail_every && m->i % m->detail_every == 0;
    ev->payload_len = 0;
    if (ev->has_detail) {
        atf_detail_payload p;
        uint8_t window[GEN_STACK_WINDOW];
        size_t k;
        memset(&p, 0, sizeof p);
        p.function_id = ev->function_id;
        for (k = 0; k < 8; k++) p.x[k] = gen_next(&m->rng);
        p.lr = 0x100000000ull + ev->function_id * 0x40u + (r & 0x3Fu);
        p.fp = 0x7ff000000000ull - (uint64_t)m->depth * 0x40u;
        p.sp = p.fp - GEN_STACK_WINDOW;
        for (k = 0; k < GEN_STACK_WINDOW; k += 8) {
            uint64_t v = gen_next(&m->rng);
            memcpy(window + k, &v, 8);  /* content only: byte order does not matter */
        }
        p.stack_size = GEN_STACK_WINDOW;
        p.stack = window;
        ev->payload_len = atf_detail_payload_encode(&p, ev->payload, sizeof ev->payload);
    }
    m->i++;
    return 1;
}

#endif
