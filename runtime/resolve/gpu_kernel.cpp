// GPU resolution: Runtime::gpu_kernel, a kernel on an NVIDIA GPU compiled for
// the device's architecture (or found in the cache) through the same
// resolution loop and build path as a CPU kernel: its obtain step ends at the
// bytes (precompile.cpp), its publish step loads them through the driver into
// the Runtime's table of loaded GPU kernels. Launching is gpu/'s
// (runtime/gpu/gpu_launch.cpp); resolving is resolve/'s, so that gpu/ never
// reaches back into the Runtime (no loop between runtime's folders).
#include <algorithm>
#include <chrono>
#include <mutex>

#include "base/log.hpp"
#include "jit/nvrtc.hpp"
#include "kiln/errors.hpp"
#include "kiln/gpu_kernel.hpp"
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

// The publish step's GPU kernel: `binary` loaded through the driver on
// `device`, with its parameters and launch shape.
std::unique_ptr<detail::GpuResolved> load_on(const runtime::CudaDriver& driver, const runtime::CudaDevice& gpu,
                                             int device, const runtime::Job& job, const std::vector<char>& binary,
                                             const std::string& arch, runtime::Metrics& metrics) {
  auto resolved = std::make_unique<detail::GpuResolved>();
  const auto start = std::chrono::steady_clock::now();
  resolved->context = driver.use_device(device);
  resolved->function = driver.load(binary, job.symbol, resolved->module);
  metrics.record(job.metrics_name, "load", runtime::ms_since(start));
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
  resolved->arch = arch;
  resolved->key = job.key;
  resolved->metrics_name = job.metrics_name;
  if (!job.info->temporaries.empty())
    resolved->temporaries =
        std::make_unique<runtime::GpuTemporaries>(*job.info, resolved->context, metrics, job.metrics_name);
  return resolved;
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
  runtime::Resolution one;
  one.add(impl_->prepare(name, spec, mode, &target), 0);
  const detail::GpuResolved* loaded = nullptr;
  const auto publish = [&](runtime::Job& job, const runtime::Outcome& outcome, bool, std::size_t) {
    loaded = impl_->gpu_kernels().insert(
        std::move(slot), load_on(driver, gpu, device, job, outcome.binary, target.arch, impl_->metrics()));
  };
  runtime::run(one, {.obtain = [&](runtime::Resolution& r) { impl_->obtain_bytes(r, true); }, .publish = publish},
               impl_->metrics());
  return GpuKernel(loaded);
}

}  // namespace kiln
