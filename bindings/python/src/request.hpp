// kiln.Request: a kernel name, its specialisation and mode, read from Python
// values (what Runtime.kernel takes, and Runtime.kernels takes a list of).
#pragma once

#include <nanobind/nanobind.h>

#include "kiln/runtime.hpp"

namespace kiln::python {

struct Request {
  KernelRequest request;
};

// spec: a mapping of parameter values (or None); values: more of them as
// keywords. A value is a bool, an int, a float, or a tuple of strides (in
// elements) for an array argument. run_time: names whose values are read at
// run time (Spec::run_time). strides_of: {array name: example array}, whose
// strides are fixed. mode: kiln.Mode, "specialised" or "generic". blocked:
// {array name: nproma, or an example array (nproma, ..., nblks)}: ICON's
// blocked layout (Spec::blocked, Spec::blocked_like), or None.
// Throws SpecError naming the parameter.
Request make_request(const std::string& name, nanobind::handle spec, nanobind::handle mode,
                     nanobind::handle run_time, nanobind::handle strides_of, const nanobind::kwargs& values,
                     nanobind::handle blocked = nanobind::none());

void define_request(nanobind::module_& m);

}  // namespace kiln::python
