// One (kernel, specialisation, mode) on its way to a binary: everything the
// cache key stands for, computed without generating source (resolve/prepare.cpp).
#pragma once

#include <optional>
#include <string>

#include "cache/key.hpp"
#include "kiln/runtime.hpp"
#include "kiln/spec.hpp"
#include "runtime/gpu/gpu_target.hpp"
#include "lang/binder.hpp"
#include "lang/parser.hpp"

namespace kiln::runtime {

// The name of a CPU binary's entry point: unique per key, so binaries of
// several keys never clash (and a bundle's member must define its own key's).
inline std::string entry_symbol(const cache::Key& key) { return "kiln_" + key.hex(); }

struct Job {
  std::string name;  // as requested
  Spec spec;
  Mode mode = Mode::specialised;
  const lang::KernelInfo* info = nullptr;
  lang::BoundSpec bound;
  cache::Key key;
  std::string symbol;
  std::string metrics_name;
  double specialise_ms = 0.0;  // binding; a miss adds generating the source
  std::optional<GpuJob> gpu;   // set for a GPU build
  std::string opt_level;       // a CPU build's level when not Config::opt_level (tiered start's stand-ins)
  bool specialised() const { return mode == Mode::specialised; }
};

}  // namespace kiln::runtime
