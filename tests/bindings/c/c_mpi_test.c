/* Collective resolution from C over MPI (kiln/kiln_mpi.h), on 4 ranks: every
 * rank gets a kernel that runs and computes the same; a kernel that does not
 * compile gives KILN_ERROR_COMPILE on every rank, and nobody hangs. The
 * communicator goes in as a Fortran handle, as Fortran passes it. */
#define _POSIX_C_SOURCE 200809L
#include <kiln/kiln_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* kScale =
    "#pragma kiln kernel c_mpi_scale\n"
    "#pragma kiln array double y[1]\n"
    "#pragma kiln domain n\n"
    "#pragma kiln static double factor\n"
    "kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) *= factor; });\n";
static const char* kBroken =
    "#pragma kiln kernel c_mpi_broken\n"
    "#pragma kiln array double y[1]\n"
    "#pragma kiln domain n\n"
    "#pragma kiln static double factor\n"
    "kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) = missing * factor; });\n";

int main(int argc, char** argv) {
  int rank = 0, failures = 0, total = 0;
  kiln_runtime* rt = NULL;
  kiln_spec* spec = NULL;
  kiln_request requests[2];
  kiln_kernel got[2] = {NULL, NULL};
  double y[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  kiln_arg arg;
  kiln_status status;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (kiln_runtime_create(&rt) != KILN_OK || kiln_register_kernel(rt, kScale, "scale.kiln", NULL) != KILN_OK ||
      kiln_register_kernel(rt, kBroken, "broken.kiln", NULL) != KILN_OK || kiln_spec_create(&spec) != KILN_OK ||
      kiln_spec_set_int(spec, "n", 4) != KILN_OK || kiln_spec_set_double(spec, "factor", 3.0) != KILN_OK) {
    fprintf(stderr, "rank %d: set-up failed: %s\n", rank, kiln_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  requests[0].name = "c_mpi_scale", requests[0].spec = spec, requests[0].mode = KILN_SPECIALISED;
  requests[1].name = "c_mpi_scale", requests[1].spec = spec, requests[1].mode = KILN_GENERIC;
  status = kiln_kernels_get_collective(rt, requests, 2, MPI_Comm_c2f(MPI_COMM_WORLD), got);
  if (status != KILN_OK) fprintf(stderr, "rank %d: %s\n", rank, kiln_last_error()), ++failures;
  if (kiln_array_c(y, KILN_F64, 1, shape, &arg) != KILN_OK || kiln_call(got[0], &arg, 1) != KILN_OK ||
      kiln_call(got[1], &arg, 1) != KILN_OK || y[3] != 36.0)
    fprintf(stderr, "rank %d: the kernels did not run: %s (y[3] = %g)\n", rank, kiln_last_error(), y[3]), ++failures;

  requests[1].name = "c_mpi_broken";
  status = kiln_kernels_get_collective(rt, requests, 2, MPI_Comm_c2f(MPI_COMM_WORLD), got);
  if (status != KILN_ERROR_COMPILE || strstr(kiln_last_error(), "broken.kiln:5:") == NULL)
    fprintf(stderr, "rank %d: expected a compile error, got %d: %s\n", rank, (int)status, kiln_last_error()), ++failures;
  status = kiln_kernels_get_collective(rt, requests, 2, MPI_Comm_c2f(MPI_COMM_NULL), got);
  if (status != KILN_ERROR_INVALID_ARGUMENT || strstr(kiln_last_error(), "MPI_COMM_NULL") == NULL)
    fprintf(stderr, "rank %d: MPI_COMM_NULL accepted: %d\n", rank, (int)status), ++failures;

  kiln_spec_destroy(spec);
  kiln_runtime_destroy(rt);
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(total == 0 ? "c_mpi_test: every rank passed\n" : "c_mpi_test: %d failures\n", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
