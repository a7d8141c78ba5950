// A resolved kernel: calling it runs the compiled code on the caller's thread.
// A handle is a pointer into its Runtime: cheap to copy, valid while the
// Runtime lives.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "kiln/arg.hpp"
#include "kiln/export.hpp"

namespace kiln {

namespace detail {
struct ResolvedKernel;

// What a call reads, laid out for the inline fast path below: a handle points
// at the CallBlock of a kernel its Runtime resolved (and owns).
struct CallBlock {
  int (*entry)(const kiln_arg* const* args, const kiln_value* params, const kiln_context* context) = nullptr;
  const kiln_value* params = nullptr;        // read by generic builds only
  const std::uint64_t* signature = nullptr;  // per argument: signature_of() of what it must be
  std::size_t count = 0;                     // how many arguments
  // Calls take the checked path: they are timed (KILN_METRICS), the kernel
  // has temporaries to hand over (`#pragma kiln temporary`), runs in check
  // mode or on several threads.
  bool out_of_line = false;
  int threads = 1;  // what a call runs on (Config::threads); run_on() chooses per call
  const ResolvedKernel* owner = nullptr;
};

// The entry a call runs now. Tiered start (Config::tiered) publishes a
// kernel with its generic build's entry and stores the specialised build's
// over it while other threads call it: read atomically (acquire: the new
// build is loaded before its entry is stored), a plain load on x86 and ARM.
// Nothing else a call reads changes: both builds take the same arguments and
// parameter block.
using EntryFn = decltype(CallBlock::entry);
inline EntryFn entry_of(const CallBlock& block) {
  return std::atomic_ref<EntryFn>(const_cast<EntryFn&>(block.entry)).load(std::memory_order_acquire);
}

// An argument's element type and rank in one word, as a CallBlock lists them.
inline std::uint64_t signature_of(std::int32_t type, std::int32_t rank) {
  return static_cast<std::uint32_t>(type) | std::uint64_t{static_cast<std::uint32_t>(rank)} << 32;
}
inline std::uint64_t signature_of(const kiln_arg& arg) { return signature_of(arg.type, arg.rank); }

// One argument of a call, as the entry sees it: a pointer to a kiln_arg. An
// array view is pointed at where the caller holds it (never copied); a scalar
// is wrapped in a kiln_arg that lives until the end of the call expression.
template <class T>
class ArgRef;

template <>
class ArgRef<kiln_arg> {
 public:
  explicit ArgRef(const kiln_arg& arg) : arg_(&arg) {}
  const kiln_arg* get() const { return arg_; }

 private:
  const kiln_arg* arg_;
};

template <class T>
  requires std::is_arithmetic_v<T>
class ArgRef<T> {
 public:
  explicit ArgRef(T value) : arg_(scalar(value)) {}
  const kiln_arg* get() const { return &arg_; }

 private:
  kiln_arg arg_;
};
}  // namespace detail

class KILN_API Kernel {
 public:
  Kernel() = default;
  explicit Kernel(const detail::CallBlock* block) : block_(block) {}

  // Runs the kernel. Arguments in declaration order: arrays as kiln_arg views
  // (kiln::c_array, kiln::f_array, kiln::array), scalars by value. Throws
  // ArgumentError on a wrong count, type, rank, on strides other than the
  // specialised ones, or on arrays and a domain the declared extents refuse
  // (docs/manual/kernel-language.md, "Extents"), before the kernel touches any data.
  template <class... Args>
  void operator()(const Args&... args) const {
    call(detail::ArgRef<Args>(args)...);
  }
  // The same with the arguments already gathered: `args[i]` points at argument i.
  // Inline: a count and a type/rank compare per argument, then the entry; any
  // mismatch, a timed call, one with temporaries or a refused one goes out of line.
  void invoke(const kiln_arg* const* args, std::size_t count) const {
    const detail::CallBlock* b = block_;
    if (b == nullptr || count != b->count || b->out_of_line) [[unlikely]]
      return invoke_checked(args, count);
    for (std::size_t i = 0; i < count; ++i)
      if (detail::signature_of(*args[i]) != b->signature[i]) [[unlikely]]
        return invoke_checked(args, count);
    if (const int status = detail::entry_of(*b)(args, b->params, nullptr); status != 0) [[unlikely]]
      refused(args, status);
  }
  // The same on `threads` threads for this call (1: the calling thread
  // alone), whatever Config::threads says. A call made inside an OpenMP
  // parallel region runs on its calling thread alone.
  template <class... Args>
  void run_on(int threads, const Args&... args) const {
    call_on(threads, detail::ArgRef<Args>(args)...);
  }
  void invoke_on(int threads, const kiln_arg* const* args, std::size_t count) const {
    invoke_checked(args, count, threads < 1 ? 1 : threads);
  }
  // Convenience for a contiguous array of arguments (builds the pointers).
  void invoke(std::span<const kiln_arg> args) const;

  explicit operator bool() const { return block_ != nullptr; }
  const std::string& name() const;
  bool specialised() const;
  std::string key() const;  // the cache key, 32 hex digits

 private:
  // Checks everything and explains what is wrong (throws), times when asked.
  // threads: 0 for the handle's own count (CallBlock::threads).
  void invoke_checked(const kiln_arg* const* args, std::size_t count, int threads = 0) const;
  // The entry returned `status` (-1: the declared extents refuse the call;
  // else 1 + the index of an argument whose strides
  // differ from the specialised ones) before touching any data: throws.
  [[noreturn]] void refused(const kiln_arg* const* args, int status) const;

  template <class... Refs>
  void call_on(int threads, const Refs&... refs) const {
    const kiln_arg* const pointers[sizeof...(Refs) > 0 ? sizeof...(Refs) : 1] = {refs.get()...};
    invoke_checked(pointers, sizeof...(Refs), threads < 1 ? 1 : threads);
  }

  template <class... Refs>
  void call(const Refs&... refs) const {
    const kiln_arg* const pointers[sizeof...(Refs) > 0 ? sizeof...(Refs) : 1] = {refs.get()...};
    invoke(pointers, sizeof...(Refs));
  }

  const detail::CallBlock* block_ = nullptr;
};

}  // namespace kiln
