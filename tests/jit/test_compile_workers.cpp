// jit/compile_workers: compiles run in kiln-compile-worker processes. A
// worker is reused, one per compile in flight; a compile that crashes or
// aborts the compiler is a failure naming the signal and LLVM's last words; a
// worker that dies is replaced; and the host never waits on a worker past a
// limit, whatever the worker does (fake workers below: this executable again,
// in child-check mode, speaking the protocol wrongly on purpose).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "jit/compile_protocol.hpp"
#include "jit/compile_workers.hpp"
#include "jit/compiler_module.hpp"
#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

namespace p = protocol;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::contains;
using test::LoadedObjects;
using test::ScopedEnv;

const char* kSource = "extern \"C\" long kiln_twice(long x) { return 2 * x; }\n";
using Twice = long (*)(long);

CompileWorkerPaths real_paths() {
  const std::filesystem::path module = default_compiler_module_path();
  return {compile_worker_path(module), module, test::value_of(clang_resource_dir())};
}

CompileInput input(std::string source) { return test::host_input(std::move(source), "worker_test.cpp"); }

// Limits for compiles of the real worker, so that none can stall the suite.
// (`#pragma clang __debug overflow_stack` is one that would: Debian's clang
// compiles its recursion into an endless loop.)
const CompileLimits kLimits{.timeout = std::chrono::seconds(60), .memory = std::uint64_t{2} << 30};

// --- fake workers -------------------------------------------------------------
// Started as the worker (path /proc/self/exe, KILN_JIT_TEST_CHILD naming the
// fake), each breaks the protocol one way.

bool say_hello(const std::string& uid = std::to_string(::getuid())) {
  return p::write_frame(p::kWorkerSocketFd, p::Type::hello, {"fake compiler", "fakecpu", "+fake", uid, uid},
                        std::nullopt)
             .io == p::Io::ok;
}

void read_request() {
  p::Frame request;
  (void)p::read_frame(p::kWorkerSocketFd, request, std::nullopt);
}

[[maybe_unused]] const bool silent = test::register_child_check("worker-silent", [] {
  ::sleep(600);
  return 0;
});
[[maybe_unused]] const bool garbage = test::register_child_check("worker-garbage", [] {
  (void)!::write(p::kWorkerSocketFd, "this is not a frame header", 26);
  ::sleep(600);
  return 0;
});
[[maybe_unused]] const bool exits = test::register_child_check("worker-exits", [] {
  std::fprintf(stderr, "fake worker: cannot go on\n");
  return 7;
});
[[maybe_unused]] const bool other_user =
    test::register_child_check("worker-other-user", [] { return say_hello(std::to_string(::getuid() + 1)) ? 0 : 1; });
[[maybe_unused]] const bool hangs = test::register_child_check("worker-hangs", [] {
  if (!say_hello()) return 1;
  read_request();
  ::sleep(600);
  return 0;
});
[[maybe_unused]] const bool crashes = test::register_child_check("worker-crashes", [] {
  if (!say_hello()) return 1;
  read_request();
  const struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::raise(SIGSEGV);
  return 0;
});
[[maybe_unused]] const bool out_of_memory = test::register_child_check("worker-out-of-memory", [] {
  if (!say_hello()) return 1;
  read_request();
  return static_cast<int>(p::kExitOutOfMemory);
});

// A pool whose workers are the fake `name`.
struct FakePool {
  explicit FakePool(const char* name, CompileWorkerOptions options = {})
      : env(test::kChildVariable, name), workers({"/proc/self/exe", "unused-module", "unused-dir"}, options) {}
  ScopedEnv env;  // the worker inherits it when it is started
  CompileWorkers workers;
};

// --- the real worker -----------------------------------------------------------

TEST(CompileWorkers, WorkerLiesBesideTheCompilerModule) {
  const CompileWorkerPaths paths = real_paths();
  EXPECT_EQ(paths.worker.parent_path(), paths.module.parent_path());
  EXPECT_EQ(::access(paths.worker.c_str(), X_OK), 0) << paths.worker;
}

