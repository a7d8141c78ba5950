"""GT4Py programs compiled for CUDA through NVRTC, compile-only (no GPU is needed, nor can
one launch here): icon4py's 23 diffusion programs and the construct programs, translated as
for the CPU and compiled for sm_90 into kiln's cache, each entry checked to be a CUBIN for
sm_90; one as PTX for compute_90; a broken kernel gives NVRTC's log. Skipped, with the
reason, only where NVRTC cannot be loaded."""

import dataclasses
import importlib
import pathlib
import pkgutil
import struct

import numpy as np
import pytest

import kiln
import kiln.gt4py

gtx = pytest.importorskip("gt4py.next")
import icon4py.model.atmosphere.diffusion.stencils as stencils  # noqa: E402

from kiln.gt4py import grids, inputs  # noqa: E402
import programs as P  # noqa: E402
from test_constructs import CELLS_FROM_3, EDGES_FROM_2, LEVELS_FROM_1, ck, ek, levels, shifted, shifted_grid  # noqa: E402

PROGRAMS = sorted(m.name for m in pkgutil.iter_modules(stencils.__path__))
EM_CUDA = 190


@pytest.fixture(scope="module")
def nvrtc(backend):
    """Skips the module where kiln cannot load NVRTC (ToolchainError names why)."""
    runtime = backend.runtime
    runtime.register_kernel(
        "#pragma kiln kernel nvrtc_probe\n#pragma kiln array double x[n]\n#pragma kiln domain n\n"
        "kiln::for_each_column(0, n, [&](kiln::index_t c) { x(c) = 1.0; });\n",
        "nvrtc_probe.kiln",
    )
    try:
        runtime.precompile("nvrtc_probe", {"n": 4}, gpu="sm_90")
    except kiln.ToolchainError as missing:
        pytest.skip(f"no NVRTC here: {missing}")
    return backend


def stored(backend, key: str) -> bytes:
    """The binary of cache entry `key`: the payload lies at the entry file's offset 0 (docs/manual/cache.md)."""
    path = pathlib.Path(backend.runtime.config["cache_dir"]) / key[:2] / key[2:]
    return path.read_bytes()


def assert_cubin_for(binary: bytes, sm: int) -> None:
    assert binary[:4] == b"\x7fELF", binary[:16]
    (machine,) = struct.unpack_from("<H", binary, 18)
    (flags,) = struct.unpack_from("<I", binary, 48)
    assert machine == EM_CUDA
    assert (flags >> 8) & 0xFF == sm, hex(flags)  # CUDA 12.8 on: the SM number in e_flags' second byte


@pytest.fixture(scope="module")
def grid():
    return grids.simple_grid(6)


def test_all_23_programs_are_compiled():
    assert len(PROGRAMS) == 23


@pytest.mark.parametrize("name", PROGRAMS)
def test_diffusion_program_compiles_for_sm_90(nvrtc, grid, name):
    program = getattr(importlib.import_module(f"{stencils.__name__}.{name}"), name)
    arguments = inputs.program_inputs(program, grid, 3, inputs.Window(1, 1), order="F")
    key = kiln.gt4py.compile_for_gpu(nvrtc, program, offset_provider=grid.connectivities(), arch="sm_90", **arguments)
    assert_cubin_for(stored(nvrtc, key), 90)


@pytest.mark.parametrize(
    "program, make_args",
    [
        (P.math, lambda r: [ck(r), ck(r), ck(r)]),
        (P.missing_neighbours, lambda r: [ck(r), ek(r), ek(r), ek(r)]),
        (P.backward_pair, lambda r: [ck(r), ck(r), ck(r), ck(r), 1, P.N_LEVELS - 1]),
        (P.concat, lambda r: [ck(r), ck(r), 2, ck(r)]),
    ],
    ids=["math", "missing_neighbours", "backward_pair", "concat"],
)
def test_construct_programs_compile_for_sm_90(nvrtc, program, make_args):
    """Math builtins (the prelude's CUDA branch), skipped neighbours, a scan, concat_where."""
    args = make_args(np.random.default_rng(0))
    key = kiln.gt4py.compile_for_gpu(nvrtc, program, *args, offset_provider=P.grid(), arch="sm_90")
    assert_cubin_for(stored(nvrtc, key), 90)


def test_shifted_fields_and_a_column_of_levels_compile_for_sm_90(nvrtc):
    """Fields whose domain starts elsewhere than 0 (start parameters) over a sub-domain, and
    a scan over levels alone (one column's phase)."""
    rng = np.random.default_rng(4)
    e = shifted({P.Edge: EDGES_FROM_2, P.K: LEVELS_FROM_1}, rng)
    out = shifted({P.Cell: CELLS_FROM_3, P.K: LEVELS_FROM_1}, rng)
    key = kiln.gt4py.compile_for_gpu(nvrtc, P.neighbour_reads, e, out, 4, 11, 2, 5, offset_provider=shifted_grid())
    assert_cubin_for(stored(nvrtc, key), 90)
    key = kiln.gt4py.compile_for_gpu(nvrtc, P.column_sum, levels(rng), levels(rng), offset_provider={})
    assert_cubin_for(stored(nvrtc, key), 90)


def test_compute_90_gives_ptx(nvrtc):
    args = [ck(np.random.default_rng(1)) for _ in range(3)]
    key = kiln.gt4py.compile_for_gpu(nvrtc, P.math, *args, offset_provider=P.grid(), arch="compute_90")
    ptx = stored(nvrtc, key).decode("ascii", "replace")
    assert ".target sm_90" in ptx and f".entry kiln_{key}" in ptx


def test_a_broken_kernel_gives_nvrtcs_log(nvrtc):
    """The translation's kernel with a statement NVRTC cannot compile: CompileError with its
    log, naming the kernel's own file and the culprit."""
    from gt4py.next.otf import arguments

    args = [ck(np.random.default_rng(2)) for _ in range(2)]
    compile_time_args = arguments.CompileTimeArgs.from_concrete(*args, 0.5, args[0], offset_provider={})
    translated = nvrtc.compile(P.pointwise.definition_stage, compile_time_args)
    broken = type(translated)(
        dataclasses.replace(translated.template, program="pointwise_broken",
                            body=translated.template.body + "\nkiln::no_such_function();\n"),
        translated.runtime, translated.mode, translated.run_time,
    )
    with pytest.raises(kiln.CompileError) as failed:
        broken.precompile((*args, 0.5, args[0]), {}, "sm_90")
    assert "no_such_function" in failed.value.diagnostics
    assert "pointwise_broken_" in failed.value.diagnostics and "error" in failed.value.diagnostics


def test_an_unsupported_architecture_is_named(nvrtc):
    args = [ck(np.random.default_rng(3)) for _ in range(3)]
    with pytest.raises(kiln.Error, match="sm_35"):
        kiln.gt4py.compile_for_gpu(nvrtc, P.math, *args, offset_provider=P.grid(), arch="sm_35")
