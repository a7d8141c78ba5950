"""Collective resolution from Python (kiln.mpi) against each rank resolving alone, on a warm
cache: what the ranks read from the cache folder, and how long a process's first resolution
takes (the slowest rank's).

Every rank asks for the same K specialisations of stencil7 (a decomposition whose parts have
one size). One resolution per process: a process keeps the entries it mapped (runtime/load/
mapped_entries.hpp), so a second Runtime in it would time the lookups of those mappings, not
the cache. Prints "<way> <ranks> <kernels> <ms> <cache reads of all ranks>"; nothing is asserted.
Interleave the ways over new processes:

    mpi="tests/mpi/run_mpi_test.sh 3 env PYTHONPATH=build/bindings/python KILN_LOG_LEVEL=off"
    $mpi .venv/bin/python bindings/python/bench/collective.py fill /tmp/c
    for i in 1 2 3 4 5; do for way in collective alone; do
      $mpi .venv/bin/python bindings/python/bench/collective.py $way /tmp/c; done; done
"""

import argparse
import time

from mpi4py import MPI

import kiln

COMM = MPI.COMM_WORLD


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("way", choices=("fill", "collective", "alone"))
    parser.add_argument("cache_dir")
    parser.add_argument("--kernels", type=int, default=20)
    options = parser.parse_args()
    wanted = [
        kiln.Request("stencil7", nx=8 + i, ny=6, nz=4, c0=0.5, cx=0.1, cy=0.1, cz=0.1) for i in range(options.kernels)
    ]
    rt = kiln.Runtime(cache_dir=options.cache_dir, log_level="off")
    COMM.Barrier()
    start = time.perf_counter()
    rt.kernels(wanted) if options.way == "alone" else rt.kernels(wanted, COMM)
    seconds = COMM.allreduce(time.perf_counter() - start, op=MPI.MAX)
    reads = COMM.allreduce(rt.metrics()["total"]["disk_hits"])
    if COMM.rank == 0:
        print(f"{options.way} {COMM.size} {options.kernels} {seconds * 1e3:.2f} {reads}")


if __name__ == "__main__":
    main()
