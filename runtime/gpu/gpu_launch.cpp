// Launching a GPU kernel that resolve/gpu_kernel.cpp resolved: its
// arguments checked as a CPU call checks them, then launched cooperatively
// on the caller's stream. Cooperative because the prelude ends every phase
// with a grid barrier, which needs every block resident: the grid is as many
// blocks as the device holds at once, and the threads stride over the domain.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "kiln/errors.hpp"
#include "kiln/gpu_kernel.hpp"
#include "lang/binder.hpp"
#include "runtime/call/argument_errors.hpp"
#include "runtime/call/extents.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/gpu/gpu_resolved.hpp"

namespace kiln {

// The arguments travel by value: the driver copies kernel parameters when it
// queues the launch, so nothing here has to outlive this call.
void GpuKernel::launch(void* stream, std::span<const kiln_arg> args) const {
  if (!resolved_) throw Error("kiln: launch of an empty GpuKernel handle");
  const detail::GpuResolved& k = *resolved_;
  if (args.size() != k.info->args.size()) runtime::bad_count(*k.info, args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const lang::ArgDecl& decl = k.info->args[i];
    const int rank = lang::passed_rank(decl.rank, k.nproma[i]);
    if (args[i].type != static_cast<std::int32_t>(decl.type) || args[i].rank != rank)
      runtime::bad_arg(*k.info, i, args[i], k.nproma[i]);
    const auto& fixed = k.strides[i];
    if ((fixed && !std::equal(fixed->begin(), fixed->end(), args[i].strides, args[i].strides + args[i].rank)) ||
        (k.nproma[i] > 0 && args[i].shape[0] != k.nproma[i]) ||
        (k.nblks[i] > 0 && args[i].shape[rank - 1] != k.nblks[i]))
      runtime::bad_strides(*k.info, i, args[i], fixed, k.nproma[i], k.nblks[i]);
  }
  if (k.info->checked()) {  // a GPU kernel cannot refuse a call: its extents are checked here
    std::vector<const kiln_arg*> pointers;
    for (const kiln_arg& arg : args) pointers.push_back(&arg);
    runtime::check_extents(*k.info, pointers.data(), k.nproma, k.params.data());
  }
  std::vector<kiln_arg> by_value(args.begin(), args.end());  // kiln_gpu_args: kiln_arg a[n], temporaries last
  const runtime::CudaDriver& driver = runtime::CudaDriver::get();
  driver.make_current(k.context);
  const runtime::CudaDriver::Stream queue = stream ? stream : runtime::CudaDriver::kPerThreadStream;
  if (k.temporaries) k.temporaries->append(by_value, queue);
  if (by_value.empty()) by_value.emplace_back();
  void* params[] = {by_value.data(), const_cast<kiln_value*>(k.params.data())};
  driver.launch_cooperative(k.function, k.grid, k.block, queue, params);
}

const std::string& GpuKernel::name() const { return resolved_->info->name; }
const std::string& GpuKernel::arch() const { return resolved_->arch; }
std::string GpuKernel::key() const { return resolved_->key.hex(); }
int GpuKernel::grid() const { return resolved_->grid; }
int GpuKernel::block() const { return resolved_->block; }
std::span<const kiln_value> GpuKernel::parameters() const { return resolved_->params; }

}  // namespace kiln
