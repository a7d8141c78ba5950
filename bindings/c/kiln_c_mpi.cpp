// The C ABI's collective resolution: MPI_Fint -> MPI_Comm -> kiln::MpiCommunicator.
#include "kiln/kiln_mpi.h"

#include "bindings/c/c_handles.hpp"
#include "kiln/mpi.hpp"

extern "C" kiln_status kiln_kernels_get_collective(kiln_runtime* runtime, const kiln_request* requests,
                                                   size_t count, MPI_Fint comm, kiln_kernel* out) {
  using kiln::c::require;
  return kiln::c::guard([&] {
    require(runtime && (count == 0 || (requests && out)),
            "kiln_kernels_get_collective: runtime, requests and out must not be NULL");
    const MPI_Comm c_comm = MPI_Comm_f2c(comm);
    require(c_comm != MPI_COMM_NULL, "kiln_kernels_get_collective: the communicator is MPI_COMM_NULL");
    kiln::MpiCommunicator group(c_comm);
    const std::vector<kiln::Kernel> got = runtime->rt.kernels(kiln::c::requests_of(requests, count), group);
    for (std::size_t i = 0; i < count; ++i) out[i] = kiln::c::handle_of(got[i]);
  });
}
