// kiln's C++ exceptions as Python exceptions: kiln.Error and one subclass per
// C++ class of kiln/errors.hpp, with the same names and the same tree
// (defined in kiln/errors.py).
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python {

// Imports kiln.errors and registers the translator that raises its classes;
// defines m._throw_error(kind, message), which throws the C++ class of
// kind (an ErrorKind's number) through that translator: how the tests check
// that every kind arrives as its Python class.
void define_errors(nanobind::module_& m);

// Inside a catch block of code that nanobind does not call (a type's
// tp_call slot): sets the Python error for the exception being handled, as
// nanobind's translators would.
void set_python_error() noexcept;

}  // namespace kiln::python
