"""A cut loop's body keeps only the branches that run there, and work both sides of an `if`
start with is written once, before it; zones whose bodies came out alike are one loop, or share
one lambda (kiln/gt4py/translation/branches.py): the text rules on their own, then GT4Py
programs whose loops are cut at horizontal bounds, through kiln against NumPy on random fields
(GT4Py's embedded execution does not run a concat_where on two dimensions)."""

import numpy as np
import pytest

from kiln.gt4py.translation.branches import fold, simplified, zone_loops

gtx = pytest.importorskip("gt4py.next")
from gt4py.next import neighbor_sum  # noqa: E402
from gt4py.next.experimental import concat_where  # noqa: E402

import programs as P  # noqa: E402


# ---- the text rules ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "test, folded",
    [
        ("(false && true)", "false"),
        ("(((0 < kiln::index_t(k_)) && (kiln::index_t(k_) < nrdmax)) && true)", "((0 < kiln::index_t(k_)) && (kiln::index_t(k_) < nrdmax))"),
        ("((a_(h_) > 0.0) && false)", "false"),
        ("(x_ || true)", "true"),
        ("(false || (y_ < 2))", "(y_ < 2)"),
        ("(!true)", "false"),
        ("(!(false && z_))", "true"),
        ("C2E(h_, 0) >= 0 && true", "C2E(h_, 0) >= 0"),
        ("(a_ && b_)", "(a_ && b_)"),  # nothing to fold: as written
        ("(true ? a_ : b_)", "(true ? a_ : b_)"),  # a ternary is not a test
        ("(f(true, x_) && c_)", "(f(true, x_) && c_)"),  # an argument is not an operand
        ("bool(true & m_(h_))", "bool(true & m_(h_))"),
    ],
)
def test_fold(test, folded):
    assert fold(test) == folded


def test_a_decided_test_keeps_only_the_side_that_runs():
    body = [
        "double r1_;",
        "if (((k_ < 3) && false)) {",
        "const double v2_ = (a(h_, k_) * 2.0);",
        "r1_ = v2_;",
        "} else {",
        "r1_ = b(h_, k_);",
        "}",
        "if ((true && true)) {",
        "out(h_, k_) = r1_;",
        "}",
    ]
    assert simplified(body) == ["double r1_;", "r1_ = b(h_, k_);", "out(h_, k_) = r1_;"]


def test_what_both_sides_start_with_is_computed_once_before_the_test():
    body = [
        "double r9_;",
        "if ((0 < kiln::index_t(k_))) {",
        "double r1_;",
        "double acc2_ = 0.0;",
        "if ((E2C(h_, 0) >= 0)) {",
        "acc2_ = (acc2_ + c(E2C(h_, 0), k_));",
        "}",
        "const double v3_ = (acc2_ * 2.0);",
        "r1_ = v3_;",
        "const double v4_ = (r1_ + 1.0);",
        "r9_ = v4_;",
        "} else {",
        "double r5_;",
        "double acc6_ = 0.0;",
        "if ((E2C(h_, 0) >= 0)) {",
        "acc6_ = (acc6_ + c(E2C(h_, 0), k_));",
        "}",
        "const double v7_ = (acc6_ * 2.0);",
        "r5_ = v7_;",
        "r9_ = r5_;",
        "}",
    ]
    assert simplified(body) == [
        "double r9_;",
        "double r1_;",
        "double acc2_ = 0.0;",
        "if ((E2C(h_, 0) >= 0)) {",
        "acc2_ = (acc2_ + c(E2C(h_, 0), k_));",
        "}",
        "const double v3_ = (acc2_ * 2.0);",
        "r1_ = v3_;",
        "if ((0 < kiln::index_t(k_))) {",
        "const double v4_ = (r1_ + 1.0);",
        "r9_ = v4_;",
        "} else {",
        "r9_ = r1_;",
        "}",
    ]


def test_lines_that_assign_what_was_declared_before_the_test_stay_in_its_sides():
    # Moved before the if, `r1_ = ...` would change what the test reads.
    body = ["double r1_ = 0.0;", "if ((r1_ > 0.5)) {", "r1_ = a(h_);", "x(h_) = 1.0;", "} else {", "r1_ = a(h_);", "}"]
    assert simplified(body) == body


def test_a_name_declared_twice_in_the_body_keeps_its_block():
    body = ["if (true) {", "const double v1_ = a(h_);", "x(h_) = v1_;", "}", "{", "const double v1_ = b(h_);", "y(h_) = v1_;", "}"]
    assert simplified(body)[:4] == ["{", "const double v1_ = a(h_);", "x(h_) = v1_;", "}"]


def test_a_block_that_does_not_close_as_the_translation_writes_it_is_left_as_it_is():
    body = ["if (false) {", "f([&](int i) { g(i); }, 2);", "x(h_) = 1.0;", "} else {", "x(h_) = 2.0;", "}"]
    assert simplified(body) == ["x(h_) = 2.0;"]  # braces opened and closed on one line: its own
    for unclosed in (["if (false) {", "x(h_) = 1.0;"], ["if (false) {", "f([&](int i) {", "});"]):
        assert simplified(unclosed) == unclosed


