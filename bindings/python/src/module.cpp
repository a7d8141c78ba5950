// The extension module kiln._kiln; the package kiln (kiln/__init__.py)
// re-exports what it defines.
#define KILN_PYTHON_IMPORT_NUMPY
#include "numpy_api.hpp"  // first: it includes Python.h

#include <nanobind/nanobind.h>

#include "baselines.hpp"
#include "cache.hpp"
#include "declaration.hpp"
#include "errors.hpp"
#include "group.hpp"
#include "kernel.hpp"
#include "request.hpp"
#include "runtime.hpp"

namespace nb = nanobind;

namespace {

// import_array() is a macro that returns from the function it is in.
bool import_numpy() {
  import_array1(false);
  return true;
}

}  // namespace

NB_MODULE(_kiln, m) {
  if (!import_numpy()) throw nb::python_error();
  m.doc() = "kiln's C++ runtime for Python: specialise, compile and cache stencil kernels, call them on NumPy arrays.";
  m.attr("__version__") = KILN_PYTHON_VERSION;
  kiln::python::define_errors(m);
  kiln::python::define_request(m);  // first: Mode is a default argument of what follows
  kiln::python::define_declaration(m);
  kiln::python::define_kernel(m);
  kiln::python::define_group(m);  // before Runtime: its kernels() names it
  kiln::python::define_runtime(m);
  kiln::python::define_baselines(m);
  kiln::python::define_cache(m);
}
