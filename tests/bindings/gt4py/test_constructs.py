"""One small GT4Py program per construct, run through kiln and through GT4Py's embedded
execution (its own NumPy implementation) on the same random fields: results within rtol
1e-12. And what the translation refuses, named. `direct` translates GT4Py's IR as lowered
(no GT4Py transforms, the default path); `transformed` after GT4Py's transforms (the
fallback, and where temporaries come from)."""

import re

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


@pytest.mark.parametrize("v0, v1, reach", [(0, P.N_LEVELS - 1, r"\[-1, "), (1, P.N_LEVELS, rf"\[2, {P.N_LEVELS + 1}\)")])
def test_a_k_offset_read_outside_the_levels_is_refused(direct, v0, v1, reach):
    """a(K - 1) from level 0 (or a(K + 1) at the last level) reads outside `a`: GT4Py's
    embedded execution raises IndexOutOfBounds; kiln refuses the call by name before its
    kernel runs, on fields that start at 0 as on shifted ones (its own checks see the loop's
    range, not the offsets read at)."""
    rng = np.random.default_rng(7)
    a, out = ck(rng), ck(rng)
    before = out.asnumpy().copy()
    with pytest.raises(ValueError, match=r"program 'vertical': 'a' is read over " + reach):
        P.vertical.with_backend(direct)(a, out, v0, v1, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), before)  # nothing written
    with pytest.raises(Exception, match="[Oo]ut of bounds"):
        P.vertical.with_backend(None)(a, out, v0, v1, offset_provider={})


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


@pytest.mark.parametrize("order", ["C", "F"])
def test_concat_where_on_a_horizontal_bound_cuts_the_loop(direct, order):
    # Two loops, each with the test as the constant it is there (program.py, _cut_loops):
    # neighbour reads only from the first edge on, cut inside, before and after the edges.
    for first in (6, 0, 20):
        assert_same(run_both(P.edge_zones, lambda r: [ck(r, order), ek(r, order), first, ek(r, order)], direct))
    texts = [t for name, t in direct.kernel_sources().items() if name.startswith("edge_zones_")]
    assert texts and all(t.count("kiln::for_each_point(") == 2 and "kiln::index_t(h_) >=" not in t for t in texts)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_band_of_two_horizontal_bounds_cuts_the_loop_twice(direct, order):
    for first, last in ((4, 11), (0, 15), (9, 3), (-2, 20)):
        args = lambda r: [ck(r, order), ek(r, order), first, last, ek(r, order)]  # noqa: E731
        assert_same(run_both(P.edge_band, args, direct))
    texts = [t for name, t in direct.kernel_sources().items() if name.startswith("edge_band_")]
    # Three loops: below `first` (both sides of `last` copy e), the band, from `last` on (the
    # same copy: the first loop's lambda, branches.py's zone_loops).
    assert texts and all(t.count("kiln::for_each_point(") == 3 and "kiln::index_t(h_)" not in t for t in texts)


def test_a_test_repeated_inside_its_own_branch_is_written_once(direct):
    # _upwind tests vn >= 0 three times (GT4Py inlines each where), all inside one zone of a
    # concat_where: inside the branch of the first test the others are known (stencil.py,
    # _choose), so the text tests it once (7 times before); every zone boundary, none too.
    # The sqrt both sides of the choice compute is computed once, before it (_share).
    for level in (2, 0, P.N_LEVELS):
        args = lambda r: [ek(r) - 0.5, ck(r), level, ek(r)]  # noqa: E731: both signs of vn
        assert_same(run_both(P.zoned_upwind, args, direct, P.grid(missing=False)))
    texts = [t for name, t in direct.kernel_sources().items() if name.startswith("zoned_upwind_")]
    assert texts and all(t.count("(vn(h_, k_) >= 0.0)") == 1 and t.count("kiln::sqrt(") == 1 for t in texts)


def test_an_expression_both_zones_compute_is_written_once(direct):
    # stencil.py's _share: the const lines both branches compute alike at their top move
    # before the test.
    for level in (2, 0, P.N_LEVELS):
        assert_same(run_both(P.zoned_shared, lambda r: [ck(r), ck(r), level, ck(r)], direct))
    texts = [t for name, t in direct.kernel_sources().items() if name.startswith("zoned_shared_")]
    assert texts and all(t.count("kiln::sqrt(") == 1 and t.index("kiln::sqrt(") < t.index("if (") for t in texts)


