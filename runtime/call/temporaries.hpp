// A kernel's temporaries (`#pragma kiln temporary`) on the CPU: memory the
// kernel needs during a call, which the caller neither allocates nor sees.
// Each handle owns a pool of buffer sets, one per thread that calls it at the
// same time: a call leases a set, and gives it back when the kernel returns.
// A set's buffers are allocated on its first call and grow (never shrink)
// when a later call's arrays are larger: a step loop allocates once per
// calling thread, never per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/arg.hpp"
#include "lang/parser.hpp"
#include "runtime/metrics/metrics.hpp"

namespace kiln::runtime {

// How many elements an array's view spans from its lowest to its highest
// element (0 for an empty one), and where its element (0, ..., 0) lies in
// that span: strides may be negative.
struct Span {
  std::int64_t elements = 0;
  std::int64_t origin = 0;
};
Span span_of(const kiln_arg& array);

// What temporary `temp` takes in a call whose `like` array is `like`: the
// bytes it spans, and its view once they lie at `base`: `like`'s shape,
// strides and blocks, `temp`'s element type. The CPU pool and the GPU's
// device memory (runtime/gpu/gpu_temporaries.hpp) both lay it out so.
std::size_t temporary_bytes(const lang::TemporaryDecl& temp, const kiln_arg& like);
kiln_arg temporary_view(const lang::TemporaryDecl& temp, const kiln_arg& like, std::uintptr_t base);

// One temporary's memory, aligned for vector loads.
class TemporaryBuffer {
 public:
  // Room for `bytes` at least; what it held is gone. True when it allocated.
  bool reserve(std::size_t bytes);
  std::byte* data() const { return data_.get(); }
  std::size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t capacity_ = 0;
};

class Temporaries {
  struct Set;

 public:
  // `metrics` counts allocations under `metrics_name` (KernelMetrics::temporary_allocations).
  Temporaries(const lang::KernelInfo& info, Metrics& metrics, std::string metrics_name);
  ~Temporaries();

  // The call's argument pointers with the temporaries after them, for as long
  // as the lease lives. Borrowed from the pool; given back at its end.
  class Lease {
   public:
    Lease(Temporaries& owner, std::unique_ptr<Set> set);
    Lease(Lease&&) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    const kiln_arg* const* args() const;

   private:
    friend class Temporaries;
    Temporaries* owner_;
    std::unique_ptr<Set> set_;
  };
  // `args`: the call's `count` arguments, already checked against the
  // kernel's signature. Throws Error when the memory cannot be had.
  Lease lease(const kiln_arg* const* args, std::size_t count);

 private:
  void give_back(std::unique_ptr<Set> set) noexcept;

  const lang::KernelInfo& info_;
  Metrics& metrics_;
  std::string metrics_name_;
  std::mutex mutex_;  // guards free_: held for a push or a pop, never for a call
  std::vector<std::unique_ptr<Set>> free_;
};

}  // namespace kiln::runtime
