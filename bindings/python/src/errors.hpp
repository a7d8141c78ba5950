// kiln's C++ exceptions as Python exceptions: kiln.Error and one subclass per
// C++ class of kiln/errors.hpp, with the same names and the same tree
// (defined in kiln/errors.py).
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python {

// Imports kiln.errors and registers the translator that raises its classes.
void define_errors();

}  // namespace kiln::python