def test_a_k_offset_read_stays_inside_the_zone_that_guards_it(direct):
    # The same expression in both zones, each with a K-offset read that exists only there:
    # right at level 0 and at the top, and each read written after its zone's test.
    assert_same(run_both(P.zoned_k_offsets, lambda r: [ck(r), ck(r), ck(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("zoned_k_offsets_")]
    below, above = text.index("a(h_, (k_ - 1))"), text.index("a(h_, (k_ + 1))")
    assert text.index("(kiln::index_t(k_) >= 1)") < below < text.index("(kiln::index_t(k_) < 4)") < above


@pytest.mark.parametrize("flag", [True, False])
def test_a_sum_every_branch_reads_is_computed_once_before_them(direct, flag):
    # stencil.py's _choose: a let both sides of a choice dereference is computed before the
    # `if` (the sum was written in each of three branches before), and a floating-point
    # scalar argument read inside one side is read once at the top of the loop's body
    # (Evaluator._copy), so no branch holds a load the vector loop cannot speculate.
    assert_same(run_both(P.valued_branches, lambda r: [ek(r), ck(r), 1.5, flag, ck(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("valued_branches_")]
    body = text[text.index("kiln::for_each_point("):]
    assert body.count("e(C2E(h_, 0), k_)") == 1 and body.index("e(C2E(h_, 0), k_)") < body.index("if (")
    copy = re.search(r"const double (s\d+_) = s;", body)
    assert copy and body.index(copy.group(0)) < body.index("if (")
    assert re.search(r"\bs\b", body.replace(copy.group(0), "")) is None


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


def test_a_scan_read_by_another_expression_goes_through_a_temporary(direct):
    """The scan is computed first into a kiln temporary laid out as the output, then read
    point-wise: translated directly (`direct` never runs GT4Py's transforms)."""
    assert_same(run_both(P.scan_then_scale, lambda r: [ck(r), ck(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("scan_then_scale_")]
    assert "#pragma kiln temporary double" in text and "kiln::for_each_level_up" in text


def test_a_scan_read_at_the_level_above_over_the_levels_it_is_read_at(direct):
    """`concat_where(K < 4, above(K + 1), a)` over levels 0..4: the backward scan is read over
    levels 1..4 (GT4Py's domain inference), its column starting at level 4."""
    assert_same(run_both(P.sum_above, lambda r: [ck(r), ck(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("sum_above_")]
    assert "kiln::for_each_level_down" in text and "(k_ + 1)" in text


def test_a_scan_read_at_the_level_below_starts_at_the_first_level_read(direct):
    """Over levels first..end, `concat_where(K > first, below(K - 1), ...)` reads the
    forward scan from level `first`: its column starts there, as in GT4Py."""
    for first in (0, 1, 2):
        assert_same(run_both(P.sum_below, lambda r: [ck(r), ck(r), first, P.N_LEVELS], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("sum_below_")]
    # Read at levels first+1..end-1 shifted by -1: the scan's levels are first..end-2.
    assert re.search(r"kiln::for_each_level_up\(tmp\d+_, 0, 10, first, \(end - 1\)", text), text


def test_one_element_of_a_tuple_scan_read_inside_an_expression(direct):
    """A tuple-valued scan computed into a temporary per element; one element is read."""
    assert_same(run_both(P.second_of_pair, lambda r: [ck(r), ck(r), ck(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("second_of_pair_")]
    assert text.count("#pragma kiln temporary double") == 2


def test_a_scan_read_through_a_neighbour_table_is_refused_by_name(direct, backend):
    """The scan's columns would be the neighbours', not the point's: refused directly, and
    translated after GT4Py's transforms by the default backend."""
    make = lambda r: [ck(r), ek(r)]  # noqa: E731
    with pytest.raises(kiln.gt4py.UnsupportedConstruct, match="scan read through a neighbour table"):
        run_both(P.neighbours_sum, make, direct)
    assert_same(run_both(P.neighbours_sum, make, backend))


def test_a_scan_form_the_temporaries_do_not_follow_is_refused_by_name(tmp_path, monkeypatch):
    """An error inside scan_temporaries.py is a refusal naming it, so the default backend
    falls back to GT4Py's transforms (fresh backends: no translation cached)."""
    from kiln.gt4py.translation import scan_temporaries

    def unfollowed(*args):
        raise ValueError("an IR shape it does not follow")

    monkeypatch.setattr(scan_temporaries, "rewrite", unfollowed)
    make = lambda r: [ck(r), ck(r)]  # noqa: E731
    never = kiln.gt4py.backend(cache_dir=str(tmp_path / "never"), log_level="off", gt4py_transforms="never")
    with pytest.raises(kiln.gt4py.UnsupportedConstruct, match="scan_temporaries.py does not follow.*ValueError"):
        run_both(P.scan_then_scale, make, never)
    fallback = kiln.gt4py.backend(cache_dir=str(tmp_path / "fallback"), log_level="off")
    assert_same(run_both(P.scan_then_scale, make, fallback))


def test_forward_scan(direct):
    assert_same(run_both(P.running_sum, lambda r: [ck(r), ck(r)], direct))


def test_backward_scan_with_a_tuple_state_over_a_level_range(direct):
    results = run_both(P.backward_pair, lambda r: [ck(r), ck(r), ck(r), ck(r), 1, P.N_LEVELS - 1], direct)
    assert_same(results)


def test_a_tuple_scan_unpacked_by_a_field_operator(direct):
    """`first, second = scan(...)` in a field operator (dycore's tridiagonal forward sweep)."""
    assert_same(run_both(P.unpacked_pair, lambda r: [ck(r), ck(r), ck(r), ck(r)], direct))


def levels(rng, n=P.N_LEVELS):
    return field((P.K,), (n,), rng)


def test_a_column_of_levels_alone(direct):
    """Fields and a domain on K only, with K offsets: a loop over levels, no horizontal one."""
    assert_same(run_both(P.column, lambda r: [levels(r), levels(r), levels(r), 1, P.N_LEVELS - 1], direct))
    assert_same(run_both(P.vertical_only, lambda r: [levels(r), levels(r), levels(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("vertical_only_")]
    assert "kiln::for_each_column(1, 4, [&](kiln::index_t k_)" in text


def test_a_scan_over_a_column_of_levels_alone(direct):
    assert_same(run_both(P.column_sum, lambda r: [levels(r), levels(r)], direct))


def test_a_scan_over_levels_alone_read_at_the_level_above(direct):
    """A temporary on K alone, over levels 1..4 (read at K + 1 over 0..3)."""
    assert_same(run_both(P.column_sum_below, lambda r: [levels(r), levels(r)], direct))
    (text,) = [t for name, t in direct.kernel_sources().items() if name.startswith("column_sum_below_")]
    # Levels [0 + 1, min(5, 4) + 1): out's extent 0..5 as the template fills it in, cut at K < 4, shifted up.
    assert "kiln::for_each_level_reversed((0 + 1), (kiln::min<kiln::index_t>(5, 4) + 1)," in text, text


def test_horizontal_and_vertical_only_fields_beside_2d_ones(direct):
    cells = lambda r: field((P.Cell,), (P.N_CELLS,), r)  # noqa: E731
    assert_same(run_both(P.mixed, lambda r: [cells(r), ck(r), levels(r), ck(r)], direct))


# ---- fields whose domain does not start at 0 ---------------------------------------------------
CELLS_FROM_3, EDGES_FROM_2, LEVELS_FROM_1 = (3, 3 + P.N_CELLS), (2, 2 + P.N_EDGES), (1, 1 + P.N_LEVELS)


def shifted(ranges: dict, rng):
    """A field on `ranges` ({dimension: (start, stop)}), which GT4Py numbers from each start."""
    shape = tuple(stop - start for start, stop in ranges.values())
    return gtx.as_field(gtx.domain(ranges), rng.uniform(0.1, 1.0, shape))


def shifted_grid() -> dict:
    """C2E with rows for cells 0 to 12 (the shifted fields' cells are 3 to 12) whose entries
    are edges 2 to 16 (the shifted edge fields' edges)."""
    rng = np.random.default_rng(4)
    c2e = rng.integers(EDGES_FROM_2[0], EDGES_FROM_2[1], (CELLS_FROM_3[1], 3)).astype(np.int32)
    return {"C2E": gtx.as_connectivity([P.Cell, P.C2EDim], codomain=P.Edge, data=c2e)}


def test_fields_not_starting_at_zero(direct):
    """Every field on cells 3 to 12 and levels 1 to 5: each array indexed from its start."""
    f = lambda r: shifted({P.Cell: CELLS_FROM_3, P.K: LEVELS_FROM_1}, r)  # noqa: E731
    assert_same(run_both(P.pointwise, lambda r: [f(r), f(r), 0.75, f(r)], direct))
    text = next(t for name, t in direct.kernel_sources().items() if name.startswith("pointwise_") and "_start" in t)
    assert "#pragma kiln domain out_start0_ out_start1_ a_start0_ a_start1_ b_start0_ b_start1_" in text
    assert "a(h_ - a_start0_, k_ - a_start1_)" in text


def test_a_neighbour_read_into_a_shifted_field_over_a_sub_domain(direct):
    """Table entries name edges as GT4Py numbers them (from 2 here); the output is written on
    cells 4 to 10 and levels 2 to 4 only, inside its own domain, the rest left as it was."""
    e = lambda r: shifted({P.Edge: EDGES_FROM_2, P.K: LEVELS_FROM_1}, r)  # noqa: E731
    out = lambda r: shifted({P.Cell: CELLS_FROM_3, P.K: LEVELS_FROM_1}, r)  # noqa: E731
    results = run_both(P.neighbour_reads, lambda r: [e(r), out(r), 4, 11, 2, 5], direct, shifted_grid())
    assert_same(results)  # the whole of each field: what lies outside the sub-domain too
    rng = np.random.default_rng(7)  # run_both's seed: the output as it was before the call
    _, before = e(rng), out(rng).ndarray
    after = results[1][1].ndarray
    np.testing.assert_array_equal(after[0], before[0])  # cell 3: outside the sub-domain
    assert (after[1:8, 1:4] != before[1:8, 1:4]).all()  # cells 4 to 10, levels 2 to 4
    cells = lambda r: shifted({P.Cell: CELLS_FROM_3}, r)  # noqa: E731
    edges = lambda r: shifted({P.Edge: EDGES_FROM_2}, r)  # noqa: E731
    assert_same(run_both(P.horizontal, lambda r: [cells(r), edges(r), cells(r)], direct, shifted_grid()))


def test_k_offsets_and_a_scan_on_shifted_levels(direct):
    f = lambda r: shifted({P.Cell: (0, P.N_CELLS), P.K: LEVELS_FROM_1}, r)  # noqa: E731
    assert_same(run_both(P.vertical, lambda r: [f(r), f(r), 2, 5], direct))
    assert_same(run_both(P.backward_pair, lambda r: [f(r), f(r), f(r), f(r), 2, 6], direct))
    assert_same(run_both(P.column, lambda r: [levels_from(r), levels_from(r), levels_from(r), 2, 5], direct))
    assert_same(run_both(P.concat, lambda r: [f(r), f(r), 3, f(r)], direct))  # K >= 3 as GT4Py numbers levels


def test_a_temporary_on_shifted_fields(backend):
    """After GT4Py's transforms the scan's result is a kiln temporary laid out as the output,
    which starts at cell 3 and level 1: it is walked and indexed in the output's frame."""
    f = lambda r: shifted({P.Cell: CELLS_FROM_3, P.K: LEVELS_FROM_1}, r)  # noqa: E731
    assert_same(run_both(P.scan_then_scale, lambda r: [f(r), f(r)], backend))


def levels_from(rng):
    return shifted({P.K: LEVELS_FROM_1}, rng)


def test_a_write_outside_a_shifted_output_is_refused(direct):
    """GT4Py's embedded execution refuses it too; kiln's own check assumes domains from 0."""
    rng = np.random.default_rng(5)
    e = shifted({P.Edge: EDGES_FROM_2, P.K: LEVELS_FROM_1}, rng)
    out = shifted({P.Cell: CELLS_FROM_3, P.K: LEVELS_FROM_1}, rng)
    with pytest.raises(ValueError, match=r"program 'neighbour_reads': 'out' is written over \[2, 11\)"):
        P.neighbour_reads.with_backend(direct)(e, out, 2, 11, 1, 6, offset_provider=shifted_grid())


def test_a_read_outside_a_shifted_input_is_refused(direct):
    """Inputs on cells 1 to 10, the output on cells 0 to 9: embedded raises IndexOutOfBounds,
    kiln names the input and the range (rather than read before its first element)."""
    rng = np.random.default_rng(6)
    a = shifted({P.Cell: (1, P.N_CELLS + 1), P.K: (0, P.N_LEVELS)}, rng)
    with pytest.raises(ValueError, match=r"program 'pointwise': 'a' is read over \[0, 10\)"):
        P.pointwise.with_backend(direct)(a, a, 1.0, ck(rng), offset_provider={})


def test_refused_construct_is_named(backend):
    """Refused directly and after GT4Py's transforms (the default backend tries both)."""
    ints = lambda r: field(*CK, r, dtype=np.int32)  # noqa: E731
    with pytest.raises(kiln.gt4py.UnsupportedConstruct) as refused:
        run_both(P.int_power, lambda r: [ints(r), 2, ints(r)], backend)
    assert refused.value.program == "int_power"
    assert "power" in refused.value.construct and "int_power" in str(refused.value)
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
    kernels, sources = direct.runtime.metrics()["kernels"], direct.kernel_sources()
    program(*args, offset_provider={})
    assert direct.runtime.metrics()["kernels"] == kernels
    assert direct.kernel_sources() == sources  # no text registered again
