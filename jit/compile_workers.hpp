// Compiles in helper processes, so that no kernel text can crash, abort or
// stall the host.
//
// Why a process: a compile that overflows clang's stack (a 300,000-term
// expression), exhausts memory (a preprocessor token bomb: LLVM's allocator
// then aborts the process) or never ends (a 21 MB source) cannot be stopped
// safely from inside the process that runs it. LLVM's CrashRecoveryContext
// turns some crashes into errors, but installs process-wide signal handlers,
// leaves LLVM's state (its option registry, locks held mid-compile) as the
// crash left it, and can neither stop a runaway compile nor survive an
// out-of-memory abort. A process can be limited (RLIMIT_AS), killed at the
// time limit and replaced, and the host only ever sees a reply or a death.
//
// The worker is kiln-compile-worker, found beside the compiler module (the
// build tree's jit/, or <libdir>/kiln/ installed). It loads the module once
// and serves compiles until it has been idle for a minute, so a process pays
// its start (~the module's load, which an in-process compile paid too) once,
// not per compile.
//
// Threads: one worker per compile in flight. A compile takes an idle worker
// from the pool, or starts one, and gives it back when it answers; so threads
// compile in parallel as before (Runtime::kernels' build threads, bounded by
// the build slots), and a worker serves one compile at a time. A worker that
// crashed, ran out of memory or was stopped at the time limit is never reused.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jit/compiler_module.hpp"

namespace kiln::jit {

struct CompileLimits {
  std::chrono::milliseconds timeout{0};  // from request to reply; 0: none
  std::uint64_t memory = 0;              // the worker's address space (RLIMIT_AS) while it compiles; 0: none
};

// What a worker reports when it starts: the compiler as the module describes it.
struct CompilerInfo {
  std::string identity;
  std::string host_cpu;
  std::string host_features;
};

struct CompileWorkerPaths {
  std::filesystem::path worker;        // kiln-compile-worker
  std::filesystem::path module;        // libkiln_clang.so, which it loads
  std::filesystem::path resource_dir;  // clang's resource folder
};

struct CompileWorkerOptions {
  // From starting a worker to its hello (loading clang and LLVM: ~20 ms warm,
  // seconds from a cold network file system).
  std::chrono::milliseconds start_limit{120'000};
  // A worker idle this long ends itself, giving its memory back; the pool
  // replaces, rather than reuses, one idle for half of it.
  std::chrono::milliseconds idle_limit{60'000};
};

class CompileWorkers {
 public:
  CompileWorkers(CompileWorkerPaths paths, CompileWorkerOptions options = {});
  ~CompileWorkers();  // stops the idle workers
  CompileWorkers(const CompileWorkers&) = delete;
  CompileWorkers& operator=(const CompileWorkers&) = delete;

  // Thread-safe. Never throws for what a compile does: a crash, an exhausted
  // memory limit or the time limit come back as output.failure with
  // diagnostics naming the cause (the signal, the limit, the seconds), and a
  // worker that cannot be started or does not follow the protocol as
  // CompileFailure::toolchain. Starts a worker when none is idle.
  CompileOutput compile(const CompileInput& input, const CompileLimits& limits);

  // What the first worker said when it started (starting one if none has).
  // Fails naming the worker and the cause when none starts.
  base::Result<CompilerInfo> info();

  const CompileWorkerPaths& paths() const { return paths_; }
  // The idle workers' process ids, most recently used last (for tests).
  std::vector<pid_t> idle_workers();

  struct Worker;  // compile_workers.cpp

 private:
  std::unique_ptr<Worker> take(std::string& error);
  void give_back(std::unique_ptr<Worker> worker);

  const CompileWorkerPaths paths_;
  const CompileWorkerOptions options_;
  std::mutex mutex_;
  pid_t owner_ = 0;  // the process the idle workers belong to (a forked child starts its own)
  std::vector<std::unique_ptr<Worker>> idle_;
  std::optional<CompilerInfo> info_;
};

// kiln-compile-worker beside the compiler module at `module_path`.
std::filesystem::path compile_worker_path(const std::filesystem::path& module_path);

// The process's pool for the default module (default_compiler_module_path())
// and resource folder (clang_resource_dir()), made on first use and kept for
// the process's life: its workers end with it (their socket closes) or after
// their idle limit (then stay zombies until the next compile reaps them).
// Fails when the resource folder is bad (and tries again on the next call).
base::Result<CompileWorkers*> default_compile_workers();

}  // namespace kiln::jit