TEST(CompileWorkers, CompilesAndReusesOneWorker) {
  CompileWorkers workers(real_paths());
  const CompileOutput first = workers.compile(input(kSource), kLimits);
  ASSERT_TRUE(first.ok) << first.diagnostics;
  EXPECT_EQ(first.failure, CompileFailure::none);
  const std::vector<pid_t> idle = workers.idle_workers();
  ASSERT_EQ(idle.size(), 1u);
  const CompileOutput second = workers.compile(input(kSource), kLimits);
  ASSERT_TRUE(second.ok) << second.diagnostics;
  EXPECT_EQ(workers.idle_workers(), idle) << "the idle worker was not reused";
  EXPECT_EQ(first.binary, second.binary);
  LoadedObjects loaded;
  EXPECT_EQ(loaded.function<Twice>(first.binary, "kiln_twice")(21), 42);
}

TEST(CompileWorkers, GivesTheSameBinaryAndHostAsTheModuleInProcess) {
  CompileWorkers workers(real_paths());
  const CompileOutput isolated = workers.compile(input(kSource), kLimits);
  ASSERT_TRUE(isolated.ok) << isolated.diagnostics;
  const CompileOutput in_process = test::compiler().compile(input(kSource));
  ASSERT_TRUE(in_process.ok) << in_process.diagnostics;
  EXPECT_EQ(isolated.binary, in_process.binary);
  const CompilerInfo info = test::value_of(workers.info());
  EXPECT_EQ(info.identity, test::compiler().identity());
  EXPECT_EQ(info.host_cpu, test::compiler().host_cpu());
  EXPECT_EQ(info.host_features, test::compiler().host_features());
}

TEST(CompileWorkers, SourceErrorsComeBackAsDiagnostics) {
  CompileWorkers workers(real_paths());
  const CompileOutput output = workers.compile(input("int f() { return undefined_name; }\n"), kLimits);
  EXPECT_FALSE(output.ok);
  EXPECT_EQ(output.failure, CompileFailure::none);
  EXPECT_TRUE(contains(output.diagnostics, "worker_test.cpp:1:")) << output.diagnostics;
  EXPECT_EQ(workers.idle_workers().size(), 1u) << "a worker that compiled a bad source is kept";
}

TEST(CompileWorkers, ThreadsCompileAtOnceEachOnAWorkerOfItsOwn) {
  CompileWorkers workers(real_paths());
  constexpr int kThreads = 4;
  std::vector<CompileOutput> outputs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      outputs[i] = workers.compile(input("extern \"C\" long kiln_add(long x) { return x + " + std::to_string(i) +
                                         "; }\n"),
                                   kLimits);
    });
  }
  for (auto& thread : threads) thread.join();
  LoadedObjects loaded;
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(outputs[i].ok) << outputs[i].diagnostics;
    EXPECT_EQ(loaded.function<Twice>(outputs[i].binary, "kiln_add")(10), 10 + i);
  }
  // As many workers as compiles overlapped, no more; all idle now.
  const std::size_t idle = workers.idle_workers().size();
  EXPECT_GE(idle, 1u);
  EXPECT_LE(idle, static_cast<std::size_t>(kThreads));
}

// clang's own debug pragmas crash it on purpose: a kernel text can, so the
// host must survive them.
TEST(CompileWorkers, ACrashIsAFailureNamingTheSignalAndTheNextCompileWorks) {
  CompileWorkers workers(real_paths());
  const CompileOutput crashed = workers.compile(input("#pragma clang __debug crash\n"), kLimits);
  EXPECT_FALSE(crashed.ok);
  EXPECT_EQ(crashed.failure, CompileFailure::crashed);
  EXPECT_TRUE(contains(crashed.diagnostics, "the compiler crashed compiling worker_test.cpp")) << crashed.diagnostics;
  EXPECT_TRUE(contains(crashed.diagnostics, "signal")) << crashed.diagnostics;
  EXPECT_TRUE(workers.idle_workers().empty()) << "a crashed worker must not be kept";
  const CompileOutput next = workers.compile(input(kSource), kLimits);
  EXPECT_TRUE(next.ok) << next.diagnostics;
}