# ---- zones --------------------------------------------------------------------------------
def _band(text: str, cut: str, above: bool) -> str:
    """program.py's decide, for the tests `(lo <= h)` and `(h < hi)` of a band lo <= h < hi."""
    holds = {"lo": above, "hi": not above}[cut]
    test = "(lo <= h)" if cut == "lo" else "(h < hi)"
    return text.replace(test, "true" if holds else "false")


def _head(start: str, end: str) -> str:
    return f"kiln::for_each_point(out, {start}, {end}, 0, n, [&](auto hr_, kiln::index_t kr_) {{"


def _names():
    counter = iter(range(100))
    return lambda prefix: f"{prefix}{next(counter)}_"


BAND = ["if (((lo <= h) && (h < hi))) {", "out(h, k) = (a(E2C(h, 0), k) * 2.0);", "} else {", "out(h, k) = a(h, k);", "}"]


def test_zones_alike_are_one_loop_and_zones_apart_share_one_lambda():
    # Below lo both sides of hi copy a: one loop over [start, lo). From lo on the band and the
    # copy above hi differ; the copy above hi is the copy below lo again: one named lambda.
    text = zone_loops("\n".join(BAND), ["lo", "hi"], _band, _head, ("s", "e"), _names())
    lo = "kiln::split({s, e}, lo)"
    hi = f"kiln::split({{{lo}.at_above.start, {lo}.at_above.end}}, hi)"
    assert text.split("\n") == [
        "const auto zone0_ = [&](auto hr_, kiln::index_t kr_) {",
        "  out(h, k) = a(h, k);",
        "};",
        f"kiln::for_each_point(out, {lo}.below.start, {lo}.below.end, 0, n, zone0_);",
        f"kiln::for_each_point(out, {hi}.below.start, {hi}.below.end, 0, n, [&](auto hr_, kiln::index_t kr_) {{",
        "  out(h, k) = (a(E2C(h, 0), k) * 2.0);",
        "});",
        f"kiln::for_each_point(out, {hi}.at_above.start, {hi}.at_above.end, 0, n, zone0_);",
    ]


def test_a_cut_that_leaves_the_same_body_on_both_sides_is_no_cut():
    lines = ["if ((lo <= h)) {", "out(h, k) = a(h, k);", "} else {", "out(h, k) = a(h, k);", "}"]
    text = zone_loops("\n".join(lines), ["lo"], _band, _head, ("s", "e"), _names())
    assert text.split("\n") == [_head("s", "e"), "  out(h, k) = a(h, k);", "});"]


def test_neighbours_alike_join_across_the_cuts_inside_them():
    # Cut at hi first, then lo: below hi the two sides of lo differ (copy, band), from hi on
    # both copy; the band's upper neighbour is that copy, so nothing joins there, but the copy
    # from hi on is one loop, sharing the copy below lo's lambda.
    text = zone_loops("\n".join(BAND), ["hi", "lo"], _band, _head, ("s", "e"), _names())
    loops = [line for line in text.split("\n") if line.startswith("kiln::for_each_point(")]
    assert len(loops) == 3 and loops[0].endswith("zone0_);") and loops[2].endswith("zone0_);")
    assert loops[2].startswith("kiln::for_each_point(out, kiln::split({s, e}, hi).at_above.start, kiln::split({s, e}, hi).at_above.end,")


def test_zones_that_all_differ_are_left_as_they_were_cut():
    lines = ["if ((lo <= h)) {", "out(h, k) = (a(h, k) + 1.0);", "} else {", "out(h, k) = a(h, k);", "}",
             "if ((h < hi)) {", "out2(h, k) = 1.0;", "} else {", "out2(h, k) = 2.0;", "}"]
    text = zone_loops("\n".join(lines), ["lo", "hi"], _band, _head, ("s", "e"), _names())
    assert text.count("kiln::for_each_point(") == 4 and "zone" not in text


# ---- a program ----------------------------------------------------------------------------
@gtx.field_operator
def _inner(c: P.CK, e: P.EK, first: gtx.int32) -> P.EK:
    return concat_where(first <= P.Edge, e - neighbor_sum(c(P.E2C), axis=P.E2CDim) * 0.25, e)


@gtx.field_operator
def _zoned_twice(c: P.CK, e: P.EK, f: P.EK, first: gtx.int32, top: gtx.int32) -> P.EK:
    # icon4py's w diffusion in small: the inner value in both branches of a test on K and the
    # same horizontal zone; cut at `first`, the zone's loop computes it once, before the test.
    inner = _inner(c, e, first)
    return concat_where((0 < P.K) & (P.K < top) & (first <= P.Edge), inner + f * inner, inner)


@gtx.program
def zoned_twice(c: P.CK, e: P.EK, f: P.EK, first: gtx.int32, top: gtx.int32, out: P.EK):
    _zoned_twice(c, e, f, first, top, out=out)


