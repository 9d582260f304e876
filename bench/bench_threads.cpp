// bench_threads.cpp - a threaded C++ workload for `make bench-real`: THREADS std::threads
// (default 4, more than this machine's cores) each evaluate small expression trees
// recursively, through std::vector and std::map, and throw and catch an exception through
// a few frames every so often. Prints a checksum so the work cannot be optimized away.
//   bench_threads [ROUNDS] [THREADS]
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

namespace work {

struct node {
    int op, value;
    std::vector<node> kids;
};

node build(unsigned &seed, int depth) {
    node n;
    seed = seed * 1103515245u + 12345u;
    n.op = depth > 0 ? static_cast<int>(seed >> 16) % 3 : 3;
    n.value = static_cast<int>(seed >> 8) % 100;
    if (depth > 0)
        for (int k = 0; k < 2; k++) n.kids.push_back(build(seed, depth - 1));
    return n;
}

long eval(const node &n, int depth) {
    if (n.op == 3) return n.value;
    long acc = n.op == 1 ? 1 : 0;
    for (const node &k : n.kids) {
        long v = eval(k, depth + 1);
        acc = n.op == 1 ? (acc * (v % 7 + 1)) % 1000003 : acc + v;
    }
    return acc;
}

long guarded(const node &n, int frames) {
    if (frames == 0) {
        if (eval(n, 0) % 5 == 0) throw std::runtime_error("multiple of five");
        return 1;
    }
    return guarded(n, frames - 1) + 1;
}

long worker(int id, int rounds) {
    unsigned seed = 17u + static_cast<unsigned>(id);
    std::map<int, long> seen;
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
        node tree = build(seed, 8);
        sum += eval(tree, 0);
        try {
            sum += guarded(tree, r % 8);
        } catch (const std::runtime_error &) {
            sum -= 1;
        }
        seen[r % 64] += sum % 97;
    }
    for (const auto &kv : seen) sum += kv.second;
    return sum;
}

}  // namespace work

int main(int argc, char **argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
    int threads = argc > 2 ? std::atoi(argv[2]) : 4;
    std::vector<long> sums(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
        pool.emplace_back([t, rounds, &sums] { sums[static_cast<size_t>(t)] = work::worker(t, rounds); });
    for (std::thread &t : pool) t.join();
    long total = 0;
    for (long s : sums) total += s;
    std::printf("%ld\n", total);
    return 0;
}
