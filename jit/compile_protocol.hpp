// The compile worker's protocol: what libkiln (jit/compile_workers.cpp) and
// its helper process kiln-compile-worker (jit/compile_worker_main.cpp) say to
// each other over one AF_UNIX stream socket, the worker's descriptor 3.
//
//   frame   = magic "KCW1" (u32) | type (u32) | payload size (u64) | payload
//   payload = fields, each: size (u64) | bytes
//
//   hello    worker -> client, once, when the compiler module is loaded:
//            identity, host cpu, host features, real uid, effective uid
//   refusal  worker -> client, instead of hello: why it cannot serve
//   request  client -> worker: source, file name, cpu, features, opt level,
//            memory limit (decimal bytes, "0": none)
//   result   worker -> client: ok ("1" or "0"), binary, diagnostics
//
// Both ends are one build of kiln on one machine (the worker is found beside
// the compiler module), so integers travel in native byte order; the magic
// number, which carries a version, catches a worker of another build.
//
// The reads and writes here never block past their deadline, and never raise
// SIGPIPE (a worker that died must not take the host with it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit::protocol {

inline constexpr std::uint32_t kMagic = 0x3157434bu;  // "KCW1" in memory on a little-endian machine
inline constexpr int kWorkerSocketFd = 3;
// A frame larger than this is malformed: a kernel source or binary is a few
// hundred KiB; 1 GiB leaves room for generated sources far beyond any real one.
inline constexpr std::uint64_t kMaxPayload = std::uint64_t{1} << 30;

enum class Type : std::uint32_t { hello = 1, refusal = 2, request = 3, result = 4 };

// How the worker ends, besides a signal. The client tells an idle exit (the
// worker never saw its request) from a compile that killed it.
enum ExitCode : int {
  kExitIdle = 0,           // the client closed the socket, or nothing came for the idle limit
  kExitSetupFailed = 1,    // the compiler module did not load (said in a refusal)
  kExitProtocol = 2,       // a malformed frame
  kExitOutOfMemory = 3,    // an allocation failed under the memory limit
  kExitRefused = 4,        // started as another user, or without its socket
  kExitOrphaned = 5,       // the client died while it compiled
};

struct Frame {
  Type type = Type::hello;
  std::vector<std::string> fields;
};

using Clock = std::chrono::steady_clock;
using Deadline = std::optional<Clock::time_point>;  // nullopt: no time limit

enum class Io {
  ok,
  closed,     // the other end closed the socket (or died): end of file, EPIPE, ECONNRESET
  timed_out,  // the deadline passed first
  failed,     // any other error; errno-style code in IoResult::error
  malformed,  // bad magic, unknown type, a size over the limit or fields that do not add up
};

struct IoResult {
  Io io = Io::ok;
  int error = 0;         // errno for Io::failed
  bool started = false;  // some byte of the frame was read (a reply had begun)
};

// Writes one frame. `fd` may be blocking or not: each send is MSG_DONTWAIT,
// after poll() says the socket takes bytes.
IoResult write_frame(int fd, Type type, const std::vector<std::string_view>& fields, Deadline deadline);

// Reads one frame into `out`. A frame over kMaxPayload, an unknown type or
// fields that overrun the payload are Io::malformed.
IoResult read_frame(int fd, Frame& out, Deadline deadline);

// "closed", "timed out", "Connection reset by peer", "malformed frame".
std::string describe(const IoResult& result);

}  // namespace kiln::jit::protocol