def expected(c, e, f, first, top, e2c):
    """zoned_twice in NumPy: E2C's -1 entries add nothing."""
    gathered = np.where((e2c >= 0)[:, :, None], c[np.maximum(e2c, 0)], 0.0)
    edges, levels = np.arange(e.shape[0])[:, None], np.arange(e.shape[1])[None, :]
    inner = np.where(edges >= first, e - gathered.sum(axis=1) * 0.25, e)
    return np.where((levels > 0) & (levels < top) & (edges >= first), inner + f * inner, inner)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_program_cut_at_a_zone_bound_computes_its_shared_work_once(direct, order):
    provider = P.grid()
    e2c = provider["E2C"].ndarray
    rng = np.random.default_rng(3)
    for first, top in ((6, 3), (0, P.N_LEVELS), (P.N_EDGES, 1), (-1, 0)):
        c, e, f = (rng.uniform(0.1, 1.0, shape) for shape in ((P.N_CELLS, P.N_LEVELS), *[(P.N_EDGES, P.N_LEVELS)] * 2))
        fields = [gtx.as_field(dims, np.array(a, order=order)) for dims, a in (((P.Cell, P.K), c), ((P.Edge, P.K), e), ((P.Edge, P.K), f))]
        out = gtx.as_field((P.Edge, P.K), np.zeros((P.N_EDGES, P.N_LEVELS), order=order))
        zoned_twice.with_backend(direct)(*fields, first, top, out, offset_provider=provider)
        np.testing.assert_allclose(out.ndarray, expected(c, e, f, first, top, e2c), rtol=1e-12, atol=0)
    texts = [t for name, t in direct.kernel_sources().items() if name.startswith("zoned_twice_")]
    assert texts
    for text in texts:
        assert text.count("kiln::for_each_point(") == 2
        assert "true" not in text and "false" not in text  # every decided test folded
        # The neighbour sum: once in the zone's loop (before the test on K), none below it.
        assert text.count("c(E2C(h_, 0), k_)") == 1


@gtx.field_operator
def _w_like(c: P.CK, w: P.CK, first: gtx.int32, last: gtx.int32) -> P.CK:
    # icon4py's w diffusion in small: a cell zone first <= Cell < last diffused (two rings of
    # neighbours), w copied below and above it; cut at both bounds, the copy below `first`
    # is one loop (both sides of `last` copy there) and shares its lambda with the one above.
    ring = neighbor_sum(w(P.E2C), axis=P.E2CDim)  # per edge
    diffused = w + neighbor_sum(ring(P.C2E), axis=P.C2EDim) * c
    return concat_where((first <= P.Cell) & (P.Cell < last), diffused, w)


@gtx.program
def w_like(c: P.CK, w: P.CK, first: gtx.int32, last: gtx.int32, out: P.CK):
    _w_like(c, w, first, last, out=out)


def w_like_expected(c, w, first, last, c2e, e2c):
    ring = np.where((e2c >= 0)[:, :, None], w[np.maximum(e2c, 0)], 0.0).sum(axis=1)  # per edge
    diffused = w + ring[c2e].sum(axis=1) * c
    cells = np.arange(w.shape[0])[:, None]
    return np.where((cells >= first) & (cells < last), diffused, w)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_zone_between_two_copies_computes_what_it_computed(direct, order):
    provider = P.grid()
    c2e, e2c = provider["C2E"].ndarray, provider["E2C"].ndarray
    rng = np.random.default_rng(5)
    for first, last in ((2, 7), (0, P.N_CELLS), (7, 2), (-1, 4), (3, 3), (6, P.N_CELLS + 2)):
        c, w = (rng.uniform(-1.0, 1.0, (P.N_CELLS, P.N_LEVELS)) for _ in range(2))
        fields = [gtx.as_field((P.Cell, P.K), np.array(a, order=order)) for a in (c, w)]
        out = gtx.as_field((P.Cell, P.K), np.zeros((P.N_CELLS, P.N_LEVELS), order=order))
        w_like.with_backend(direct)(*fields, first, last, out, offset_provider=provider)
        np.testing.assert_allclose(out.ndarray, w_like_expected(c, w, first, last, c2e, e2c), rtol=1e-13, atol=0)
        copied = (np.arange(P.N_CELLS) < first) | (np.arange(P.N_CELLS) >= last)
        assert np.array_equal(out.ndarray[copied], w[copied])  # the copies: bit for bit
    texts = [t for name, t in direct.kernel_sources().items() if name.startswith("w_like_")]
    assert texts
    for text in texts:
        assert text.count("kiln::for_each_point(") == 3 and text.count("const auto zone") == 1
        # The neighbours are read in the middle loop alone: the copies' shared lambda reads w.
        loops = text.split("kiln::for_each_point(")
        assert "E2C(" not in loops[0] + loops[1] + loops[3] and "E2C(" in loops[2]
