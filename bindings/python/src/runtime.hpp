// kiln.Runtime: kernels by name, resolved from memory, the disk cache or the
// compiler; the handles it gives keep it alive.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include <nanobind/nanobind.h>

#include "kiln/runtime.hpp"
#include "signature.hpp"

namespace kiln::python {

struct Runtime {
  explicit Runtime(Config config) : runtime(std::move(config)) {}

  // A kernel's signature, read once per name (a registered name never
  // changes its declaration). Called with the GIL held, which guards the map.
  std::shared_ptr<const Signature> signature(const std::string& name);

  kiln::Runtime runtime;
  std::unordered_map<std::string, std::shared_ptr<const Signature>> signatures;
};

void define_runtime(nanobind::module_& m);

}  // namespace kiln::python
