// kiln.Declaration, kiln.Argument, kiln.Parameter: what a kernel's
// #pragma kiln lines declare (Runtime.declaration), read-only.
#pragma once

#include <nanobind/nanobind.h>

namespace kiln::python {

void define_declaration(nanobind::module_& m);

}  // namespace kiln::python
