#include "cli/gpu/cuda_calls.hpp"

#include <atomic>
#include <stdexcept>
#include <thread>

namespace kiln::gpu_check {
namespace {

template <typename F>
void entry_point(const char* name, F& function) {
  void* pointer = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cuda_check(cudaGetDriverEntryPointByVersion(name, &pointer, CUDA_VERSION, cudaEnableDefault, &found),
             std::string("cudaGetDriverEntryPointByVersion(") + name + ")");
  if (found != cudaDriverEntryPointSuccess || !pointer)
    throw std::runtime_error(std::string("the CUDA driver has no ") + name + " of CUDA " +
                             std::to_string(CUDA_VERSION) + " (query result " + std::to_string(found) + ")");
  function = reinterpret_cast<F>(pointer);
}

std::chrono::milliseconds wait_limit{60'000};
std::atomic<bool> hung{false};

// Polls `query` (cudaStreamQuery, cudaEventQuery) until it is not
// cudaErrorNotReady: a spin at first (short waits, as a synchronize would),
// then sleeps; past the limit the device is hung.
template <typename Query>
void wait_for(const Query& query, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + wait_limit;
  for (int polls = 0;; ++polls) {
    const cudaError_t status = query();
    if (status != cudaErrorNotReady) return cuda_check(status, what);
    if (std::chrono::steady_clock::now() > deadline) {
      hung = true;
      throw std::runtime_error(what + ": still running after " + std::to_string(wait_limit.count() / 1000.0) +
                               " s: the device is hung (a grid barrier waiting for blocks that never ran?)");
    }
    if (polls > 10'000) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace

void set_wait_limit(std::chrono::milliseconds limit) { wait_limit = limit; }
bool device_hung() { return hung; }

void cuda_check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess)
    throw std::runtime_error(what + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

const Driver& Driver::get() {
  static const Driver driver = [] {
    Driver d;
    entry_point("cuModuleLoadData", d.module_load_data);
    entry_point("cuModuleGetFunction", d.module_get_function);
    entry_point("cuModuleUnload", d.module_unload);
    entry_point("cuLaunchKernel", d.launch_kernel);
    entry_point("cuLaunchCooperativeKernel", d.launch_cooperative_kernel);
    entry_point("cuGetErrorString", d.get_error_string);
    return d;
  }();
  return driver;
}

void Driver::check(CUresult result, const std::string& what) const {
  if (result == CUDA_SUCCESS) return;
  const char* text = nullptr;
  get_error_string(result, &text);
  throw std::runtime_error(what + ": " + (text ? text : "CUDA error " + std::to_string(result)));
}

Module::Module(const std::vector<char>& image, const std::string& symbol) {
  const Driver& driver = Driver::get();
  driver.check(driver.module_load_data(&module_, image.data()), "cuModuleLoadData");
  const CUresult found = driver.module_get_function(&function_, module_, symbol.c_str());
  if (found != CUDA_SUCCESS) {
    driver.module_unload(module_);
    driver.check(found, "cuModuleGetFunction(" + symbol + ")");
  }
}

Module::~Module() {
  if (!device_hung()) Driver::get().module_unload(module_);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  cuda_check(cudaMalloc(&data_, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes");
}

// Not on a hung device: cudaFree waits for it (the process ends soon after, and the memory with it).
DeviceBuffer::~DeviceBuffer() {
  if (data_ && !device_hung()) cudaFree(data_);
}

EventTimer::EventTimer() {
  cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
  if (const cudaError_t status = cudaEventCreate(&stop_); status != cudaSuccess) {
    cudaEventDestroy(start_);
    cuda_check(status, "cudaEventCreate");
  }
}

EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void EventTimer::start() { cuda_check(cudaEventRecord(start_, cudaStreamPerThread), "cudaEventRecord"); }
void EventTimer::stop() { cuda_check(cudaEventRecord(stop_, cudaStreamPerThread), "cudaEventRecord"); }

double EventTimer::elapsed_ms() {
  wait_for([&] { return cudaEventQuery(stop_); }, "the timed launches");
  float ms = 0.0f;
  cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms;
}

void synchronize(const std::string& what) {
  wait_for([] { return cudaStreamQuery(cudaStreamPerThread); }, what);
}

}  // namespace kiln::gpu_check
