#!/usr/bin/env bash
# Runs an MPI test program on N ranks of this machine (more ranks than cores
# is fine: --oversubscribe). As root, OpenMPI wants --allow-run-as-root.
#   run_mpi_test.sh N PROGRAM [ARGS...]
set -euo pipefail
ranks=$1
shift
extra=(--oversubscribe)
if [[ $(id -u) -eq 0 ]]; then extra+=(--allow-run-as-root); fi
# Shared memory and loopback only: no network interface discovery in containers.
exec mpirun "${extra[@]}" --mca btl self,vader -np "$ranks" "$@"
