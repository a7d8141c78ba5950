#include "cli/gpu/stage_args.hpp"

#include <cstdint>

namespace kiln::gpu_check {
namespace {

thread_local std::vector<kiln_arg> recorded;
thread_local std::size_t recorded_count = 0;

int record(const kiln_arg* const* args, const kiln_value*, const kiln_context*) {
  recorded.clear();
  for (std::size_t i = 0; i < recorded_count; ++i) recorded.push_back(*args[i]);
  return 0;
}

}  // namespace

std::vector<kiln_arg> arguments_of(Runtime& rt, const granule::Stage& stage) {
  std::vector<std::uint64_t> signature;
  for (const KernelArgument& a : rt.declaration(stage.kernel).arguments)
    signature.push_back(detail::signature_of(static_cast<std::int32_t>(a.type), a.rank));
  const detail::CallBlock block{.entry = record,
                                .params = nullptr,
                                .signature = signature.data(),
                                .count = signature.size(),
                                .out_of_line = false,
                                .threads = 1,
                                .owner = nullptr};
  recorded_count = signature.size();
  stage.call(Kernel(&block));
  return recorded;
}

DeviceArgs::DeviceArgs(std::vector<kiln_arg> host) : host_(std::move(host)), device_(host_) {
  buffers_.reserve(host_.size());
  for (std::size_t i = 0; i < host_.size(); ++i) {
    if (host_[i].rank == 0) continue;
    const DeviceBuffer& buffer = buffers_.emplace_back(extent_bytes(host_[i]));
    cuda_check(cudaMemcpy(buffer.data(), host_[i].data, buffer.bytes(), cudaMemcpyHostToDevice),
               "cudaMemcpy to the device");
    device_[i].data = buffer.data();
  }
}

std::vector<std::vector<char>> DeviceArgs::fetch() const {
  std::vector<std::vector<char>> out(device_.size());
  for (std::size_t i = 0; i < device_.size(); ++i) {
    if (device_[i].rank == 0) continue;
    out[i].resize(extent_bytes(device_[i]));
    cuda_check(cudaMemcpy(out[i].data(), device_[i].data, out[i].size(), cudaMemcpyDeviceToHost),
               "cudaMemcpy from the device");
  }
  return out;
}

}  // namespace kiln::gpu_check
