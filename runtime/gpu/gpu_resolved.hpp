// What a GpuKernel handle points at: the loaded function, its launch shape,
// the parameter block and what a launch must look like. Owned by the Runtime.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/key.hpp"
#include "kiln/arg.hpp"
#include "kiln/spec.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/gpu/gpu_temporaries.hpp"
#include "lang/parser.hpp"

namespace kiln::detail {

struct GpuResolved {
  const lang::KernelInfo* info = nullptr;
  std::vector<kiln_value> params;                    // the kernel's parameter block (one value at least)
  std::vector<std::optional<Spec::Strides>> strides;  // per argument: the specialised strides, checked on the host
  std::vector<std::int64_t> nproma;                  // per argument: its blocking (BoundSpec::nproma)
  std::vector<std::int64_t> nblks;                   // per argument: its block count, 0: any (BoundSpec::nblks)
  runtime::CudaDriver::Function function = nullptr;
  runtime::CudaDriver::Module module = nullptr;
  runtime::CudaDriver::Context context = nullptr;  // the device's primary context, retained at load
  std::unique_ptr<runtime::GpuTemporaries> temporaries;  // null when it declares none
  int grid = 0, block = 0;
  std::string arch;
  cache::Key key;
  std::string metrics_name;
};

}  // namespace kiln::detail
