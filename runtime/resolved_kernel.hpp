// What a Kernel handle points at: the entry address, the parameter block for
// generic builds and what a call must look like. Owned by the Runtime.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "cache/key.hpp"
#include "kiln/arg.hpp"
#include "runtime/kernel_source.hpp"
#include "runtime/metrics.hpp"

namespace kiln::detail {

using EntryFn = int (*)(const kiln_arg* args, const kiln_value* params);

struct ResolvedKernel {
  EntryFn entry = nullptr;
  std::vector<kiln_value> params;       // read by generic builds; ignored by specialised ones
  const runtime::KernelInfo* info = nullptr;
  bool specialised = true;
  cache::Key key;
  std::string metrics_name;
  runtime::Metrics* metrics = nullptr;  // set when calls are timed
  mutable std::atomic<bool> called{false};
  mutable std::atomic<std::uint64_t> memory_hits{0};
};

}  // namespace kiln::detail