TEST(CompileWorkers, AnLlvmFatalErrorQuotesLlvm) {
  CompileWorkers workers(real_paths());
  const CompileOutput output = workers.compile(input("#pragma clang __debug llvm_fatal_error\n"), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::crashed);
  EXPECT_TRUE(contains(output.diagnostics, "LLVM ERROR")) << output.diagnostics;
}

TEST(CompileWorkers, AWorkerKilledWhileIdleIsReplaced) {
  CompileWorkers workers(real_paths());
  ASSERT_TRUE(workers.compile(input(kSource), kLimits).ok);
  const std::vector<pid_t> idle = workers.idle_workers();
  ASSERT_EQ(idle.size(), 1u);
  ASSERT_EQ(::kill(idle[0], SIGKILL), 0);
  std::this_thread::sleep_for(50ms);  // its socket hangs up
  const CompileOutput output = workers.compile(input(kSource), kLimits);
  EXPECT_TRUE(output.ok) << output.diagnostics;
  ASSERT_EQ(workers.idle_workers().size(), 1u);
  EXPECT_NE(workers.idle_workers()[0], idle[0]);
}

TEST(CompileWorkers, AWorkerPastHalfItsIdleLimitIsReplacedNotReused) {
  CompileWorkers workers(real_paths(), {.start_limit = 120s, .idle_limit = 1s});
  ASSERT_TRUE(workers.compile(input(kSource), kLimits).ok);
  const std::vector<pid_t> idle = workers.idle_workers();
  ASSERT_EQ(idle.size(), 1u);
  std::this_thread::sleep_for(1500ms);  // past its idle limit: it has ended by itself
  const CompileOutput output = workers.compile(input(kSource), kLimits);
  EXPECT_TRUE(output.ok) << output.diagnostics;
  ASSERT_EQ(workers.idle_workers().size(), 1u);
  EXPECT_NE(workers.idle_workers()[0], idle[0]);
}

TEST(CompileWorkers, AMissingWorkerIsAToolchainFailureNamingIt) {
  CompileWorkers workers({"/nonexistent/kiln-compile-worker", "/nonexistent/libkiln_clang.so", "/nonexistent"});
  const CompileOutput output = workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "/nonexistent/kiln-compile-worker")) << output.diagnostics;
  EXPECT_TRUE(contains(output.diagnostics, "missing")) << output.diagnostics;
  EXPECT_EQ(test::failure_of(workers.info()), output.diagnostics.substr(0, output.diagnostics.size() - 1));
}

TEST(CompileWorkers, AModuleThatDoesNotLoadIsRefusedWithTheModulesMessage) {
  CompileWorkerPaths paths = real_paths();
  paths.module = "/nonexistent/libkiln_clang.so";
  CompileWorkers workers(paths);
  const CompileOutput output = workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "could not set up")) << output.diagnostics;
  EXPECT_TRUE(contains(output.diagnostics, "/nonexistent/libkiln_clang.so")) << output.diagnostics;
}

// A worker that is set-user-ID would compile as its owner: it refuses to run.
TEST(CompileWorkers, ASetUserIdWorkerRefusesToRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to make a copy of the worker owned by another user";
  test::TempDir dir;
  struct statvfs fs {};
  if (::statvfs(dir.path().c_str(), &fs) == 0 && (fs.f_flag & ST_NOSUID) != 0)
    GTEST_SKIP() << dir.path() << " is mounted nosuid: a set-user-ID bit would be ignored there";
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  CompileWorkerPaths paths = real_paths();
  const std::filesystem::path copy = dir.path() / "kiln-compile-worker";
  std::filesystem::copy_file(paths.worker, copy);
  ASSERT_EQ(::chown(copy.c_str(), 65534, 65534), 0);  // nobody
  ASSERT_EQ(::chmod(copy.c_str(), 04755), 0);
  paths.worker = copy;
  CompileWorkers workers(paths);
  const CompileOutput output = workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "refusing to run set-user-ID")) << output.diagnostics;
}

// --- workers that break the protocol: the host never waits past a limit -------

