// names.cpp - C++ names for the demangling checks (tests/demangle_checks.sh): a namespace,
// a class template and a function template with two instances each, an operator<, an
// operator[] and an operator(), a conversion operator, an anonymous namespace, a lambda, a
// function template returning a function pointer, one whose name carries an ABI tag
// ([abi:cxx11]), a member of a local class. One thread, no exceptions; every call count
// below is fixed:
//   main 1, work::eval 3 (1 overload taking a vector, called 2 times, and 1 taking an int),
//   work::sum<int> 2, work::sum<double> 2, work::Grid<int>::operator[] 8 and
//   work::Grid<double>::operator[] 8 (4 per sum call), work::Grid<int>::operator() 1,
//   work::operator< 3, work::Pt::operator bool 3, (anonymous namespace)::helper 2,
//   main::{lambda(int)#1}::operator() 2, work::pick<int> 1, work::twice 1, work::label 1,
//   work::outer 1, work::outer(int)::Local::run 1.
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace work {

struct Pt {
    int x, y;
    NOINLINE explicit operator bool() const { return x != 0 || y != 0; }
};

NOINLINE bool operator<(const Pt &a, const Pt &b) {
    return a.x < b.x || (a.x == b.x && a.y < b.y);
}

template <typename T> class Grid {
public:
    explicit Grid(std::size_t n) : cells(n) {
        for (std::size_t i = 0; i < n; i++) cells[i] = static_cast<T>(i);
    }
    NOINLINE T &operator[](std::size_t i) { return cells[i % cells.size()]; }
    NOINLINE T operator()(std::size_t i, std::size_t j) const { return cells[(i * 7 + j) % cells.size()]; }

private:
    std::vector<T> cells;
};

template <typename T> NOINLINE T sum(Grid<T> &g) {
    T s = 0;
    for (std::size_t i = 0; i < 4; i++) s += g[i];
    return s;
}

NOINLINE long eval(const std::vector<int> &v, unsigned long &acc, int k) {
    Grid<int> gi(5);
    Grid<double> gd(3);
    acc += static_cast<unsigned long>(sum(gi)) + static_cast<unsigned long>(sum(gd));
    return static_cast<long>(v.size()) * k;
}

NOINLINE long eval(int k) { return k * 3; }

NOINLINE int twice(int x) { return 2 * x; }

// a template: its symbol carries its return type, a function pointer
template <typename T> NOINLINE T (*pick(int which))(T) { return which ? twice : nullptr; }

NOINLINE std::string label(int n) { return std::string(static_cast<std::size_t>(n), 'x'); }

NOINLINE int outer(int n) {
    struct Local {
        NOINLINE int run(int m) { return m + 1; }
    };
    Local l;
    return l.run(n);
}

} // namespace work

namespace {
NOINLINE int helper(int x) { return x ^ 0x5a; }
} // namespace

int main() {
    std::vector<int> v(4, 1);
    unsigned long acc = 0;
    work::Pt a{1, 2}, b{1, 3}, c{0, 0};
    int n = 0;
    auto bump = [&n](int by) NOINLINE { n += by; };
    acc += static_cast<unsigned long>(work::eval(v, acc, 2) + work::eval(v, acc, 3) + work::eval(4));
    n += work::operator<(a, b) + work::operator<(b, a) + work::operator<(c, a);
    n += static_cast<bool>(a) + static_cast<bool>(b) + static_cast<bool>(c);
    n += helper(1) + helper(2);
    bump(1);
    bump(2);
    n += work::pick<int>(1)(3);
    n += static_cast<int>(work::label(3).size());
    n += work::outer(5);
    {
        work::Grid<int> g(2);
        n += g(1, 1);
    }
    std::printf("names: %lu %d\n", acc, n);
    return 0;
}
