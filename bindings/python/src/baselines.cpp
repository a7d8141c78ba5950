#include "baselines.hpp"

namespace nb = nanobind;

namespace kiln::python {

void define_baselines(nb::module_& m) {
  // The same calling convention as Kernel.__call__ and Bound.__call__
  // (a method taking *args): the difference is what kiln adds.
  struct NoOp {};
  nb::class_<NoOp>(m, "_NoOp", "A no-op with Kernel.__call__'s signature, for the call-overhead benchmark.")
      .def(nb::init<>())
      .def("__call__", [](const NoOp&, const nb::args&) {});
}

}  // namespace kiln::python
