/* kiln from C over MPI: resolving kernels collectively (library kiln::c_mpi,
 * built where MPI is found). The communicator is a Fortran handle (MPI_Fint),
 * which Fortran passes as it is and C gets from MPI_Comm_c2f(comm). */
#ifndef KILN_KILN_MPI_H
#define KILN_KILN_MPI_H

#include <mpi.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kiln_kernels_get by every rank of `comm` together: rank 0 reads the cache,
 * the misses are compiled in parallel, one rank each, and the binaries reach
 * every rank through `comm` (docs/manual/mpi.md). Collective:
 * every rank calls it, each with its own requests (its own values, its own
 * count); each rank gets exactly the kernels it asked for, and
 * the union is resolved once. A request that fails on some rank, or a kernel
 * that does not compile, gives the same error on every rank. */
KILN_C_API kiln_status kiln_kernels_get_collective(kiln_runtime* runtime, const kiln_request* requests, size_t count,
                                                   MPI_Fint comm, kiln_kernel* out);

#ifdef __cplusplus
}
#endif
#endif /* KILN_KILN_MPI_H */
