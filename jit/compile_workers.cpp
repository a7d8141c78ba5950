#include "jit/compile_workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "base/log.hpp"
#include "jit/compile_protocol.hpp"

extern char** environ;

namespace kiln::jit {
namespace {

namespace p = protocol;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How much of the worker's stdout and stderr a failure quotes: LLVM's last
// words ("LLVM ERROR: out of memory"), not pages of them.
constexpr std::size_t kLogTail = 4096;

std::string bytes_text(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20, kGiB = std::uint64_t{1} << 30;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::string seconds_text(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", static_cast<double>(ms.count()) / 1000.0);
  return text;
}

// "signal 11 (SIGSEGV, segmentation fault)": the names strsignal() lacks, for
// the signals a compiler dies of.
std::string signal_text(int signal) {
  const char* name = nullptr;
  const char* what = nullptr;
  switch (signal) {
    case SIGSEGV: name = "SIGSEGV", what = "segmentation fault"; break;
    case SIGABRT: name = "SIGABRT", what = "aborted"; break;
    case SIGBUS: name = "SIGBUS", what = "bus error"; break;
    case SIGILL: name = "SIGILL", what = "illegal instruction"; break;
    case SIGFPE: name = "SIGFPE", what = "arithmetic exception"; break;
    case SIGKILL: name = "SIGKILL", what = "killed"; break;
    case SIGTERM: name = "SIGTERM", what = "terminated"; break;
    case SIGXCPU: name = "SIGXCPU", what = "CPU time limit exceeded"; break;
    case SIGTRAP: name = "SIGTRAP", what = "trap"; break;
    default: break;
  }
  std::string text = "signal " + std::to_string(signal);
  if (name != nullptr) text += std::string(" (") + name + ", " + what + ")";
  return text;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The child's wait status, waiting at most `limit` for it. nullopt when it
// cannot be had: not ended by then, or reaped by someone else (a host that
// ignores SIGCHLD, or whose SIGCHLD handler waits for any child).
std::optional<int> reap(pid_t pid, Clock::duration limit) {
  const auto until = Clock::now() + limit;
  auto pause = std::chrono::microseconds(100);
  for (;;) {
    int status = 0;
    const pid_t reaped = ::waitpid(pid, &status, WNOHANG);
    if (reaped == pid) return status;
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0 || Clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, 10ms);
  }
}

std::string status_text(const std::optional<int>& status) {
  if (!status) return "it ended, with an exit status kiln could not collect";
  if (WIFEXITED(*status)) return "it exited with status " + std::to_string(WEXITSTATUS(*status));
  if (WIFSIGNALED(*status)) return "it was killed by " + signal_text(WTERMSIG(*status));
  return "it ended";
}

// A descriptor numbered above 3, so that dup2() onto 0-3 in the child always
// makes a new descriptor there (which clears close-on-exec): dup2(fd, fd) would not.
int above_three(int fd) {
  if (fd < 0 || fd > p::kWorkerSocketFd) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

CompileOutput failure(CompileFailure kind, std::string diagnostics) {
  CompileOutput output;
  output.failure = kind;
  output.diagnostics = std::move(diagnostics);
  return output;
}

}  // namespace

struct CompileWorkers::Worker {
  pid_t pid = -1;
  int socket = -1;  // our end; the worker's is its descriptor 3
  int log = -1;     // a memfd: the worker's stdout and stderr (O_APPEND), emptied before each compile
  bool served = false;
  Clock::time_point idle_since = Clock::now();
  CompilerInfo info;

  Worker() = default;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker() { stop(); }

  // Kills it and reaps it (a worker gives nothing up by dying: it keeps no state).
  void stop() {
    close_fd(socket);
    close_fd(log);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      if (!reap(pid, 5s)) base::log().warn("kiln jit: compile worker {} did not end after SIGKILL", pid);
      pid = -1;
    }
  }

  // It closed its socket: its wait status, once it has ended.
  std::optional<int> wait_for_end() {
    std::optional<int> status = reap(pid, 5s);
    if (!status) {
      ::kill(pid, SIGKILL);  // still running without its socket: nothing more to hear from it
      reap(pid, 2s);
    }
    pid = -1;
    return status;
  }

  // A worker forked into this process with its parent: the parent's, so only
  // this process's copies of its descriptors go.
  void forget() {
    close_fd(socket);
    close_fd(log);
    pid = -1;
  }

  // An idle worker says nothing: a readable or hung-up socket means it is ending.
  bool alive() const {
    pollfd p{socket, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

  std::string log_tail() const {
    struct stat status {};
    if (log < 0 || ::fstat(log, &status) != 0 || status.st_size <= 0) return {};
    const auto size = static_cast<std::size_t>(status.st_size);
    const std::size_t from = size > kLogTail ? size - kLogTail : 0;
    std::string text(size - from, '\0');
    const ssize_t n = ::pread(log, text.data(), text.size(), static_cast<off_t>(from));
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (!text.empty() && text.back() != '\n') text += '\n';
    return text;
  }
};

namespace {

// Starts a worker and reads its hello. Null, with `error` set, when it does not start.
std::unique_ptr<CompileWorkers::Worker> start_worker(const CompileWorkerPaths& paths,
                                                     const CompileWorkerOptions& options, std::string& error) {
  const std::string where = "kiln: the compile worker '" + paths.worker.string() + "'";
  if (::access(paths.worker.c_str(), X_OK) != 0) {
    error = where + (errno == ENOENT ? " is missing (it is built and installed beside the compiler module)"
                                     : std::string(" cannot be run: ") + std::strerror(errno));
    return nullptr;
  }
  const auto start = Clock::now();
  auto worker = std::make_unique<CompileWorkers::Worker>();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    error = where + " cannot be started: socketpair: " + std::strerror(errno);
    return nullptr;
  }
  worker->socket = pair[0];
  int theirs = above_three(pair[1]);
  worker->log = above_three(::memfd_create("kiln-compile-worker-log", MFD_CLOEXEC));
  if (worker->log >= 0) {
    ::fcntl(worker->log, F_SETFL, O_APPEND);  // the log is emptied between compiles: the worker writes at its end
  } else {
    worker->log = above_three(::open("/dev/null", O_WRONLY | O_CLOEXEC));  // no memfd: no messages
  }
  if (theirs < 0 || worker->log < 0) {
    error = where + " cannot be started: " + std::strerror(errno);
    close_fd(theirs);
    return nullptr;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, worker->log, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, worker->log, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, theirs, p::kWorkerSocketFd);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  // Descriptors the application left open across exec stay out of the
  // worker: it must not keep a lock or a pipe of the host's alive.
  posix_spawn_file_actions_addclosefrom_np(&actions, p::kWorkerSocketFd + 1);
#endif
  // Default signal handling and nothing blocked, whatever the calling thread
  // had: an ignored SIGPIPE or a blocked SIGTERM is the host's choice, not the worker's.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::string program = paths.worker.string(), module = paths.module.string(),
              resource_dir = paths.resource_dir.string(),
              idle = std::to_string(std::max<long long>(1, options.idle_limit.count() / 1000));
  char* argv[] = {program.data(), module.data(), resource_dir.data(), idle.data(), nullptr};
  // posix_spawn: vfork-like (no copy of this process's page tables, safe with
  // RDMA-registered memory), and only exec runs in the child.
  const int spawned = ::posix_spawn(&worker->pid, program.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close_fd(theirs);
  if (spawned != 0) {
    worker->pid = -1;
    error = where + " cannot be started: " + std::strerror(spawned);
    return nullptr;
  }

  p::Frame hello;
  const p::IoResult io = p::read_frame(worker->socket, hello, Clock::now() + options.start_limit);
  if (io.io == p::Io::ok && hello.type == p::Type::refusal && !hello.fields.empty()) {
    error = where + " could not set up: " + hello.fields[0];
    return nullptr;  // the destructor stops it
  }
  if (io.io != p::Io::ok || hello.type != p::Type::hello || hello.fields.size() != 5) {
    if (io.io == p::Io::timed_out) {
      error = where + " did not start within " + seconds_text(options.start_limit);
    } else if (io.io == p::Io::closed) {
      const std::optional<int> status = worker->wait_for_end();
      error = where + " ended as it started: " + status_text(status) + "\n" + worker->log_tail();
    } else {
      error = where + " did not say hello (" + p::describe(io) + "): is it from another build of kiln?";
    }
    return nullptr;
  }
  // It checks this itself (set-user-ID, the socket's peer); the host checks
  // what it says, too.
  const std::string me = std::to_string(::getuid());
  if (hello.fields[3] != me || hello.fields[4] != me) {
    error = where + " runs as user " + hello.fields[4] + " (real " + hello.fields[3] + "), not as user " + me +
            ": refused";
    return nullptr;
  }
  worker->info = {std::move(hello.fields[0]), std::move(hello.fields[1]), std::move(hello.fields[2])};
  const std::chrono::duration<double, std::milli> elapsed = Clock::now() - start;
  base::log().debug("kiln jit: started compile worker {} ({}) in {:.1f} ms", worker->pid, paths.worker.string(),
                    elapsed.count());
  return worker;
}

// Which limit a compile that ran out of memory met. The worker inherits this
// process's hard RLIMIT_AS (`ulimit -v` sets it) and cannot raise its own
// limit past it: when that is the lower one, KILN_COMPILE_MEMORY is not to blame.
std::string memory_limit_text(std::uint64_t memory) {
  struct rlimit inherited {};
  if (::getrlimit(RLIMIT_AS, &inherited) == 0 && inherited.rlim_max != RLIM_INFINITY &&
      (memory == 0 || inherited.rlim_max < memory))
    return "it reached the address-space limit of " + bytes_text(inherited.rlim_max) +
           " it inherited from this process (ulimit -v, RLIMIT_AS)" +
           (memory > 0 ? ", below KILN_COMPILE_MEMORY's " + bytes_text(memory) : std::string()) +
           ": raise `ulimit -v` where the program starts";
  return memory > 0 ? "it reached its limit of " + bytes_text(memory) + " (KILN_COMPILE_MEMORY)"
                    : std::string("no limit was set (KILN_COMPILE_MEMORY=0)");
}

// What a worker's death during a compile means for that compile.
CompileOutput died(CompileWorkers::Worker& worker, const std::optional<int>& status, const CompileInput& input,
                   const CompileLimits& limits) {
  const std::string tail = worker.log_tail();
  const std::string file = input.file_name.empty() ? std::string("the kernel") : input.file_name;
  const int signal = status && WIFSIGNALED(*status) ? WTERMSIG(*status) : 0;
  // operator new failed (the worker's handler), or LLVM's allocator did (it aborts).
  const bool out_of_memory = (status && WIFEXITED(*status) && WEXITSTATUS(*status) == p::kExitOutOfMemory) ||
                             ((signal == SIGABRT || !status) && contains(tail, "out of memory"));
  CompileOutput output;
  if (out_of_memory) {
    output.failure = CompileFailure::out_of_memory;
    output.diagnostics = "kiln: the compiler ran out of memory compiling " + file + ": " +
                         memory_limit_text(limits.memory) + "\n";
  } else {
    output.failure = CompileFailure::crashed;
    output.diagnostics = "kiln: the compiler crashed compiling " + file + ": " + status_text(status);
    if (signal == SIGSEGV)
      output.diagnostics += "; a stack overflow ends this way (very deeply nested code, such as an expression of "
                            "hundreds of thousands of terms)";
    if (signal == SIGKILL) output.diagnostics += ", not sent by kiln: the system's out-of-memory killer, or another process";
    output.diagnostics += "\n";
  }
  if (!tail.empty()) output.diagnostics += "the compiler's last messages:\n" + tail;
  return output;
}

}  // namespace

CompileWorkers::CompileWorkers(CompileWorkerPaths paths, CompileWorkerOptions options)
    : paths_(std::move(paths)), options_(options), owner_(::getpid()) {}

CompileWorkers::~CompileWorkers() {
  std::lock_guard lock(mutex_);
  for (auto& worker : idle_) {
    if (owner_ != ::getpid()) worker->forget();
  }
  idle_.clear();  // each one stopped
}

std::unique_ptr<CompileWorkers::Worker> CompileWorkers::take(std::string& error) {
  std::vector<std::unique_ptr<Worker>> stale;  // stopped outside the lock
  std::unique_ptr<Worker> worker;
  {
    std::lock_guard lock(mutex_);
    if (owner_ != ::getpid()) {  // forked: the idle workers are the parent's
      for (auto& inherited : idle_) inherited->forget();
      idle_.clear();
      owner_ = ::getpid();
    }
    // Those idle too long, or ended (at their idle limit, or killed), go
    // (and are reaped); of the others the most recently used serves, so the
    // rest age out.
    const auto now = Clock::now();
    for (auto& candidate : idle_) {
      if (now - candidate->idle_since >= options_.idle_limit / 2 || !candidate->alive())
        stale.push_back(std::move(candidate));
    }
    std::erase(idle_, nullptr);
    if (!idle_.empty()) {
      worker = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  stale.clear();
  if (worker) return worker;
  worker = start_worker(paths_, options_, error);
  if (worker) {
    std::lock_guard lock(mutex_);
    if (!info_) info_ = worker->info;
  }
  return worker;
}

void CompileWorkers::give_back(std::unique_ptr<Worker> worker) {
  worker->idle_since = Clock::now();
  std::lock_guard lock(mutex_);
  if (owner_ != ::getpid()) return;  // forked meanwhile: this process's take() starts afresh
  idle_.push_back(std::move(worker));
}

std::vector<pid_t> CompileWorkers::idle_workers() {
  std::lock_guard lock(mutex_);
  std::vector<pid_t> pids;
  for (const auto& worker : idle_) pids.push_back(worker->pid);
  return pids;
}

base::Result<CompilerInfo> CompileWorkers::info() {
  {
    std::lock_guard lock(mutex_);
    if (info_) return *info_;
  }
  std::string error;
  std::unique_ptr<Worker> worker = take(error);
  if (!worker) return base::failed({base::Failure::Kind::io, 0, std::move(error)});
  CompilerInfo info = worker->info;
  give_back(std::move(worker));
  return info;
}

CompileOutput CompileWorkers::compile(const CompileInput& input, const CompileLimits& limits) {
  // At most twice: a reused worker may have ended at its idle limit just as
  // it was taken, before it read this request. Nothing else is tried again.
  for (int attempt = 0;; ++attempt) {
    std::string error;
    std::unique_ptr<Worker> worker = take(error);
    if (!worker) return failure(CompileFailure::toolchain, error + "\n");
    const bool reused = worker->served;
    worker->served = true;
    (void)!::ftruncate(worker->log, 0);  // fails only on /dev/null (no memfd), which holds nothing

    const p::Deadline deadline =
        limits.timeout.count() > 0 ? p::Deadline(Clock::now() + limits.timeout) : p::Deadline();
    const std::string memory = std::to_string(limits.memory);
    p::IoResult io = p::write_frame(worker->socket, p::Type::request,
                                    {input.source, input.file_name, input.cpu, input.features, input.opt_level,
                                     input.fp_contract, memory},
                                    deadline);
    p::Frame reply;
    if (io.io == p::Io::ok) io = p::read_frame(worker->socket, reply, deadline);

    if (io.io == p::Io::ok && reply.type == p::Type::result && reply.fields.size() == 3) {
      CompileOutput output;
      output.ok = reply.fields[0] == "1";
      output.binary.assign(reply.fields[1].begin(), reply.fields[1].end());
      output.diagnostics = std::move(reply.fields[2]);
      if (output.ok && output.binary.empty()) {
        output.ok = false;
        output.diagnostics += "kiln: the compiler module returned no binary\n";
      }
      give_back(std::move(worker));
      return output;
    }
    if (io.io == p::Io::timed_out) {
      worker->stop();
      return failure(CompileFailure::timed_out, "kiln: compiling " +
                                                    (input.file_name.empty() ? std::string("the kernel")
                                                                             : input.file_name) +
                                                    " did not finish within " + seconds_text(limits.timeout) +
                                                    " (KILN_COMPILE_TIMEOUT): the compiler was stopped\n");
    }
    if (io.io == p::Io::closed) {
      const std::optional<int> status = worker->wait_for_end();
      const bool ended_idle = status && WIFEXITED(*status) && WEXITSTATUS(*status) == p::kExitIdle;
      if (reused && ended_idle && !io.started && attempt == 0) continue;
      return died(*worker, status, input, limits);
    }
    const std::string what = io.io == p::Io::ok ? std::string("an unexpected frame") : p::describe(io);
    worker->stop();
    return failure(CompileFailure::toolchain, "kiln: the compile worker's reply was unreadable: " + what + "\n");
  }
}

std::filesystem::path compile_worker_path(const std::filesystem::path& module_path) {
  return module_path.parent_path() / "kiln-compile-worker";
}

base::Result<CompileWorkers*> default_compile_workers() {
  // Never destroyed: at exit the workers' sockets close and they end by
  // themselves, and no thread can find the pool gone under it.
  static std::mutex mutex;
  static CompileWorkers* workers = nullptr;
  std::lock_guard lock(mutex);
  if (workers == nullptr) {
    const std::filesystem::path module = default_compiler_module_path();
    const base::Result<std::filesystem::path> resource_dir = clang_resource_dir();
    if (!resource_dir) return base::failed(resource_dir.error());
    workers = new CompileWorkers({compile_worker_path(module), module, *resource_dir});
  }
  return workers;
}

}  // namespace kiln::jit
