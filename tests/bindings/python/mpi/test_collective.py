"""Collective resolution from Python (kiln.mpi, Runtime.kernels(requests, comm)) on 3 ranks,
each rank asking for its own sizes, as a domain decomposition does. Run under mpirun by
ctest (tests/bindings/python/CMakeLists.txt, bindings.python.mpi):
    tests/mpi/run_mpi_test.sh 3 env PYTHONPATH=build/bindings/python \\
        .venv/bin/python -m pytest tests/bindings/python/mpi -x -q -p no:cacheprovider
Every rank runs every test, in the same order: each test's collective calls are entered by
all. -x: a rank whose test fails exits, and mpirun then ends the others instead of leaving
them waiting in the next test's collective.
"""

import pathlib
import gc
import shutil
import sys
import tempfile

import numpy as np
import pytest
from mpi4py import MPI

import kiln
import kiln.mpi

COMM = MPI.COMM_WORLD
RANKS = 3
# stencil7 on nx points: every rank asks for the shared size, its own and its right
# neighbour's (two sizes asked by two ranks each), one of them twice.
SHARED_NX = 5


def own_sizes(rank: int) -> list[int]:
    return [SHARED_NX, 6 + rank, 6 + (rank + 1) % RANKS, 6 + rank]


DISTINCT = 1 + RANKS  # 5 and 6, 7, 8


def stencil(nx: int) -> dict:
    return dict(nx=nx, ny=4, nz=3, c0=0.5, cx=0.1, cy=0.15, cz=0.05)


def total(rt: kiln.Runtime, counter: str) -> list[int]:
    """Every rank's count of `counter` (metrics' total), in rank order."""
    return COMM.allgather(rt.metrics()["total"][counter])


@pytest.fixture(scope="module", autouse=True)
def three_ranks():
    assert COMM.size == RANKS, f"run on {RANKS} ranks (mpirun -np {RANKS}), got {COMM.size}"


@pytest.fixture(scope="module")
def shared_dir():
    """One folder every rank sees: rank 0 makes it, and removes it once all are done."""
    path = COMM.bcast(tempfile.mkdtemp(prefix="kiln-collective-") if COMM.rank == 0 else None)
    yield pathlib.Path(path)
    gc.collect()  # Runtimes that a caught error's traceback kept: closed before the folder goes
    COMM.Barrier()
    if COMM.rank == 0:
        shutil.rmtree(path)


@pytest.fixture
def cache_dir(shared_dir, request):
    """An empty cache of the test's own, shared by the ranks."""
    path = shared_dir / request.node.name
    if COMM.rank == 0:
        path.mkdir()
    COMM.Barrier()
    return path


def test_each_distinct_specialisation_compiles_once_across_ranks(cache_dir):
    rt = kiln.Runtime(cache_dir=cache_dir, log_level="off")
    sizes = own_sizes(COMM.rank)
    kernels = rt.kernels([kiln.Request("stencil7", stencil(nx)) for nx in sizes], MPI.COMM_WORLD)
    assert [k.name for k in kernels] == ["stencil7"] * len(sizes)
    assert sum(total(rt, "compiles")) == DISTINCT
    mine = len(set(sizes))
    assert rt.metrics()["total"]["compiles"] + rt.metrics()["total"]["peer_hits"] == mine

    # What a local kernel() gives this rank (from the cache the collective filled): the same
    # keys, and bitwise the same results, so each request got its own specialisation.
    local = kiln.Runtime(cache_dir=cache_dir, log_level="off")
    rng = np.random.default_rng(COMM.rank)
    for nx, k in zip(sizes, kernels):
        alone = local.kernel("stencil7", stencil(nx))
        assert k.key == alone.key
        x = rng.uniform(-1, 1, (3, 4, nx))
        out, expected = np.zeros_like(x), np.zeros_like(x)
        k(x, out)
        alone(x, expected)
        assert np.array_equal(out, expected) and np.any(out != 0)

    # Warm: a new Runtime on the same cache compiles nothing; rank 0 reads, the others receive.
    warm = kiln.Runtime(cache_dir=cache_dir, log_level="off")
    warm.kernels([kiln.Request("stencil7", stencil(nx)) for nx in sizes], COMM)
    assert sum(total(warm, "compiles")) == 0
    disk, peer = total(warm, "disk_hits"), total(warm, "peer_hits")
    assert disk[0] == len(set(own_sizes(0))) and disk[1:] == [0] * (RANKS - 1)
    assert peer[0] == 0 and peer[1:] == [len(set(own_sizes(r))) for r in range(1, RANKS)]


