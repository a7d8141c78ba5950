"""Every granule kernel against its NumPy reference (references.py), with its arrays in C
order, Fortran order and as strided views, passed without a copy: the outputs are checked in
the very arrays given to the call."""

import numpy as np
import pytest

from layouts import LAYOUTS, arguments_in_layout, arrays_of
from references import CASES

TOLERANCE = dict(rtol=1e-12, atol=1e-12)  # kernels may fuse multiply-adds and sum in another order


def run_case(runtime, kernel, case, layout, seed, strides_from_arrays=False, mode="specialised"):
    """Runs `case` on arrays in `layout`; returns the arguments after the call and what the
    outputs must hold."""
    spec, inputs, expected = case(np.random.default_rng(seed))
    arguments = arguments_in_layout(inputs, layout)
    strides_of = arrays_of(arguments) if strides_from_arrays else None
    runtime.kernel(kernel, spec, mode=mode, strides_of=strides_of)(*arguments.values())
    return arguments, expected


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,kernel,case", CASES, ids=[c[0] for c in CASES])
def test_specialised_on_the_arrays_strides(runtime, name, kernel, case, layout):
    arguments, expected = run_case(runtime, kernel, case, layout, seed=1, strides_from_arrays=True)
    for output, want in expected.items():
        np.testing.assert_allclose(arguments[output], want, **TOLERANCE, err_msg=f"{kernel}: {output} ({layout})")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,kernel,case", CASES, ids=[c[0] for c in CASES])
def test_generic(runtime, name, kernel, case, layout):
    arguments, expected = run_case(runtime, kernel, case, layout, seed=2, mode="generic")
    for output, want in expected.items():
        np.testing.assert_allclose(arguments[output], want, **TOLERANCE, err_msg=f"{kernel}: {output} ({layout})")


@pytest.mark.parametrize("name,kernel,case", CASES, ids=[c[0] for c in CASES])
def test_case_arguments_follow_the_declaration(runtime, name, kernel, case):
    _, inputs, _ = case(np.random.default_rng(0))
    declared = runtime.declaration(kernel).arguments
    assert [a.name for a in declared] == list(inputs)
    for argument, value in zip(declared, inputs.values()):
        assert argument.rank == (np.ndim(value) if isinstance(value, np.ndarray) else 0)


def test_strided_view_gaps_are_left_alone(runtime):
    """A kernel writing a view writes only its elements, not the gaps of the array it views."""
    name, kernel, case = CASES[0]
    arguments, _ = run_case(runtime, kernel, case, "strided", seed=3, strides_from_arrays=True)
    base = arguments["theta_v"].base
    gaps = np.ones(base.shape, dtype=bool)
    gaps[1::2, 1::2] = False
    assert np.all(base[gaps] == -7)
