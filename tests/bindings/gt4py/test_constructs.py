"""One small GT4Py program per construct, run through kiln and through GT4Py's embedded
execution (its own NumPy implementation) on the same random fields: results within rtol
1e-12. And what the translation refuses, named. `direct` translates GT4Py's IR as lowered
(no GT4Py transforms, the default path); `transformed` after GT4Py's transforms (the
fallback, and where temporaries come from)."""

import numpy as np
import pytest

import kiln
import kiln.gt4py
from kiln.gt4py import timing

gtx = pytest.importorskip("gt4py.next")
import programs as P  # noqa: E402

RTOL = 1e-12


def field(dims, shape, rng, order="C", dtype=np.float64):
    data = rng.uniform(0.1, 1.0, shape) if dtype == np.float64 else rng.integers(0, 5, shape)
    return gtx.as_field(dims, np.array(data, dtype=dtype, order=order))


def run_both(program, make_args, backend, offset_provider=None):
    """Runs `program` on two copies of the same arguments, embedded and through kiln; returns
    both argument lists (outputs included) after the calls."""
    offset_provider = offset_provider if offset_provider is not None else P.grid()
    results = []
    for chosen in (None, backend):
        args = make_args(np.random.default_rng(7))
        program.with_backend(chosen)(*args, offset_provider=offset_provider)
        results.append(args)
    return results


def assert_same(results):
    reference, ours = results
    for expected, got in zip(reference, ours):
        if hasattr(expected, "ndarray"):
            np.testing.assert_allclose(got.ndarray, expected.ndarray, rtol=RTOL, atol=0)


CK = ((P.Cell, P.K), (P.N_CELLS, P.N_LEVELS))
EK = ((P.Edge, P.K), (P.N_EDGES, P.N_LEVELS))


def ck(rng, order="C"):
    return field(*CK, rng, order)


def ek(rng, order="C"):
    return field(*EK, rng, order)


@pytest.mark.parametrize("order", ["C", "F"])
def test_pointwise_arithmetic_and_scalars(direct, order):
    assert_same(run_both(P.pointwise, lambda r: [ck(r, order), ck(r, order), 0.75, ck(r, order)], direct))


def test_math_builtins(direct):
    assert_same(run_both(P.math, lambda r: [ck(r), ck(r), ck(r)], direct))


def test_neighbour_reads_over_a_domain(direct):
    results = run_both(P.neighbour_reads, lambda r: [ek(r), ck(r), 2, P.N_CELLS - 1, 1, P.N_LEVELS], direct)
    assert_same(results)


def test_weighted_neighbour_sum_with_sparse_coefficients(direct):
    g = lambda r: field((P.Cell, P.C2EDim), (P.N_CELLS, 3), r)  # noqa: E731
    assert_same(run_both(P.weighted_sum, lambda r: [ek(r), g(r), ck(r)], direct))


def test_reductions_skip_missing_neighbours(direct):
    results = run_both(P.missing_neighbours, lambda r: [ck(r), ek(r), ek(r), ek(r)], direct)
    assert_same(results)
    total = results[1][1].ndarray
    table = P.grid()["E2C"].ndarray
    assert (table == -1).any() and np.isfinite(total).all()


def test_k_offsets(direct):
    assert_same(run_both(P.vertical, lambda r: [ck(r), ck(r), 1, P.N_LEVELS - 1], direct))


def test_half_level_field_is_declared_one_level_longer(direct):
    half = lambda r: field((P.Cell, P.K), (P.N_CELLS, P.N_LEVELS + 1), r)  # noqa: E731
    assert_same(run_both(P.half_levels, lambda r: [half(r), ck(r)], direct))


@pytest.mark.parametrize("flag", [True, False])
def test_where_and_if(direct, flag):
    assert_same(run_both(P.conditionals, lambda r: [ck(r), ck(r), flag, ck(r)], direct))


def test_broadcast_and_astype(direct):
    ints = lambda r: field(*CK, r, dtype=np.int32)  # noqa: E731
    assert_same(run_both(P.broadcast_astype, lambda r: [ints(r), 1.25, ck(r)], direct))


def test_concat_where(direct):
    assert_same(run_both(P.concat, lambda r: [ck(r), ck(r), 2, ck(r)], direct))


def test_tuple_of_outputs(direct):
    assert_same(run_both(P.two_outputs, lambda r: [ck(r), ck(r), ck(r), ck(r)], direct))


def test_horizontal_only_fields(direct):
    cells = lambda r: field((P.Cell,), (P.N_CELLS,), r)  # noqa: E731
    edges = lambda r: field((P.Edge,), (P.N_EDGES,), r)  # noqa: E731
    assert_same(run_both(P.horizontal, lambda r: [cells(r), edges(r), cells(r)], direct))


