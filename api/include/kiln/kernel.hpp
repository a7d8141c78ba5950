// A resolved kernel: calling it runs the compiled code on the caller's thread.
// A handle is a pointer into its Runtime: cheap to copy, valid while the
// Runtime lives.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "kiln/arg.hpp"
#include "kiln/export.hpp"

namespace kiln {

namespace detail {
struct ResolvedKernel;
}

class KILN_API Kernel {
 public:
  Kernel() = default;
  explicit Kernel(const detail::ResolvedKernel* resolved) : resolved_(resolved) {}

  // Runs the kernel. Arguments in declaration order: arrays as kiln_arg views
  // (kiln::c_array, kiln::f_array, kiln::array), scalars by value. Throws
  // ArgumentError on a wrong count, type, rank, or on strides other than the
  // specialised ones.
  template <class... Args>
  void operator()(const Args&... args) const {
    const kiln_arg packed[sizeof...(Args) > 0 ? sizeof...(Args) : 1] = {to_arg(args)...};
    invoke(packed, sizeof...(Args));
  }
  void invoke(const kiln_arg* args, std::size_t count) const;

  explicit operator bool() const { return resolved_ != nullptr; }
  const std::string& name() const;
  bool specialised() const;
  std::string key() const;  // the cache key, 32 hex digits

 private:
  static const kiln_arg& to_arg(const kiln_arg& arg) { return arg; }
  template <class T>
    requires std::is_arithmetic_v<T>
  static kiln_arg to_arg(T value) {
    return scalar(value);
  }

  const detail::ResolvedKernel* resolved_ = nullptr;
};

}  // namespace kiln
