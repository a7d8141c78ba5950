"""Collective resolution from Python over mpi4py: kiln/mpi.hpp's MpiCommunicator.

    from mpi4py import MPI
    import kiln
    rt = kiln.Runtime()
    kernels = rt.kernels(requests, MPI.COMM_WORLD)   # every rank, each its own requests

Runtime.kernels(requests, group) takes the mpi4py communicator itself and calls
communicator() below; call it yourself to check a communicator once, up front. The MPI part
is a module of its own (kiln._kiln_mpi), built only where MPI was found, so that `import
kiln` needs neither MPI nor mpi4py; this module imports neither until asked.
"""

from __future__ import annotations

import sys

from ._kiln import Communicator


def communicator(comm) -> Communicator:
    """`comm` (an mpi4py.MPI.Comm, an intracommunicator) as a kiln.Communicator.

    Raises TypeError for anything else, ImportError when this kiln was built without
    MPI, and kiln.Error when mpi4py runs on another MPI library than kiln, when MPI is
    not initialized, or for MPI.COMM_NULL or an intercommunicator.
    """
    if isinstance(comm, Communicator):
        return comm
    # An mpi4py communicator's module is imported already: no need to import (and so
    # initialize) MPI only to say that something else is not one.
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not isinstance(comm, mpi.Comm):
        raise TypeError(
            f"kiln: a collective resolution's group must be an mpi4py.MPI.Comm (or a "
            f"kiln.Communicator), got {type(comm).__module__}.{type(comm).__qualname__}"
        )
    try:
        from . import _kiln_mpi
    except ModuleNotFoundError as e:  # not built; any other ImportError (MPI's library missing) says itself
        if e.name != f"{__package__}._kiln_mpi":
            raise
        raise ImportError(
            "kiln: collective resolution needs kiln's MPI module (kiln._kiln_mpi), which this "
            "kiln was built without: no MPI was found when it was built (Debian: apt-get install "
            f"libopenmpi-dev, then rebuild kiln) ({e})"
        ) from e
    return _kiln_mpi.MpiCommunicator(comm.py2f(), mpi.Get_library_version())
