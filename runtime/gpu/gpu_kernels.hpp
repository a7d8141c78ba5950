// The kernels loaded on GPUs in this process, by (name, mode, specialisation,
// device). One lock of its own, taken by gpu_kernel() only.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "kiln/runtime.hpp"
#include "runtime/gpu/gpu_resolved.hpp"

namespace kiln::runtime {

class GpuKernels {
 public:
  using Slot = std::tuple<std::string, Mode, std::string, int>;

  const detail::GpuResolved* find(const Slot& slot) const {
    std::lock_guard lock(mutex_);
    const auto it = kernels_.find(slot);
    return it == kernels_.end() ? nullptr : it->second.get();
  }
  // The first of two threads' loads of one slot stays.
  const detail::GpuResolved* insert(Slot slot, std::unique_ptr<detail::GpuResolved> kernel) {
    std::lock_guard lock(mutex_);
    return kernels_.emplace(std::move(slot), std::move(kernel)).first->second.get();
  }

 private:
  mutable std::mutex mutex_;
  std::map<Slot, std::unique_ptr<detail::GpuResolved>> kernels_;
};

}  // namespace kiln::runtime