TEST(CompileWorkersProtocol, AWorkerThatNeverSaysHelloIsStoppedAtTheStartLimit) {
  FakePool pool("worker-silent", {.start_limit = 300ms, .idle_limit = 60s});
  const auto start = Clock::now();
  const CompileOutput output = pool.workers.compile(input(kSource), kLimits);
  EXPECT_LT(Clock::now() - start, 10s);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "did not start within 0.3 s")) << output.diagnostics;
}

TEST(CompileWorkersProtocol, GarbageInsteadOfHelloIsRefused) {
  FakePool pool("worker-garbage");
  const CompileOutput output = pool.workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "did not say hello (malformed frame)")) << output.diagnostics;
}

TEST(CompileWorkersProtocol, AWorkerThatExitsAtOnceIsNamedWithItsStatusAndMessage) {
  FakePool pool("worker-exits");
  const CompileOutput output = pool.workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "it exited with status 7")) << output.diagnostics;
  EXPECT_TRUE(contains(output.diagnostics, "fake worker: cannot go on")) << output.diagnostics;
}

TEST(CompileWorkersProtocol, AWorkerRunningAsAnotherUserIsRefused) {
  FakePool pool("worker-other-user");
  const CompileOutput output = pool.workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::toolchain);
  EXPECT_TRUE(contains(output.diagnostics, "runs as user " + std::to_string(::getuid() + 1))) << output.diagnostics;
  EXPECT_EQ(test::failure_of(pool.workers.info()), output.diagnostics.substr(0, output.diagnostics.size() - 1));
}

TEST(CompileWorkersProtocol, AWorkerThatNeverRepliesIsStoppedAtTheTimeout) {
  FakePool pool("worker-hangs");
  const auto start = Clock::now();
  const CompileOutput output = pool.workers.compile(input(kSource), {.timeout = 500ms, .memory = 0});
  EXPECT_LT(Clock::now() - start, 10s);
  EXPECT_EQ(output.failure, CompileFailure::timed_out);
  EXPECT_TRUE(contains(output.diagnostics, "did not finish within 0.5 s (KILN_COMPILE_TIMEOUT)")) << output.diagnostics;
  EXPECT_TRUE(pool.workers.idle_workers().empty()) << "a stopped worker must not be kept";
}

TEST(CompileWorkersProtocol, AWorkerThatDiesMidCompileIsACrash) {
  FakePool pool("worker-crashes");
  const CompileOutput output = pool.workers.compile(input(kSource), kLimits);
  EXPECT_EQ(output.failure, CompileFailure::crashed);
  EXPECT_TRUE(contains(output.diagnostics, "signal 11 (SIGSEGV")) << output.diagnostics;
}

TEST(CompileWorkersProtocol, OutOfMemoryNamesTheLimit) {
  FakePool pool("worker-out-of-memory");
  const CompileOutput output = pool.workers.compile(input(kSource), {.timeout = 0ms, .memory = 512ull << 20});
  EXPECT_EQ(output.failure, CompileFailure::out_of_memory);
  EXPECT_TRUE(contains(output.diagnostics, "its limit of 512 MiB (KILN_COMPILE_MEMORY)")) << output.diagnostics;
}

// Issue 33, item 10: under `ulimit -v` below KILN_COMPILE_MEMORY the worker
// (which inherits the hard limit and cannot raise past it) ran out at the
// inherited limit, and the message blamed KILN_COMPILE_MEMORY. In a child, so
// that the lowered hard limit (irreversible) stays there.
TEST(CompileWorkersProtocol, OutOfMemoryUnderAnInheritedLimitNamesUlimit) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const struct rlimit limit {std::uint64_t{64} << 30, std::uint64_t{64} << 30};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(2);
    FakePool pool("worker-out-of-memory");
    const CompileOutput output = pool.workers.compile(input(kSource), {.timeout = 0ms, .memory = 128ull << 30});
    const bool named = output.failure == CompileFailure::out_of_memory &&
                       contains(output.diagnostics, "the address-space limit of 64 GiB it inherited") &&
                       contains(output.diagnostics, "ulimit -v") &&
                       contains(output.diagnostics, "below KILN_COMPILE_MEMORY's 128 GiB");
    if (!named) std::fprintf(stderr, "%s\n", output.diagnostics.c_str());
    ::_exit(named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace kiln::jit
