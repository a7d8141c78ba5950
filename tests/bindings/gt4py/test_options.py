"""The backend's options reach kiln (run-time bounds, generic mode, check mode, threads), bad
options and bad fields are refused by name, and the call path picks the right kernel when
fields change between calls."""

import numpy as np
import pytest

import kiln.gt4py

gtx = pytest.importorskip("gt4py.next")
import programs as P  # noqa: E402
from test_constructs import assert_same, ck, ek, run_both  # noqa: E402


def make(tmp_path, **options):
    return kiln.gt4py.backend(cache_dir=str(tmp_path), log_level="off", **options)


def compiles(backend) -> int:
    return backend.runtime.metrics()["total"]["compiles"]


@pytest.mark.parametrize("run_time, expected", [("horizontal", 1), ("none", 2)])
def test_run_time_bounds_share_one_binary(tmp_path, run_time, expected):
    """Two horizontal ranges: one binary when the bounds are read at run time, two when
    they are compiled in; both right."""
    backend = make(tmp_path, run_time=run_time)
    for h0, h1 in ((0, P.N_CELLS), (3, 7)):
        results = run_both(P.neighbour_reads, lambda r: [ek(r), ck(r), h0, h1, 0, P.N_LEVELS], backend)
        assert_same(results)
    assert compiles(backend) == expected


@pytest.mark.parametrize("options", [dict(mode="generic"), dict(check=True, threads=2)], ids=["generic", "check-threads"])
def test_modes_and_threads(tmp_path, options):
    backend = make(tmp_path, **options)
    assert_same(run_both(P.missing_neighbours, lambda r: [ck(r), ek(r), ek(r), ek(r)], backend))
    assert_same(run_both(P.backward_pair, lambda r: [ck(r), ck(r), ck(r), ck(r), 0, P.N_LEVELS], backend))


@pytest.mark.parametrize(
    "options, message",
    [(dict(mode="fast"), "mode"), (dict(run_time="vertical"), "run_time"), (dict(gt4py_transforms="sometimes"), "gt4py_transforms")],
)
def test_bad_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        kiln.gt4py.backend(**options)


def test_a_field_not_starting_at_zero_is_refused(direct):
    rng = np.random.default_rng(0)
    shifted = gtx.as_field(gtx.domain({P.Cell: (1, P.N_CELLS + 1), P.K: (0, P.N_LEVELS)}), rng.random((P.N_CELLS, P.N_LEVELS)))
    with pytest.raises(ValueError, match="starts at"):
        P.pointwise.with_backend(direct)(shifted, shifted, 1.0, ck(rng), offset_provider={})


def test_new_fields_of_the_same_shape_are_not_mistaken_for_the_last_ones(direct):
    """The fast path for repeated calls keys on the field objects: other fields, or the same
    fields with new contents, give their own results."""
    program = P.pointwise.with_backend(direct)
    rng = np.random.default_rng(5)
    for _ in range(2):
        a, b, out = ck(rng), ck(rng), ck(rng)
        for _ in range(2):
            program(a, b, 0.25, out, offset_provider={})
            reference = ck(rng)
            P.pointwise.with_backend(None)(a, b, 0.25, reference, offset_provider={})
            np.testing.assert_allclose(out.ndarray, reference.ndarray, rtol=1e-12, atol=0)
            a.ndarray[...] = rng.random(a.ndarray.shape)  # same object, new contents
