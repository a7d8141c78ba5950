"""kiln's GT4Py backend on 2 ranks, resolving over MPI (kiln.gt4py.backend(comm=...)): one
icon4py diffusion program, each rank on its own fields of the same grid (a decomposition
whose parts have one size), as icon4py's ranks call it. Run under mpirun by ctest
(bindings.gt4py.on_ranks; tests/bindings/gt4py/CMakeLists.txt):
    tests/mpi/run_mpi_test.sh 2 env PYTHONPATH=build/bindings/python \\
        .venv/bin/python -m pytest tests/bindings/gt4py/mpi -x -q -p no:cacheprovider
Every rank runs every test in the same order; -x: a failing rank exits, mpirun ends the rest.
"""

import gc
import shutil
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

pytest.importorskip("icon4py.model.atmosphere.diffusion.stencils")
from icon4py.model.atmosphere.diffusion.stencils.calculate_nabla2_for_theta import (  # noqa: E402
    calculate_nabla2_for_theta as program,
)

import kiln.gt4py  # noqa: E402
from kiln.gt4py import grids, inputs  # noqa: E402

COMM = MPI.COMM_WORLD
RANKS = 2


@pytest.fixture(scope="module")
def cache_dir():
    """One kiln cache every rank shares: rank 0 makes it, and removes it once all are done."""
    assert COMM.size == RANKS, f"run on {RANKS} ranks (mpirun -np {RANKS}), got {COMM.size}"
    path = COMM.bcast(tempfile.mkdtemp(prefix="kiln-gt4py-ranks-") if COMM.rank == 0 else None)
    yield path
    gc.collect()  # Runtimes that a caught error's traceback kept: closed before the folder goes
    COMM.Barrier()
    if COMM.rank == 0:
        shutil.rmtree(path)


def test_each_rank_matches_embedded_with_one_compile_in_all(cache_dir):
    backend = kiln.gt4py.backend(cache_dir=cache_dir, log_level="off", comm=COMM)
    grid = grids.simple_grid(6)
    seed = 10 + COMM.rank  # each rank its own values
    got = inputs.program_inputs(program, grid, seed, inputs.Window(1, 1), order="F")
    want = inputs.program_inputs(program, grid, seed, inputs.Window(1, 1), order="F")
    program.with_backend(backend)(**got, offset_provider=grid.connectivities())
    program.with_backend(None)(**want, offset_provider=grid.connectivities())
    np.testing.assert_allclose(got["z_temp"].asnumpy(), want["z_temp"].asnumpy(), rtol=1e-12, atol=0)
    results = COMM.allgather(got["z_temp"].asnumpy())
    assert not np.array_equal(results[0], results[1])  # each rank computed on its own fields
    totals = backend.runtime.metrics()["total"]
    assert sum(COMM.allgather(totals["compiles"])) == 1
    assert sum(COMM.allgather(totals["peer_hits"])) == RANKS - 1


def test_a_call_one_rank_refuses_raises_on_every_rank_and_leaves_none_waiting(cache_dir):
    """Rank 1 gives a tuple scan outputs of two shapes, which the backend refuses before kiln's
    collective; rank 0's call is a good one. Rank 1 raises its ValueError, rank 0 kiln.Error
    naming rank 1, neither waits for the other; then a call good on both resolves as usual."""
    import gt4py.next as gtx
    import programs as P  # tests/bindings/gt4py/programs.py (conftest puts it on the path)

    backend = kiln.gt4py.backend(cache_dir=cache_dir, log_level="off", comm=COMM)
    rng = np.random.default_rng(COMM.rank)

    def ck(levels=P.N_LEVELS):
        return gtx.as_field([P.Cell, P.K], rng.uniform(-1, 1, (P.N_CELLS, levels)))

    run = P.unpacked_pair.with_backend(backend)
    refused, message = (ValueError, "must have one shape") if COMM.rank == 1 else (kiln.Error, "rank 1 refused")
    with pytest.raises(refused, match=message):
        run(ck(), ck(), ck(), ck(P.N_LEVELS + COMM.rank), offset_provider=P.grid())

    a, b = ck(), ck()
    got, want = [ck(), ck()], [ck(), ck()]
    run(a, b, *got, offset_provider=P.grid())
    P.unpacked_pair.with_backend(None)(a, b, *want, offset_provider=P.grid())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-12, atol=0)


def test_a_backend_refuses_what_is_not_a_communicator(cache_dir):
    with pytest.raises(TypeError, match=r"must be an mpi4py.MPI.Comm .*got builtins.str"):
        kiln.gt4py.backend(cache_dir=cache_dir, log_level="off", comm="world")
