// A call's kiln_args and the pointers the entry takes, on the stack for
// every kernel this repository ships (at most 16 arguments), on the heap beyond.
#pragma once

#include <cstddef>
#include <memory>

#include "kiln/arg.hpp"

namespace kiln::python {

class CallBuffer {
 public:
  static constexpr std::size_t kInline = 24;

  explicit CallBuffer(std::size_t count) : count_(count) {
    if (count > kInline) {
      heap_args_ = std::make_unique<kiln_arg[]>(count);
      heap_pointers_ = std::make_unique<const kiln_arg*[]>(count);
      args_ = heap_args_.get();
      pointers_ = heap_pointers_.get();
    }
    for (std::size_t i = 0; i < count; ++i) pointers_[i] = &args_[i];
  }
  CallBuffer(const CallBuffer&) = delete;
  CallBuffer& operator=(const CallBuffer&) = delete;

  kiln_arg& operator[](std::size_t i) { return args_[i]; }
  kiln_arg* args() { return args_; }
  const kiln_arg* const* pointers() const { return pointers_; }
  std::size_t size() const { return count_; }

 private:
  std::size_t count_;
  // Left uninitialised: every argument is written whole before a call.
  kiln_arg inline_args_[kInline];
  const kiln_arg* inline_pointers_[kInline];
  kiln_arg* args_ = inline_args_;
  const kiln_arg** pointers_ = inline_pointers_;
  std::unique_ptr<kiln_arg[]> heap_args_;
  std::unique_ptr<const kiln_arg*[]> heap_pointers_;
};

}  // namespace kiln::python
