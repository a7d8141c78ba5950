/* Built with mpicc and pkg-config kiln-mpi alone against the installed kiln:
 * links kiln's collective resolution and runs (without MPI_Init: this checks
 * that the program and libkiln_c_mpi find their libraries, not MPI itself). */
#include <kiln/kiln_mpi.h>
#include <stdio.h>

int main(void) {
  /* volatile: the link must resolve the symbol, and the call is never made. */
  kiln_status (*volatile collective)(kiln_runtime*, const kiln_request*, size_t, MPI_Fint, kiln_kernel*) =
      kiln_kernels_get_collective;
  printf("c_mpi_consumer: %s\n", collective != NULL ? "ok" : "missing");
  return 0;
}
