// What kiln throws. Every message names the kernel and, where there is one,
// the parameter or argument and what was expected.
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/export.hpp"

namespace kiln {

class KILN_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No kernel of that name is registered.
class KILN_API UnknownKernelError : public Error {
 public:
  using Error::Error;
};

// A kernel source is malformed (its #pragma kiln declarations), or registered twice.
class KILN_API KernelSourceError : public Error {
 public:
  using Error::Error;
};

// A specialisation value is missing, unknown or of the wrong type.
class KILN_API SpecError : public Error {
 public:
  using Error::Error;
};

// A call passed the wrong number of arguments, a wrong type or rank, or strides
// other than those the kernel was specialised for.
class KILN_API ArgumentError : public Error {
 public:
  using Error::Error;
};

// The kernel did not compile; diagnostics() holds the compiler's messages with
// lines of the kernel's own source.
class KILN_API CompileError : public Error {
 public:
  CompileError(const std::string& kernel, std::string diagnostics)
      : Error("kiln: kernel '" + kernel + "' does not compile:\n" + diagnostics), diagnostics_(std::move(diagnostics)) {}
  const std::string& diagnostics() const { return diagnostics_; }

 private:
  std::string diagnostics_;
};

// The toolchain is missing or broken (compiler module, clang resource folder).
class KILN_API ToolchainError : public Error {
 public:
  using Error::Error;
};

// A binary did not load into this process (a folder mounted noexec, a
// binary for another C library): names the kernel and the loader's message.
class KILN_API LoadError : public Error {
 public:
  using Error::Error;
};

// No GPU driver or device, or the driver refused (a module load, a launch):
// names what is missing and the driver's message.
class KILN_API GpuError : public Error {
 public:
  using Error::Error;
};

}  // namespace kiln
