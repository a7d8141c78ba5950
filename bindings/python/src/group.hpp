// kiln.Communicator: kiln/collective.hpp's group of processes, what
// Runtime.kernels(requests, group) resolves over. This module binds it
// without a constructor: the MPI one comes from kiln._kiln_mpi (built where
// MPI is found, mpi_module.cpp), so that `import kiln` needs no MPI.
#pragma once

#include <nanobind/nanobind.h>

#include "kiln/collective.hpp"

namespace kiln::python {

void define_group(nanobind::module_& m);

// `group` as a Communicator: a kiln.Communicator as it is, anything else
// through kiln.mpi.communicator() (an mpi4py communicator; that function
// says what is missing or wrong). `holder` keeps the object alive.
Communicator& group_of(nanobind::handle group, nanobind::object& holder);

}  // namespace kiln::python
