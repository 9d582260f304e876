// cpp_plugin.cpp - a C++ library that a C program loads with dlopen(RTLD_LOCAL)
// (cpp_host.c): its C++ runtime is then out of the global scope, where the tracer's
// interposed catch must still find the runtime's own (tests/cpp_checks.sh).
struct Fault {
    int code;
};

__attribute__((noinline)) static int deep(int k) {
    if (k == 0) throw Fault{k + 7};
    return deep(k - 1) + 1;
}

// Throws through k + 1 frames of deep and catches: returns 7.
extern "C" int plugin_run(int k) {
    try {
        return deep(k);
    } catch (const Fault &f) {
        return f.code;
    }
}
