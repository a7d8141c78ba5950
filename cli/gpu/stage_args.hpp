// A granule stage's arguments, as the stage passes them, and their copies
// in device memory. The stage's call stays the only place that knows each
// kernel's argument list: it is run once against a stand-in entry that keeps
// what it was given.
#pragma once

#include <cstddef>
#include <vector>

#include "cli/gpu/cuda_calls.hpp"
#include "granule/granule.hpp"
#include "kiln/kiln.hpp"

namespace kiln::gpu_check {

// The views stage.call passes (arrays point into the granule's fields).
std::vector<kiln_arg> arguments_of(Runtime& rt, const granule::Stage& stage);

// The stage's arrays copied to the device (scalars pass as they are):
// device() is what a GPU launch takes, host() what the CPU call took.
class DeviceArgs {
 public:
  explicit DeviceArgs(std::vector<kiln_arg> host);
  const std::vector<kiln_arg>& host() const { return host_; }
  const std::vector<kiln_arg>& device() const { return device_; }
  // Each array's bytes read back from the device (empty for a scalar).
  std::vector<std::vector<char>> fetch() const;

 private:
  std::vector<kiln_arg> host_, device_;
  std::vector<DeviceBuffer> buffers_;
};

}  // namespace kiln::gpu_check
