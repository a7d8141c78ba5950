// kiln_bench_dlopen_process: the alternative's side of the whole-process
// benchmarks. Does not link libkiln (only kiln/arg.hpp, a header).
//
//   kiln_bench_dlopen_process LIB.so...
//       dlopens each shared object (RTLD_NOW | RTLD_LOCAL), dlsyms its entry and
//       calls it once, in order, on the fields of process_kernels.hpp: what a
//       program that caches g++-built kernels as .so files does on a warm start.
//   kiln_bench_dlopen_process --compile SRC.cpp OUT.so
//       first runs `g++ -O3 -march=native -shared -fPIC -o OUT.so SRC.cpp`
//       (posix_spawnp + waitpid), then as above with OUT.so: the alternative's
//       first kernel in a new process.
//
// Prints timestamps (CLOCK_MONOTONIC ns) at main, after the compile (0 when
// none) and at the end, the peak RSS (with KILN_BENCH_RSS=1, else -1), then
// the fields' checksum.
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/process_kernels.hpp"

extern char** environ;

namespace {

using EntryFn = int (*)(const kiln_arg* const*, const kiln_value*, const kiln_context*);

int compile(const char* source, const char* output) {
  const char* argv[] = {"g++", "-O3", "-march=native", "-shared", "-fPIC", "-o", output, source, nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "g++", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) {
    std::fprintf(stderr, "kiln_bench_dlopen_process: cannot start g++\n");
    return -1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "kiln_bench_dlopen_process: g++ failed on %s\n", source);
    return -1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t t_main = kiln_bench::monotonic_ns();
  std::int64_t t_compiled = 0;
  std::vector<const char*> libs;
  if (argc == 4 && std::strcmp(argv[1], "--compile") == 0) {
    if (compile(argv[2], argv[3]) != 0) return 1;
    t_compiled = kiln_bench::monotonic_ns();
    libs.push_back(argv[3]);
  } else {
    for (int i = 1; i < argc; ++i) libs.push_back(argv[i]);
  }
  if (libs.empty()) {
    std::fprintf(stderr, "usage: %s LIB.so... | --compile SRC.cpp OUT.so\n", argv[0]);
    return 2;
  }

  kiln_bench::ProcessFields fields;
  for (const char* lib : libs) {
    void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);  // kept open until the process ends, as a program would
    if (handle == nullptr) {
      std::fprintf(stderr, "kiln_bench_dlopen_process: %s\n", dlerror());
      return 1;
    }
    auto entry = reinterpret_cast<EntryFn>(dlsym(handle, kiln_bench::kAltSymbol));
    if (entry == nullptr) {
      std::fprintf(stderr, "kiln_bench_dlopen_process: %s has no %s\n", lib, kiln_bench::kAltSymbol);
      return 1;
    }
    if (const int status = entry(fields.arg_pointers, nullptr, nullptr); status != 0) {
      std::fprintf(stderr, "kiln_bench_dlopen_process: %s refused the call (status %d)\n", lib, status);
      return 1;
    }
  }
  const std::int64_t t_end = kiln_bench::monotonic_ns();
  std::printf("t_main %lld\nt_compiled %lld\nt_end %lld\npeak_rss_kb %ld\nchecksum %.17g\n", (long long)t_main,
              (long long)t_compiled, (long long)t_end, kiln_bench::peak_rss_kb(), fields.checksum());
  return 0;
}
