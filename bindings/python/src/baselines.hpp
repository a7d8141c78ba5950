// What the call-overhead benchmark (bindings/python/bench) measures kiln's
// calls against: nanobind functions that take the same arguments and do
// nothing. Private (underscored): not part of the API.
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python {

void define_baselines(nanobind::module_& m);

}  // namespace kiln::python
