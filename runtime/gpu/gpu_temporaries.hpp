// A kernel's temporaries (`#pragma kiln temporary`) on an NVIDIA GPU: device
// memory laid out as each temporary's `like` array. A launch returns before
// the kernel runs, so memory cannot be handed back when it returns, as on the
// CPU (runtime/call/temporaries.hpp). Launches queued on one stream run one
// after the other: each stream gets its own set, allocated on its first
// launch and grown (after waiting for the stream) when arrays grow.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/arg.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "lang/parser.hpp"
#include "runtime/metrics/metrics.hpp"

namespace kiln::runtime {

class GpuTemporaries {
 public:
  // `context`: the kernel's device context, current whenever this is used.
  GpuTemporaries(const lang::KernelInfo& info, CudaDriver::Context context, Metrics& metrics, std::string metrics_name);
  ~GpuTemporaries();
  GpuTemporaries(const GpuTemporaries&) = delete;
  GpuTemporaries& operator=(const GpuTemporaries&) = delete;

  // Appends the temporaries' views to a launch's arguments (`by_value`,
  // which holds the call's arguments) for a launch on `stream`. Throws
  // GpuError when the device has no room.
  void append(std::vector<kiln_arg>& by_value, CudaDriver::Stream stream);

 private:
  struct Buffer {
    std::uint64_t address = 0;
    std::size_t bytes = 0;
  };
  const lang::KernelInfo& info_;
  CudaDriver::Context context_;
  Metrics& metrics_;
  std::string metrics_name_;
  std::mutex mutex_;  // guards sets_, held while a launch's views are made
  std::map<CudaDriver::Stream, std::vector<Buffer>> sets_;
};

}  // namespace kiln::runtime
