// The CUDA this tool calls itself: the runtime API (linked: libcudart), and
// the few driver functions of the raw baselines, taken from the runtime with
// cudaGetDriverEntryPointByVersion, so that the binary never links libcuda
// and starts on a machine without NVIDIA's driver (--prepare, the message
// that there is no GPU). kiln itself loads libcuda with dlopen.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace kiln::gpu_check {

// Throws std::runtime_error naming `what` and CUDA's message unless cudaSuccess.
void cuda_check(cudaError_t status, const std::string& what);

// The driver functions the baselines call, with the signatures of the
// headers this tool was compiled with (CUDA_VERSION).
struct Driver {
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuLaunchCooperativeKernel) launch_cooperative_kernel = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;

  // Looked up once; throws std::runtime_error naming a function the driver lacks.
  static const Driver& get();
  // Throws std::runtime_error naming `what` and the driver's message unless CUDA_SUCCESS.
  void check(CUresult result, const std::string& what) const;
};

// A module loaded from an image, unloaded when this goes.
class Module {
 public:
  Module(const std::vector<char>& image, const std::string& symbol);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function() const { return function_; }

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

// Device memory, freed when this goes.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) { other.data_ = nullptr; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A pair of events on the calling thread's default stream (where kiln's
// launches with a null stream go): elapsed() is the milliseconds between
// start() and stop(), waiting for stop.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  void stop();
  double elapsed_ms();

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Waits for the calling thread's default stream; throws what a kernel raised.
// A wait longer than the limit throws too, and marks the device hung.
void synchronize(const std::string& what);

// How long a wait for the device may take (--wait-limit) before the device
// is called hung (a grid barrier whose blocks are not all resident never
// returns): then the kernel still runs, and every later wait would hang too.
void set_wait_limit(std::chrono::milliseconds limit);
bool device_hung();

}  // namespace kiln::gpu_check
