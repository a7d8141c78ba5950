"""The backend's options reach kiln (run-time bounds and domain starts, generic mode, check
mode, threads), bad options are refused by name, and the call path picks the right kernel
when fields change between calls."""

import numpy as np
import pytest

import kiln.gt4py

gtx = pytest.importorskip("gt4py.next")
import programs as P  # noqa: E402
from test_constructs import (  # noqa: E402
    CELLS_FROM_3, EDGES_FROM_2, LEVELS_FROM_1, assert_same, ck, ek, run_both, shifted, shifted_grid,
)


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
    # Fields from edge 2, cell 3, level 1: check mode's bounds-checked views see every index
    # the start arithmetic makes.
    e = lambda r: shifted({P.Edge: EDGES_FROM_2, P.K: LEVELS_FROM_1}, r)  # noqa: E731
    out = lambda r: shifted({P.Cell: CELLS_FROM_3, P.K: LEVELS_FROM_1}, r)  # noqa: E731
    assert_same(run_both(P.neighbour_reads, lambda r: [e(r), out(r), 4, 11, 2, 5], backend, shifted_grid()))


@pytest.mark.parametrize(
    "options, message",
    [(dict(mode="fast"), "mode"), (dict(run_time="vertical"), "run_time"), (dict(gt4py_transforms="sometimes"), "gt4py_transforms")],
)
def test_bad_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        kiln.gt4py.backend(**options)


@pytest.mark.parametrize("run_time, expected", [("horizontal", 1), ("all", 1), ("none", 2), (["a", "b", "out"], 1)])
def test_run_time_starts_share_one_binary(tmp_path, run_time, expected):
    """Fields from cell 3, then from cell 5: their starts read at run time (horizontal ones
    by default, as horizontal bounds are; or the starts of the fields named) serve both with
    one binary; compiled in, one binary each."""
    backend = make(tmp_path, run_time=run_time)
    for start in (3, 5):
        f = lambda r: shifted({P.Cell: (start, start + P.N_CELLS), P.K: (0, P.N_LEVELS)}, r)  # noqa: E731
        assert_same(run_both(P.pointwise, lambda r: [f(r), f(r), 0.5, f(r)], backend))
    assert compiles(backend) == expected


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


@pytest.mark.parametrize("spoil", ["a file in its place", "group-writable"])
def test_a_translation_folder_it_cannot_use_costs_only_the_reuse(tmp_path, spoil):
    """`<cache_dir>/gt4py-translations` that cannot be made (a file there; or a read-only
    cache) or that others may write to (its pickles would run their code): one warning
    naming it and the cause, the program runs and is right, nothing is written there."""
    import os

    folder = tmp_path / "gt4py-translations"
    if spoil == "a file in its place":
        folder.write_text("not a folder")
    else:
        folder.mkdir()
        os.chmod(folder, 0o777)
    with pytest.warns(RuntimeWarning, match=f"translations are not kept in {folder}") as caught:
        backend = make(tmp_path)
    assert len(caught) == 1
    assert_same(run_both(P.neighbour_reads, lambda r: [ek(r), ck(r), 0, P.N_CELLS, 0, P.N_LEVELS], backend))
    if spoil == "group-writable":
        assert list(folder.iterdir()) == []
