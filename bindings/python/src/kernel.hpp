// kiln.Kernel, a resolved kernel called from Python, and kiln.Bound, the same
// kernel bound to its arguments for calls that repeat on the same arrays.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <nanobind/nanobind.h>

#include "arguments.hpp"
#include "call_buffer.hpp"
#include "kiln/kernel.hpp"
#include "signature.hpp"

namespace kiln::python {

struct Kernel {
  kiln::Kernel handle;
  std::shared_ptr<const Signature> signature;
  // The Python Runtime that resolved it: a handle keeps it alive, so no
  // handle ever points into a Runtime that has ended.
  nanobind::object runtime;

  void call(nanobind::args args) const;
  void run_on(int threads, nanobind::args args) const;
};

struct Bound {
  nanobind::object kernel;  // the Python Kernel, which keeps `target` and the Runtime alive
  const Kernel* target = nullptr;
  nanobind::tuple objects;  // the bound arguments, alive while this lives
  std::vector<kiln_arg> args;  // as converted when bound
  std::vector<std::size_t> numpy_slots;   // re-read at every call: a NumPy array may be resized or reshaped
  std::vector<std::size_t> scalar_slots;  // a call may give new values
  std::vector<DlpackArray> imports;       // DLPack producers' memory, held for as long as this lives

  void call(nanobind::args scalars) const;
};

// Binds `args` to the Kernel `self`: every conversion and check that a later
// call need not repeat is done here, once.
Bound bind(nanobind::handle self, nanobind::args args);

// Converts and runs; the GIL is released while the kernel runs.
// threads: 0 for the handle's own count (Config::threads).
void run(const kiln::Kernel& handle, const CallBuffer& buffer, int threads);

void define_kernel(nanobind::module_& m);

}  // namespace kiln::python
