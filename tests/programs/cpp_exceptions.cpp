// cpp_exceptions.cpp - C++ exceptions through instrumented frames, in several threads, for
// the tracer's checks (tests/cpp_checks.sh): every frame an exception leaves must end with
// an exception event, every other frame with a return. The program counts the frames its
// exceptions leave itself (a Tally in each frame that may be left sees, as it is
// destroyed, whether an exception is passing: std::uncaught_exceptions()), and prints
// the count, so a check compares it with the trace's exception events exactly.
//   - THREADS workers (std::thread) each call guarded() ROUNDS times: guarded catches what
//     relay -> dive x (2..8) throws, and goes on (its own exit is a return);
//   - the deepest dive throws itself, or calls raise_plain (not instrumented) to throw;
//   - every other relay catches with catch (...) and rethrows (throw;): it is left too;
//   - a Sentry destroyed while an exception passes (its destructor's own call returns)
//     sometimes throws and catches a second exception inside its destructor
//     (quiet_throw -> quiet_dive x3), while the first one waits;
//   - each worker keeps one exception as a std::exception_ptr (capture), which the main
//     thread rethrows (std::rethrow_exception, in replay) and catches;
// Usage: cpp_exceptions [THREADS [ROUNDS]] (default 4 500); the exit status is 3, for the
// check that it passes through `atf record`.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

struct Boom {
    int code;
};

static std::atomic<long> g_left{0};     // frames left by an exception (Tally)
static std::atomic<long> g_caught{0};   // exceptions caught by guarded and main
static std::atomic<long> g_rethrown{0}; // rethrown by relay
static std::atomic<long> g_nested{0};   // thrown and caught inside a destructor
static std::atomic<long> g_sink{0};

// In each function an exception may leave: counts the frame when one does.
struct Tally {
    int before = std::uncaught_exceptions();
    ~Tally() {
        if (std::uncaught_exceptions() > before) g_left++;
    }
};

// Not instrumented: the exception starts in a frame the tracer does not see.
[[noreturn]] __attribute__((no_instrument_function, noinline)) static void raise_plain(int code) {
    throw Boom{code};
}

__attribute__((noinline)) static void quiet_dive(int k) {
    Tally tally;
    if (k > 0) quiet_dive(k - 1);
    else if (k == 0) raise_plain(-1);
    g_sink++;
}

// Throws through three frames and catches, inside a destructor that runs while another
// exception passes: it returns.
__attribute__((noinline)) static void quiet_throw() {
    try {
        quiet_dive(2);
    } catch (const Boom &) {
        g_nested++;
    }
}

struct Sentry {
    bool nest;
    ~Sentry() {
        if (nest && std::uncaught_exceptions() > 0) quiet_throw();
    }
};

__attribute__((noinline)) static long dive(int k, int n) {
    Tally tally;
    Sentry sentry{k == 1 && n % 4 == 0};
    if (k == 0) {
        if (n % 3 == 0) raise_plain(n);
        throw Boom{n};
    }
    return dive(k - 1, n) + 1;
}

static int depth_of(int n) { return 1 + n % 7; } // dive(k) .. dive(0): 2 to 8 frames

__attribute__((noinline)) static long relay(int n) {
    Tally tally;
    if (n % 2) {
        try {
            return dive(depth_of(n), n);
        } catch (...) {
            g_rethrown++;
            throw;
        }
    }
    return dive(depth_of(n), n);
}

// The catching frame: it goes on after the catch.
__attribute__((noinline)) static long guarded(int n) {
    long r = 0;
    try {
        r = relay(n);
    } catch (const Boom &b) {
        g_caught++;
        r = b.code;
    }
    return r + 1;
}

__attribute__((noinline)) static std::exception_ptr capture(int n) {
    try {
        dive(2, n);
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

__attribute__((noinline)) static void replay(std::exception_ptr p) {
    Tally tally;
    std::rethrow_exception(p);
}

static void worker(int id, int rounds, std::exception_ptr *kept) {
    long sum = 0;
    for (int i = 0; i < rounds; i++) sum += guarded(id * rounds + i);
    *kept = capture(id + 1);
    g_sink += sum;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 500;
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> kept((size_t)threads);
    for (int i = 0; i < threads; i++) pool.emplace_back(worker, i, rounds, &kept[(size_t)i]);
    for (auto &t : pool) t.join();
    for (auto &p : kept) { // exceptions of other threads, rethrown here
        try {
            replay(p);
        } catch (const Boom &) {
            g_caught++;
        }
    }
    printf("cpp_exceptions: %d threads, %ld caught, %ld rethrown, %ld nested, "
           "%ld frames left by exceptions\n",
           threads, g_caught.load(), g_rethrown.load(), g_nested.load(), g_left.load());
    return 3;
}