def test_bool_fields_are_kiln_bool_arrays(direct):
    def args(r):
        mask = gtx.as_field((P.Cell, P.K), r.random((P.N_CELLS, P.N_LEVELS)) < 0.5)
        levels = gtx.as_field((P.K,), r.random(P.N_LEVELS) < 0.7)
        return [ck(r), mask, levels, ck(r)]

    assert_same(run_both(P.masked, args, direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("masked_")]
    assert "#pragma kiln array bool mask[cells][levels]" in text
    assert "#pragma kiln array bool levels_p[levels]" in text
    assert "bool(mask(h_, k_) & levels_p(k_))" in text  # no short-circuit: no branch per lane


def test_and_or_short_circuit_only_where_the_second_read_may_fail():
    """`a & b` on bools reads b unconditionally only where b is read at the point or is a
    value; a neighbour's read (which `a` may guard, as can_deref does) keeps &&."""
    from kiln.gt4py.translation import builtins
    from kiln.gt4py.translation.values import Scalar

    guard, at_point = Scalar("(C2E(h_, 0) >= 0)", "bool"), Scalar("mask(h_, k_)", "bool")
    neighbour = Scalar("(w(C2E(h_, 0), k_) > 0.0)", "bool")
    refuse = lambda *_: None  # noqa: E731
    assert builtins.apply("and_", [guard, at_point], refuse).code == "bool((C2E(h_, 0) >= 0) & mask(h_, k_))"
    assert builtins.apply("or_", [guard, Scalar("v3_", "bool")], refuse).code == "bool((C2E(h_, 0) >= 0) | v3_)"
    assert builtins.apply("and_", [guard, neighbour], refuse).code == f"({guard.code} && {neighbour.code})"
    assert builtins.apply("or_", [at_point, Scalar("mask(h_, (k_ + 1))", "bool")], refuse).code == (
        "(mask(h_, k_) || mask(h_, (k_ + 1)))"
    )


def test_a_bool_output_is_written_in_place_by_the_bound_call(direct):
    """No copy in or out: a second call with the same fields is kiln's bound call (the
    time loop's path), and writes the bool output where it lies."""
    flags = lambda r: gtx.as_field((P.Cell, P.K), np.zeros((P.N_CELLS, P.N_LEVELS), dtype=bool))  # noqa: E731
    results = run_both(P.positive, lambda r: [ck(r), flags(r)], direct)
    np.testing.assert_array_equal(results[1][1].ndarray, results[0][1].ndarray)
    assert results[1][1].ndarray.any() and not results[1][1].ndarray.all()

    timed_backend, record = timing.timed(direct)
    program = P.positive.with_backend(timed_backend)
    a, out, provider = ck(np.random.default_rng(3)), flags(None), {}
    program(a, out, offset_provider=provider)
    bound = record.loaded._last[3]
    a.ndarray[...] = 1.0 - a.ndarray
    program(a, out, offset_provider=provider)
    assert record.loaded._last[3] is bound
    np.testing.assert_array_equal(out.ndarray, a.ndarray > 0.5)


@pytest.mark.parametrize("way", ["direct", "transformed"])
def test_a_reduction_of_a_reduction(way, request):
    """The inner sum is computed at each neighbour (GT4Py's transforms fuse it too)."""
    assert_same(run_both(P.nested, lambda r: [ck(r), ek(r), ck(r)], request.getfixturevalue(way)))


def test_a_scan_read_by_another_expression_goes_through_a_temporary(backend, direct):
    """The direct translation refuses a scan inside an expression; the default backend then
    translates after GT4Py's transforms, which put the scan's result in a temporary: a kiln
    temporary, laid out as the output."""
    with pytest.raises(kiln.gt4py.UnsupportedConstruct, match="scan whose result is read"):
        run_both(P.scan_then_scale, lambda r: [ck(r), ck(r)], direct)
    assert_same(run_both(P.scan_then_scale, lambda r: [ck(r), ck(r)], backend))
    (text,) = [t for name, t in backend.kernel_sources().items() if name.startswith("scan_then_scale_")]
    assert "#pragma kiln temporary double" in text and "kiln::for_each_level_up" in text


def test_forward_scan(direct):
    assert_same(run_both(P.running_sum, lambda r: [ck(r), ck(r)], direct))


def test_backward_scan_with_a_tuple_state_over_a_level_range(direct):
    results = run_both(P.backward_pair, lambda r: [ck(r), ck(r), ck(r), ck(r), 1, P.N_LEVELS - 1], direct)
    assert_same(results)


def test_a_tuple_scan_unpacked_by_a_field_operator(direct):
    """`first, second = scan(...)` in a field operator (dycore's tridiagonal forward sweep)."""
    assert_same(run_both(P.unpacked_pair, lambda r: [ck(r), ck(r), ck(r), ck(r)], direct))


def test_refused_construct_is_named(backend):
    """Refused directly and after GT4Py's transforms (the default backend tries both)."""
    levels = lambda r: field((P.K,), (P.N_LEVELS,), r)  # noqa: E731
    with pytest.raises(kiln.gt4py.UnsupportedConstruct) as refused:
        run_both(P.vertical_only, lambda r: [levels(r), levels(r)], backend)
    assert refused.value.program == "vertical_only"
    assert "domain" in refused.value.construct and "vertical_only" in str(refused.value)
    assert isinstance(refused.value, kiln.Error)


def test_output_read_at_another_point_is_refused(direct):
    """a = a(K + 1) in one loop would read levels already written: GT4Py's embedded
    execution reads them all first. Refused rather than computed differently."""
    with pytest.raises(kiln.gt4py.UnsupportedConstruct, match="read at another point"):
        run_both(P.shift_in_place, lambda r: [ck(r)], direct)


def test_a_second_call_reuses_the_kernel(direct):
    rng = np.random.default_rng(1)
    args = [ck(rng), ck(rng), 0.5, ck(rng)]
    program = P.pointwise.with_backend(direct)
    program(*args, offset_provider={})
    kernels = direct.runtime.metrics()["kernels"]
    program(*args, offset_provider={})
    assert direct.runtime.metrics()["kernels"] == kernels
    assert len([n for n in direct.kernel_sources() if n.startswith("pointwise_")]) == 1
