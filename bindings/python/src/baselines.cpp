#include "baselines.hpp"

namespace nb = nanobind;

namespace kiln::python {

void define_baselines(nb::module_& m) {
  // A nanobind function taking what Kernel's call takes (any positional
  // arguments): the difference is what kiln adds.
  m.def("_noop", [](const nb::args&) {}, "A no-op taking *args, for the call-overhead benchmark.");
}

}  // namespace kiln::python
