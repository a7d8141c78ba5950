// kiln_bench_llvm_process: what a process that loads its kernels through LLVM
// ORC pays once, before its first kernel, and a warm kiln process never pays:
// mapping libLLVM. dlopen of the library kiln_bench links (KILN_BENCH_LIBLLVM),
// with lazy binding, as the dynamic loader maps it at start-up for a program
// linked against it. Does not link LLVM itself. Prints the milliseconds taken.
#include <dlfcn.h>
#include <time.h>

#include <cstdio>

namespace {

double monotonic_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

}  // namespace

int main() {
  const double start = monotonic_ms();
  void* llvm = dlopen(KILN_BENCH_LIBLLVM, RTLD_LAZY | RTLD_LOCAL);
  const double taken = monotonic_ms() - start;
  if (llvm == nullptr) {
    std::fprintf(stderr, "kiln_bench_llvm_process: %s\n", dlerror());
    return 1;
  }
  std::printf("%.4f\n", taken);
  return 0;
}