BROKEN = (
    "#pragma kiln kernel py_collective_broken\n#pragma kiln array double x[cells]\n"
    "#pragma kiln domain start end\n#pragma kiln size cells contains start end\nthis is not C++;\n"
)


def test_a_kernel_that_does_not_compile_raises_compile_error_on_every_rank(cache_dir):
    """Only rank 1 asks for anything, a kernel that does not compile; every rank raises the
    same class, with the compiler's diagnostics."""
    rt = kiln.Runtime(cache_dir=cache_dir, log_level="off")
    requests = []
    if COMM.rank == 1:
        requests.append(kiln.Request(rt.register_kernel(BROKEN, "broken.kiln"), start=0, end=4))
    with pytest.raises(kiln.CompileError, match="py_collective_broken") as raised:
        rt.kernels(requests, COMM)
    assert "broken.kiln:5" in raised.value.diagnostics


def test_requests_that_do_not_prepare_on_one_rank_fail_every_rank_alike(cache_dir):
    """Rank 2 asks for a kernel nobody registered: every rank raises UnknownKernelError
    naming it, and nothing is compiled."""
    rt = kiln.Runtime(cache_dir=cache_dir, log_level="off")
    name = "no_such_kernel" if COMM.rank == 2 else "stencil7"
    with pytest.raises(kiln.UnknownKernelError, match="no_such_kernel"):
        rt.kernels([kiln.Request(name, stencil(6))], COMM)
    assert sum(total(rt, "compiles")) == 0


def test_a_sub_communicator_resolves_among_its_own_ranks(cache_dir):
    """Ranks 0 and 2 together, rank 1 alone (a split): two groups, each compiling its own;
    kernels() takes the kiln.Communicator that kiln.mpi.communicator() made as well."""
    part = COMM.Split(color=COMM.rank % 2, key=COMM.rank)
    rt = kiln.Runtime(cache_dir=cache_dir, log_level="off")
    group = kiln.mpi.communicator(part)
    assert (group.rank, group.size) == (part.rank, part.size) == (COMM.rank // 2, 2 if COMM.rank != 1 else 1)
    rt.kernels([kiln.Request("stencil7", stencil(10 + COMM.rank % 2))], group)  # as made, too
    part.Free()
    assert total(rt, "compiles") == [1, 1, 0]  # 10 by rank 0 (for 0 and 2), 11 by rank 1


# Not collective: each rank on its own.
def test_what_is_not_a_communicator_is_refused_by_name():
    rt = kiln.Runtime(use_disk_cache=False, log_level="off")
    with pytest.raises(TypeError, match=r"must be an mpi4py.MPI.Comm .*got builtins.int"):
        rt.kernels([kiln.Request("stencil7", stencil(6))], 0)
    with pytest.raises(kiln.Error, match=r"MPI.COMM_NULL"):
        kiln.mpi.communicator(MPI.COMM_NULL)


def test_a_kiln_built_without_mpi_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "kiln._kiln_mpi", None)  # as if never built
    monkeypatch.delattr(kiln, "_kiln_mpi", raising=False)
    with pytest.raises(ImportError, match=r"this kiln was built without: no MPI was found"):
        kiln.mpi.communicator(COMM)
