// The CUDA driver API (libcuda.so.1), loaded with dlopen: one kiln build runs
// on machines without NVIDIA's driver, and there says what is missing. Only
// what loading and launching a kernel needs: devices, their primary
// contexts, modules from cached CUBIN/PTX, cooperative launches, and device
// memory for kernel temporaries.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace kiln::runtime {

struct CudaDevice {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability: sm_<major><minor>
  int multiprocessors = 0;
  bool cooperative = false;  // supports cooperative launches (grid barriers)
};

class CudaDriver {
 public:
  // The process's driver, initialised on first use. Throws GpuError naming
  // libcuda.so.1 and dlerror(), or cuInit's error, when there is none.
  static const CudaDriver& get();

  int device_count() const;
  // Throws GpuError for an ordinal with no device.
  CudaDevice device(int ordinal) const;

  using Module = void*;    // CUmodule
  using Function = void*;  // CUfunction
  using Stream = void*;    // CUstream; kPerThreadStream: the calling thread's default stream
  static inline Stream const kPerThreadStream = reinterpret_cast<Stream>(0x2);  // CU_STREAM_PER_THREAD

  using Context = void*;  // CUcontext
  // Retains the device's primary context (once per loaded kernel: the
  // driver counts retains) and makes it current on the calling thread.
  Context use_device(int ordinal) const;
  // Makes `context` current on the calling thread; a no-op when it is (the
  // launch path: threads other than the loading one find it this way).
  void make_current(Context context) const;
  // Loads a CUBIN or (NUL-terminated) PTX image into the current context and
  // looks `symbol` up. Throws GpuError with the driver's message.
  Function load(std::span<const char> image, const std::string& symbol, Module& module) const;
  // The largest grid whose blocks of `block` threads are all resident at
  // once: what a cooperative launch may use.
  int resident_blocks(Function function, int block, int multiprocessors) const;
  // Queues `function` on `stream`; returns once queued, never waits.
  void launch_cooperative(Function function, int grid, int block, Stream stream, void** params) const;

  // Device memory in the current context (kernel temporaries). allocate
  // throws GpuError; release ignores errors (it runs when kiln ends, maybe
  // after the driver has).
  std::uint64_t allocate(std::size_t bytes) const;
  void release(std::uint64_t address) const noexcept;
  // Waits for what is queued on `stream` (before memory it uses is released).
  void synchronize(Stream stream) const;

  struct Api;

 private:
  CudaDriver() = default;
  std::shared_ptr<const Api> api_;
};

}  // namespace kiln::runtime
