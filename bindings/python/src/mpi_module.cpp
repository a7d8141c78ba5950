// The extension module kiln._kiln_mpi, built only where MPI is found:
// kiln.Communicator over an MPI communicator (kiln/mpi.hpp). kiln.mpi makes
// one from an mpi4py communicator by its Fortran handle (Comm.py2f()), the
// one MPI handle that is an integer in every MPI implementation, so that
// neither mpi4py's headers nor an implementation's handle layout are needed.
#include <mpi.h>

#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "kiln/errors.hpp"
#include "kiln/mpi.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

std::string own_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  return {text, static_cast<std::size_t>(length)};
}

// The communicator behind `handle`, which mpi4py made with `library`: checked
// to be usable here, since a mistake would hang or crash inside MPI instead.
MPI_Comm comm_of(MPI_Fint handle, const std::string& library) {
  // Two MPI libraries in one process (mpi4py built against another MPI than
  // kiln) would read each other's handles as garbage.
  if (const std::string own = own_library(); own != library)
    throw kiln::Error("kiln.mpi: mpi4py runs on another MPI library than kiln was built with: mpi4py has '" +
                      library + "', kiln '" + own + "'; build mpi4py against kiln's MPI (scripts/python-requirements.txt)");
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw kiln::Error(std::string("kiln.mpi: MPI is ") + (finalized ? "already finalized" : "not initialized") +
                      " (importing mpi4py.MPI initializes it; MPI.Finalize() ends it)");
  const MPI_Comm comm = MPI_Comm_f2c(handle);
  if (comm == MPI_COMM_NULL) throw kiln::Error("kiln.mpi: the communicator is MPI.COMM_NULL");
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (inter) throw kiln::Error("kiln.mpi: an intercommunicator: collective resolution needs an intracommunicator");
  return comm;
}

}  // namespace

NB_MODULE(_kiln_mpi, m) {
  m.doc() = "kiln.Communicator over MPI, for kiln.mpi (built where MPI is found).";
  nb::module_::import_("kiln._kiln");  // registers kiln.Communicator, the base class
  nb::class_<kiln::MpiCommunicator, kiln::Communicator>(m, "MpiCommunicator",
                                                        "An MPI communicator (kiln/mpi.hpp), by its Fortran handle.")
      .def(
          "__init__",
          [](kiln::MpiCommunicator* self, MPI_Fint handle, const std::string& library) {
            new (self) kiln::MpiCommunicator(comm_of(handle, library));
          },
          "handle"_a, "library"_a,
          "handle: mpi4py's Comm.py2f(); library: mpi4py's MPI.Get_library_version(), which\n"
          "must be kiln's MPI library. Raises kiln.Error otherwise, and for MPI not (or no\n"
          "longer) initialized, MPI.COMM_NULL or an intercommunicator.");
}
