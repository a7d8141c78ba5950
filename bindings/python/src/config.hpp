// kiln.Runtime(**settings): kiln::Config's fields by name, over the KILN_*
// variables' values (Config::from_env), and back (Runtime.config).
#pragma once

#include <nanobind/nanobind.h>

#include "kiln/runtime.hpp"

namespace kiln::python {

// Config::from_env() with `settings` applied; an unknown name or a value of
// the wrong kind is an Error naming the setting.
Config config_from(const nanobind::kwargs& settings);

// Every setting by the same names.
nanobind::dict config_dict(const Config& config);

}  // namespace kiln::python
