#!/bin/sh
# Runs the built kiln_mpi_bench on 1, 2 and 4 ranks of this machine.
#   KILN_BUILD_DIR=build bench/run_mpi_bench.sh [--rounds R]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
bench=$build/bench/kiln_mpi_bench
[ -x "$bench" ] || { echo "run_mpi_bench.sh: build $bench first (-DKILN_BUILD_BENCHMARKS=ON, MPI found)" >&2; exit 1; }
for ranks in 1 2 4; do
  "$root/tests/mpi/run_mpi_test.sh" "$ranks" "$bench" "$@"
done
