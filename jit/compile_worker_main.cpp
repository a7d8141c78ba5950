// kiln-compile-worker: compiles kernels for libkiln in a process of its own,
// so that a kernel text that crashes clang, exhausts memory or never finishes
// costs a CompileError, not the host process (jit/compile_workers.hpp says
// why a process, and how the host starts, reuses and stops it).
//
//   kiln-compile-worker <compiler module> <clang resource dir> <idle seconds>
//
// Started by libkiln with its end of a socket as descriptor 3 (and stdout and
// stderr on a log libkiln reads when a compile fails); not a command for
// people. It loads the compiler module, says hello (jit/compile_protocol.hpp)
// and then serves requests, one at a time, until the socket closes or nothing
// comes for <idle seconds>. Each compile runs under the request's memory limit
// (RLIMIT_AS) on a thread with a stack of its own size, as clang++ gives cc1.
#include <pthread.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "jit/compile_protocol.hpp"
#include "jit/compiler_module.hpp"

namespace {

using namespace kiln::jit;
namespace p = kiln::jit::protocol;

// clang++ runs cc1 on a thread with 8 MiB of stack (clang's DesiredStackSize):
// a kernel that compiles with clang++ compiles here, and one that overflows
// it (a 300,000-term expression) ends this process, whatever `ulimit -s` the
// host was started with.
constexpr std::size_t kCompileStack = std::size_t{8} << 20;

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "kiln-compile-worker: %s\n", why.c_str());
  std::fflush(stderr);
  std::_Exit(p::kExitRefused);
}

// operator new failed under the memory limit: say so and end at once. No
// unwinding through clang and LLVM (built without exceptions, they would
// leave locks held and state half-changed for the next compile).
void out_of_memory() {
  static const char message[] = "kiln-compile-worker: out of memory\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);
  ::_exit(p::kExitOutOfMemory);
}

void set_memory_limit(rlim_t bytes) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0) return;
  limit.rlim_cur = bytes == 0 || bytes > limit.rlim_max ? limit.rlim_max : bytes;
  ::setrlimit(RLIMIT_AS, &limit);
}

struct CompileJob {
  const CompilerModule* module = nullptr;
  CompileInput input;
  CompileOutput output;
};

void* run_compile(void* argument) {
  auto* job = static_cast<CompileJob*>(argument);
  job->output = job->module->compile(job->input);
  return nullptr;
}

CompileOutput compile_on_own_stack(CompileJob& job) {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, kCompileStack);
  pthread_t thread;
  const int error = pthread_create(&thread, &attributes, &run_compile, &job);
  pthread_attr_destroy(&attributes);
  if (error != 0) {
    CompileOutput failed;
    failed.diagnostics = std::string("kiln: cannot start the compile thread: ") + std::strerror(error) + "\n";
    return failed;
  }
  pthread_join(thread, nullptr);
  return std::move(job.output);
}

// The client died while a compile ran (it is the one that enforces the
// time limit): end rather than compile on for nobody.
void watch_parent(pid_t parent) {
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      if (::getppid() != parent) std::_Exit(p::kExitOrphaned);
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  // A crash here is an answer, not something to debug: no core file of a
  // process with clang and LLVM mapped.
  const struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);

  // Never run as anyone but whoever started it: a worker made set-user-ID (or
  // set-group-ID) would compile, and write binaries, as another user.
  if (::getuid() != ::geteuid() || ::getgid() != ::getegid()) refuse("refusing to run set-user-ID or set-group-ID");
  struct stat socket_status {};
  if (::fstat(p::kWorkerSocketFd, &socket_status) != 0 || !S_ISSOCK(socket_status.st_mode))
    refuse("descriptor 3 is not a socket: this program is started by libkiln, not by hand");
  struct ucred peer {};
  socklen_t peer_size = sizeof peer;
  if (::getsockopt(p::kWorkerSocketFd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_size) != 0)
    refuse(std::string("cannot identify the process that started it: ") + std::strerror(errno));
  if (peer.uid != ::getuid())
    refuse("started by user " + std::to_string(peer.uid) + ", runs as user " + std::to_string(::getuid()));
  if (argc != 4) refuse("usage: kiln-compile-worker <compiler module> <clang resource dir> <idle seconds>");
  const long idle_seconds = std::strtol(argv[3], nullptr, 10);

  std::set_new_handler(&out_of_memory);
  watch_parent(::getppid());

  const kiln::base::Result<std::unique_ptr<CompilerModule>> module = CompilerModule::load(argv[1], argv[2]);
  if (!module) {
    (void)p::write_frame(p::kWorkerSocketFd, p::Type::refusal, {module.error().message}, std::nullopt);
    return p::kExitSetupFailed;
  }
  const CompilerModule& compiler = **module;
  const std::string identity = compiler.identity(), cpu = compiler.host_cpu(), features = compiler.host_features();
  const std::string uid = std::to_string(::getuid()), euid = std::to_string(::geteuid());
  if (p::write_frame(p::kWorkerSocketFd, p::Type::hello, {identity, cpu, features, uid, euid}, std::nullopt).io !=
      p::Io::ok)
    return p::kExitIdle;

  for (;;) {
    pollfd waiting{p::kWorkerSocketFd, POLLIN, 0};
    const int ready = ::poll(&waiting, 1, idle_seconds > 0 ? static_cast<int>(idle_seconds * 1000) : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return p::kExitIdle;  // nobody asked for a while: give the memory back
    p::Frame request;
    const p::IoResult read = p::read_frame(p::kWorkerSocketFd, request, std::nullopt);
    if (read.io == p::Io::closed && !read.started) return p::kExitIdle;
    if (read.io != p::Io::ok || request.type != p::Type::request || request.fields.size() != 7) {
      std::fprintf(stderr, "kiln-compile-worker: bad request (%s)\n", p::describe(read).c_str());
      return p::kExitProtocol;
    }
    CompileJob job;
    job.module = &compiler;
    job.input.source = std::move(request.fields[0]);
    job.input.file_name = std::move(request.fields[1]);
    job.input.cpu = std::move(request.fields[2]);
    job.input.features = std::move(request.fields[3]);
    job.input.opt_level = std::move(request.fields[4]);
    job.input.fp_contract = std::move(request.fields[5]);
    set_memory_limit(static_cast<rlim_t>(std::strtoull(request.fields[6].c_str(), nullptr, 10)));
    CompileOutput output = compile_on_own_stack(job);
    set_memory_limit(0);  // the reply is built and sent without the limit
    const std::string_view binary(output.binary.data(), output.binary.size());
    if (p::write_frame(p::kWorkerSocketFd, p::Type::result, {output.ok ? "1" : "0", binary, output.diagnostics},
                       std::nullopt)
            .io != p::Io::ok)
      return p::kExitIdle;  // the client went away
  }
}
