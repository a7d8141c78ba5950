#include "runtime/gpu/cuda_driver.hpp"

#include <dlfcn.h>

#include "kiln/errors.hpp"

namespace kiln::runtime {

// The driver API's C functions, declared here: kiln builds without CUDA's
// headers. These entry points are the driver's stable ABI (the unversioned
// names dlsym finds are the ones whose signatures never changed; the memory
// functions are the _v2 ones, of 64-bit device pointers).
struct CudaDriver::Api {
  using Result = int;
  void* handle = nullptr;
  Result (*GetErrorString)(Result, const char**);
  Result (*Init)(unsigned int);
  Result (*DeviceGetCount)(int*);
  Result (*DeviceGet)(int*, int);
  Result (*DeviceGetName)(char*, int, int);
  Result (*DeviceGetAttribute)(int*, int, int);
  Result (*DevicePrimaryCtxRetain)(void**, int);
  Result (*CtxGetCurrent)(void**);
  Result (*CtxSetCurrent)(void*);
  Result (*ModuleLoadData)(void**, const void*);
  Result (*ModuleGetFunction)(void**, void*, const char*);
  Result (*OccupancyMaxActiveBlocksPerMultiprocessor)(int*, void*, int, std::size_t);
  Result (*MemAlloc)(std::uint64_t*, std::size_t);  // cuMemAlloc_v2: 64-bit CUdeviceptr
  Result (*MemFree)(std::uint64_t);                 // cuMemFree_v2
  Result (*StreamSynchronize)(void*);
  Result (*LaunchCooperativeKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    void*, void**);
};

namespace {

// CUdevice_attribute values (cuda.h).
constexpr int kMultiprocessorCount = 16;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kCooperativeLaunch = 95;

template <typename F>
void bind(const CudaDriver::Api& api, const char* name, F& function) {
  function = reinterpret_cast<F>(::dlsym(api.handle, name));
  if (!function) throw GpuError(std::string("kiln: the CUDA driver lacks ") + name + " (too old a driver?)");
}

std::shared_ptr<CudaDriver::Api> load_api() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw GpuError(std::string("kiln: no CUDA driver (libcuda.so.1: ") + ::dlerror() +
                   "); NVIDIA's driver is needed to run kernels on a GPU (compiling for one needs only NVRTC)");
  auto api = std::make_shared<CudaDriver::Api>();
  api->handle = handle;  // never dlclosed: launched kernels may run until exit
  bind(*api, "cuGetErrorString", api->GetErrorString);
  bind(*api, "cuInit", api->Init);
  bind(*api, "cuDeviceGetCount", api->DeviceGetCount);
  bind(*api, "cuDeviceGet", api->DeviceGet);
  bind(*api, "cuDeviceGetName", api->DeviceGetName);
  bind(*api, "cuDeviceGetAttribute", api->DeviceGetAttribute);
  bind(*api, "cuDevicePrimaryCtxRetain", api->DevicePrimaryCtxRetain);
  bind(*api, "cuCtxGetCurrent", api->CtxGetCurrent);
  bind(*api, "cuCtxSetCurrent", api->CtxSetCurrent);
  bind(*api, "cuModuleLoadData", api->ModuleLoadData);
  bind(*api, "cuModuleGetFunction", api->ModuleGetFunction);
  bind(*api, "cuOccupancyMaxActiveBlocksPerMultiprocessor", api->OccupancyMaxActiveBlocksPerMultiprocessor);
  bind(*api, "cuMemAlloc_v2", api->MemAlloc);
  bind(*api, "cuMemFree_v2", api->MemFree);
  bind(*api, "cuStreamSynchronize", api->StreamSynchronize);
  bind(*api, "cuLaunchCooperativeKernel", api->LaunchCooperativeKernel);
  return api;
}

void check(const CudaDriver::Api& api, CudaDriver::Api::Result result, const std::string& what) {
  if (result == 0) return;
  const char* text = nullptr;
  api.GetErrorString(result, &text);
  throw GpuError("kiln: " + what + ": " + (text ? text : "CUDA error " + std::to_string(result)));
}

}  // namespace

