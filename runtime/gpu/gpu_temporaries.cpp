#include "runtime/gpu/gpu_temporaries.hpp"

#include "runtime/call/temporaries.hpp"

namespace kiln::runtime {

GpuTemporaries::GpuTemporaries(const lang::KernelInfo& info, CudaDriver::Context context, Metrics& metrics,
                               std::string metrics_name)
    : info_(info), context_(context), metrics_(metrics), metrics_name_(std::move(metrics_name)) {}

GpuTemporaries::~GpuTemporaries() {
  if (sets_.empty()) return;
  const CudaDriver& driver = CudaDriver::get();
  try {
    driver.make_current(context_);
  } catch (...) {
    return;  // the driver is gone (process end): so is the memory
  }
  for (auto& [stream, buffers] : sets_)
    for (const Buffer& b : buffers)
      if (b.address) driver.release(b.address);
}

void GpuTemporaries::append(std::vector<kiln_arg>& by_value, CudaDriver::Stream stream) {
  const CudaDriver& driver = CudaDriver::get();
  by_value.reserve(by_value.size() + info_.temporaries.size());
  std::lock_guard lock(mutex_);
  std::vector<Buffer>& buffers = sets_[stream];
  buffers.resize(info_.temporaries.size());
  for (std::size_t t = 0; t < info_.temporaries.size(); ++t) {
    const lang::TemporaryDecl& temp = info_.temporaries[t];
    const kiln_arg& like = by_value[temp.like];
    const std::size_t bytes = temporary_bytes(temp, like);
    Buffer& b = buffers[t];
    if (bytes > b.bytes) {
      if (b.address) {
        driver.synchronize(stream);  // launches queued before may still use it
        driver.release(b.address);
        b = {};
      }
      b.address = driver.allocate(bytes);
      b.bytes = bytes;
      metrics_.count_temporary_allocation(metrics_name_);
    }
    by_value.push_back(temporary_view(temp, like, static_cast<std::uintptr_t>(b.address)));
  }
}

}  // namespace kiln::runtime
