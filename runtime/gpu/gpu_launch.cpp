// Kernels on NVIDIA GPUs: compiled for the device's architecture (or found in
// the cache), loaded through the driver, launched cooperatively on the
// caller's stream. Cooperative because the prelude ends every phase with a
// grid barrier, which needs every block resident: the grid is as many blocks
// as the device holds at once, and the threads stride over the domain.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "base/log.hpp"
#include "jit/nvrtc.hpp"
#include "kiln/errors.hpp"
#include "kiln/gpu_kernel.hpp"
#include "runtime/call/argument_errors.hpp"
#include "runtime/call/extents.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {
namespace {

constexpr int kBlock = 256;

// sm_<cc> when NVRTC knows it; else PTX for the newest architecture NVRTC
// knows below it, which the driver compiles for this device.
std::string arch_for(const runtime::CudaDevice& device) {
  const int cc = device.major * 10 + device.minor;
  const jit::Nvrtc* nvrtc = &runtime::compiler_or_throw<jit::Nvrtc>();
  const std::vector<int>& supported = nvrtc->supported();
  if (std::find(supported.begin(), supported.end(), cc) != supported.end()) return "sm_" + std::to_string(cc);
  int best = 0;
  for (int a : supported)
    if (a <= cc) best = std::max(best, a);
  if (best == 0)
    throw GpuError("kiln: " + device.name + " (sm_" + std::to_string(cc) + ") is older than anything NVRTC " +
                   nvrtc->version() + " compiles for");
  return "compute_" + std::to_string(best);
}

}  // namespace

GpuKernel Runtime::gpu_kernel(std::string_view name, const Spec& spec, Mode mode, int device) {
  if (impl_->config().check) {  // a GPU kernel cannot stop and report: check mode is the CPU's
    static std::once_flag said;
    std::call_once(said, [] { base::log().warn("KILN_CHECK: GPU kernels are built without bounds checks"); });
  }
  const runtime::CudaDriver& driver = runtime::CudaDriver::get();
  const runtime::CudaDevice gpu = driver.device(device);
  if (!gpu.cooperative) throw GpuError("kiln: " + gpu.name + " cannot launch cooperatively (grid barriers)");
  runtime::GpuKernels::Slot slot(std::string(name), mode, spec.canonical(), device);
  if (const detail::GpuResolved* loaded = impl_->gpu_kernels().find(slot)) return GpuKernel(loaded);
  const GpuTarget target{.backend = GpuBackend::cuda, .arch = arch_for(gpu)};
  runtime::Job job = impl_->prepare(name, spec, mode, &target);
  std::vector<char> binary;
  (void)impl_->precompile(job, &binary);
  impl_->metrics().record(job.metrics_name, "specialise", job.specialise_ms);

  auto resolved = std::make_unique<detail::GpuResolved>();
  const auto start = std::chrono::steady_clock::now();
  resolved->context = driver.use_device(device);
  resolved->function = driver.load(binary, job.symbol, resolved->module);
  impl_->metrics().record(job.metrics_name, "load", runtime::ms_since(start));
  resolved->info = job.info;
  resolved->params = job.bound.values.empty() ? std::vector<kiln_value>(1) : job.bound.values;
  resolved->strides = job.bound.strides;
  resolved->nproma = job.bound.nproma;
  resolved->nblks = job.bound.nblks;
  if (job.info->splits) {
    resolved->block = kBlock;
    resolved->grid = driver.resident_blocks(resolved->function, kBlock, gpu.multiprocessors);
    if (resolved->grid < 1) throw GpuError("kiln: " + job.metrics_name + " does not fit on " + gpu.name);
  } else {
    // A body that does not split its work through the phase helpers
    // (KernelInfo::splits, lang/splitting.hpp) would run whole on every GPU
    // thread, as on every CPU thread: one thread runs it, as on the CPU.
    resolved->block = 1;
    resolved->grid = 1;
  }
  resolved->arch = target.arch;
  resolved->key = job.key;
  resolved->metrics_name = job.metrics_name;
  if (!job.info->temporaries.empty())
    resolved->temporaries =
        std::make_unique<runtime::GpuTemporaries>(*job.info, resolved->context, impl_->metrics(), job.metrics_name);
  return GpuKernel(impl_->gpu_kernels().insert(std::move(slot), std::move(resolved)));
}

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

}  // namespace kiln
