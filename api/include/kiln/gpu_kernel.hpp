// A kernel loaded on a GPU (Runtime::gpu_kernel). A launch queues the kernel
// on the caller's stream and returns: nothing is waited for that the caller
// did not ask for. A handle is a pointer into its Runtime: cheap to copy,
// valid while the Runtime lives.
#pragma once

#include <array>
#include <span>
#include <string>
#include <type_traits>

#include "kiln/arg.hpp"
#include "kiln/export.hpp"

namespace kiln {

namespace detail {
struct GpuResolved;

inline kiln_arg as_arg(const kiln_arg& arg) { return arg; }
template <class T>
  requires std::is_arithmetic_v<T>
kiln_arg as_arg(T value) {
  return scalar(value);
}
}  // namespace detail

class KILN_API GpuKernel {
 public:
  GpuKernel() = default;
  explicit GpuKernel(const detail::GpuResolved* resolved) : resolved_(resolved) {}

  // Queues the kernel on `stream` (a CUstream; nullptr: the calling thread's
  // default stream). Arguments in declaration order: arrays as kiln_arg views
  // of device memory, scalars by value. Throws ArgumentError (count, type,
  // rank, strides other than the specialised ones) before anything is
  // queued, GpuError when the driver refuses the launch.
  template <class... Args>
  void operator()(void* stream, const Args&... args) const {
    const std::array<kiln_arg, sizeof...(Args)> gathered = {detail::as_arg(args)...};
    launch(stream, gathered);
  }
  void launch(void* stream, std::span<const kiln_arg> args) const;

  explicit operator bool() const { return resolved_ != nullptr; }
  const std::string& name() const;
  const std::string& arch() const;  // what it was compiled for: "sm_90", or "compute_90" (PTX)
  std::string key() const;          // the cache key, 32 hex digits
  int grid() const;                 // blocks per launch: every one resident (the launch is cooperative)
  int block() const;                // threads per block
  // The parameter block each launch passes after the arguments (one value per
  // declared parameter, one zero where it declares none): what a raw launch of
  // the same function through the driver must pass too.
  std::span<const kiln_value> parameters() const;

 private:
  const detail::GpuResolved* resolved_ = nullptr;
};

}  // namespace kiln