const CudaDriver& CudaDriver::get() {
  static const CudaDriver driver = [] {
    CudaDriver d;
    auto api = load_api();
    check(*api, api->Init(0), "cuInit (is there an NVIDIA GPU, and may this process use it?)");
    d.api_ = std::move(api);
    return d;
  }();
  return driver;
}

int CudaDriver::device_count() const {
  int count = 0;
  check(*api_, api_->DeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

CudaDevice CudaDriver::device(int ordinal) const {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    throw GpuError("kiln: no CUDA device " + std::to_string(ordinal) + " (this machine has " + std::to_string(count) +
                   ")");
  int handle = 0;
  check(*api_, api_->DeviceGet(&handle, ordinal), "cuDeviceGet");
  CudaDevice device;
  device.ordinal = ordinal;
  char name[256] = {};
  check(*api_, api_->DeviceGetName(name, sizeof name - 1, handle), "cuDeviceGetName");
  device.name = name;
  int cooperative = 0;
  check(*api_, api_->DeviceGetAttribute(&device.major, kComputeCapabilityMajor, handle), "cuDeviceGetAttribute");
  check(*api_, api_->DeviceGetAttribute(&device.minor, kComputeCapabilityMinor, handle), "cuDeviceGetAttribute");
  check(*api_, api_->DeviceGetAttribute(&device.multiprocessors, kMultiprocessorCount, handle), "cuDeviceGetAttribute");
  check(*api_, api_->DeviceGetAttribute(&cooperative, kCooperativeLaunch, handle), "cuDeviceGetAttribute");
  device.cooperative = cooperative != 0;
  return device;
}

CudaDriver::Context CudaDriver::use_device(int ordinal) const {
  int handle = 0;
  check(*api_, api_->DeviceGet(&handle, ordinal), "cuDeviceGet");
  void* primary = nullptr;
  check(*api_, api_->DevicePrimaryCtxRetain(&primary, handle), "cuDevicePrimaryCtxRetain");
  make_current(primary);
  return primary;
}

void CudaDriver::make_current(Context context) const {
  void* current = nullptr;
  check(*api_, api_->CtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != context) check(*api_, api_->CtxSetCurrent(context), "cuCtxSetCurrent");
}

CudaDriver::Function CudaDriver::load(std::span<const char> image, const std::string& symbol, Module& module) const {
  check(*api_, api_->ModuleLoadData(&module, image.data()), "cuModuleLoadData");
  void* function = nullptr;
  check(*api_, api_->ModuleGetFunction(&function, module, symbol.c_str()), "cuModuleGetFunction(" + symbol + ")");
  return function;
}

int CudaDriver::resident_blocks(Function function, int block, int multiprocessors) const {
  int per_multiprocessor = 0;
  check(*api_, api_->OccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, function, block, 0),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return per_multiprocessor * multiprocessors;
}

void CudaDriver::launch_cooperative(Function function, int grid, int block, Stream stream, void** params) const {
  check(*api_,
        api_->LaunchCooperativeKernel(function, static_cast<unsigned>(grid), 1, 1, static_cast<unsigned>(block), 1, 1,
                                      0, stream, params),
        "cuLaunchCooperativeKernel");
}

std::uint64_t CudaDriver::allocate(std::size_t bytes) const {
  std::uint64_t address = 0;
  check(*api_, api_->MemAlloc(&address, bytes), "cuMemAlloc of " + std::to_string(bytes) + " bytes");
  return address;
}

void CudaDriver::release(std::uint64_t address) const noexcept { (void)api_->MemFree(address); }

void CudaDriver::synchronize(Stream stream) const { check(*api_, api_->StreamSynchronize(stream), "cuStreamSynchronize"); }

}  // namespace kiln::runtime
