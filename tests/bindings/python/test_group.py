"""Runtime.kernels(requests, group) in a process without MPI: `import kiln` loads neither
kiln's MPI module nor an MPI library, and a group that is not a communicator is refused by
name without importing mpi4py (importing mpi4py.MPI would initialize MPI). The collective
itself runs under mpirun: mpi/test_collective.py (ctest bindings.python.mpi)."""

import subprocess
import sys

import pytest

import kiln

SCRIPT = """
import pathlib, sys
import kiln
rt = kiln.Runtime(use_disk_cache=False, log_level="off")
try:
    rt.kernels([kiln.Request("stencil7", nx=4, ny=4, nz=4, c0=1.0, cx=0.0, cy=0.0, cz=0.0)], object())
except TypeError as e:
    print("refused:", e)
maps = pathlib.Path("/proc/self/maps").read_text()
print("mpi4py imported:", any(m.startswith("mpi4py") for m in sys.modules))
print("kiln._kiln_mpi imported:", "kiln._kiln_mpi" in sys.modules)
print("libmpi mapped:", "libmpi" in maps)
"""


def test_kiln_without_a_communicator_loads_no_mpi():
    # A fresh interpreter: this test session may have imported anything.
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    assert "refused: kiln: a collective resolution's group must be an mpi4py.MPI.Comm" in out
    assert "got builtins.object" in out
    assert "mpi4py imported: False" in out
    assert "kiln._kiln_mpi imported: False" in out
    assert "libmpi mapped: False" in out


def test_a_communicator_comes_from_kiln_mpi_not_from_its_base_class():
    """kiln.Communicator is the base of kiln.mpi's; it has no constructor of its own."""
    with pytest.raises(TypeError, match="no constructor"):
        kiln.Communicator()
