// What kiln throws. Every message names the kernel and, where there is one,
// the parameter or argument and what was expected.
//
// Every class carries its kind (Error::kind()), the one taxonomy that every
// binding and the collective translate from: the C ABI's kiln_status, the
// Python classes of kiln.errors, the Fortran module's stat (the C statuses),
// and the messages between ranks (kiln::mpi), which rebuild the same class
// on every member with throw_error().
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/export.hpp"

namespace kiln {

// One per class below, in the order of kiln_status's codes from
// KILN_ERROR_UNKNOWN_KERNEL (3) on; `error` is the base class itself.
enum class ErrorKind : int {
  error = 0,
  unknown_kernel,
  kernel_source,
  spec,
  argument,
  compile,
  toolchain,
  load,
  gpu,
};
inline constexpr int kErrorKinds = 9;

// The class's name without the namespace: "Error", "LoadError", ...
inline const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::unknown_kernel: return "UnknownKernelError";
    case ErrorKind::kernel_source: return "KernelSourceError";
    case ErrorKind::spec: return "SpecError";
    case ErrorKind::argument: return "ArgumentError";
    case ErrorKind::compile: return "CompileError";
    case ErrorKind::toolchain: return "ToolchainError";
    case ErrorKind::load: return "LoadError";
    case ErrorKind::gpu: return "GpuError";
    case ErrorKind::error: break;
  }
  return "Error";
}

class KILN_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : Error(ErrorKind::error, what) {}
  explicit Error(const char* what) : Error(ErrorKind::error, what) {}
  ErrorKind kind() const noexcept { return kind_; }

 protected:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}

 private:
  ErrorKind kind_;
};

// No kernel of that name is registered.
class KILN_API UnknownKernelError : public Error {
 public:
  explicit UnknownKernelError(const std::string& what) : Error(ErrorKind::unknown_kernel, what) {}
};

// A kernel source is malformed (its #pragma kiln declarations), or registered twice.
class KILN_API KernelSourceError : public Error {
 public:
  explicit KernelSourceError(const std::string& what) : Error(ErrorKind::kernel_source, what) {}
};

// A specialisation value is missing, unknown or of the wrong type.
class KILN_API SpecError : public Error {
 public:
  explicit SpecError(const std::string& what) : Error(ErrorKind::spec, what) {}
};

// A call passed the wrong number of arguments, a wrong type or rank, or strides
// other than those the kernel was specialised for.
class KILN_API ArgumentError : public Error {
 public:
  explicit ArgumentError(const std::string& what) : Error(ErrorKind::argument, what) {}
};

// The kernel did not compile; diagnostics() holds the compiler's messages with
// lines of the kernel's own source.
class KILN_API CompileError : public Error {
 public:
  CompileError(const std::string& kernel, std::string diagnostics)
      : Error(ErrorKind::compile, "kiln: kernel '" + kernel + "' does not compile:\n" + diagnostics),
        diagnostics_(std::move(diagnostics)) {}
  const std::string& diagnostics() const { return diagnostics_; }

 private:
  std::string diagnostics_;
};

// The toolchain is missing or broken (compiler module, clang resource folder).
class KILN_API ToolchainError : public Error {
 public:
  explicit ToolchainError(const std::string& what) : Error(ErrorKind::toolchain, what) {}
};

// A binary did not load into this process (a folder mounted noexec, a
// binary for another C library): names the kernel and the loader's message.
class KILN_API LoadError : public Error {
 public:
  explicit LoadError(const std::string& what) : Error(ErrorKind::load, what) {}
};

// No GPU driver or device, or the driver refused (a module load, a launch):
// names what is missing and the driver's message.
class KILN_API GpuError : public Error {
 public:
  explicit GpuError(const std::string& what) : Error(ErrorKind::gpu, what) {}
};

// Throws the class of `kind` with `message` (what() of the error it stands
// for): how a binding or another rank rebuilds an error it received as a kind
// and a text. A CompileError's message is `kernel` and its diagnostics apart
// (the constructor composes what()), so it takes them: kernel = message.
[[noreturn]] inline void throw_error(ErrorKind kind, const std::string& message,
                                     const std::string& diagnostics = std::string()) {
  switch (kind) {
    case ErrorKind::unknown_kernel: throw UnknownKernelError(message);
    case ErrorKind::kernel_source: throw KernelSourceError(message);
    case ErrorKind::spec: throw SpecError(message);
    case ErrorKind::argument: throw ArgumentError(message);
    case ErrorKind::compile: throw CompileError(message, diagnostics);
    case ErrorKind::toolchain: throw ToolchainError(message);
    case ErrorKind::load: throw LoadError(message);
    case ErrorKind::gpu: throw GpuError(message);
    case ErrorKind::error: break;
  }
  throw Error(message);
}

}  // namespace kiln
