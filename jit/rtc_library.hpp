// What NVRTC and hipRTC share: hipRTC copies NVRTC's C API under another
// prefix (nvrtcCompileProgram / hiprtcCompileProgram, same signatures), so
// one loader (dlopen, then dlsym by prefix) and one compile driver serve both.
// The declarations are kiln's own: kiln builds where neither toolkit is.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/failure.hpp"

namespace kiln::jit {

// What NVRTC or hipRTC made of a kernel.
struct GpuCompileOutput {
  bool ok = false;
  std::vector<char> binary;  // CUBIN or AMD code object (ELF files), or PTX text
  std::string log;           // the compiler's messages (errors on failure)
  double compile_ms = 0.0;
};

struct RtcApi {
  using Result = int;  // 0: success, in both APIs
  using Program = void*;
  void* handle = nullptr;
  std::string library;  // the name it was opened by
  std::string file;     // the library's real path (its name carries the version)
  // What the library is, wherever it is installed: its real file's name and
  // size in bytes, not its folder, so that a cache of GPU builds made where
  // the toolkit is /usr/local/cuda-13.0 serves a node with the same release
  // in a Python wheel or another prefix. Part of every GPU build's key.
  std::string build;
  const char* (*GetErrorString)(Result) = nullptr;
  Result (*Version)(int*, int*) = nullptr;
  Result (*CreateProgram)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  Result (*DestroyProgram)(Program*) = nullptr;
  Result (*CompileProgram)(Program, int, const char* const*) = nullptr;
  Result (*GetProgramLogSize)(Program, std::size_t*) = nullptr;
  Result (*GetProgramLog)(Program, char*) = nullptr;

  // `prefix`+"Name" from the library. Fails (not_found) naming the library and the symbol.
  base::Result<void*> symbol(std::string_view prefix, std::string_view name) const;
};

// Opens the first of `libraries` that loads and binds the common functions.
// Fails (not_found) with `what_is_missing` and, per library tried, why it
// failed; or naming a function the library that loaded lacks.
base::Result<std::shared_ptr<RtcApi>> load_rtc(std::string_view prefix, std::span<const char* const> libraries,
                                               const std::string& what_is_missing);

// A program compiled once; destroyed when it ends.
class RtcProgram {
 public:
  // Creates and compiles; ok() tells whether it compiled, log() why not.
  // Fails (io) only when the library refuses to create the program.
  static base::Result<std::unique_ptr<RtcProgram>> compile(const RtcApi& api, std::string_view source,
                                                           const std::string& file_name,
                                                           std::span<const std::string> options);
  ~RtcProgram();
  RtcProgram(const RtcProgram&) = delete;
  RtcProgram& operator=(const RtcProgram&) = delete;

  bool ok() const { return ok_; }
  const std::string& log() const { return log_; }
  RtcApi::Program handle() const { return handle_; }
  // Reads a result through a (size, copy) pair of API calls, e.g. nvrtcGetCUBIN.
  // Fails (io) naming `what` and the library's error when either call fails.
  base::Result<std::vector<char>> read(RtcApi::Result (*size)(RtcApi::Program, std::size_t*),
                                       RtcApi::Result (*copy)(RtcApi::Program, char*), const char* what) const;

 private:
  explicit RtcProgram(const RtcApi& api) : api_(api) {}

  const RtcApi& api_;
  RtcApi::Program handle_ = nullptr;
  bool ok_ = false;
  std::string log_;
};

}  // namespace kiln::jit
