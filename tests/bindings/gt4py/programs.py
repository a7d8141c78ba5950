"""Small GT4Py programs, one per construct the translation covers, on a small random grid."""

from __future__ import annotations

import gt4py.next as gtx
import numpy as np
from gt4py.next import astype, broadcast, max_over, maximum, min_over, minimum, neighbor_sum, where
from gt4py.next import cbrt, cos, exp, floor, log, sin, sqrt, tanh
from gt4py.next.experimental import concat_where
from gt4py.next import abs  # noqa: A004 (GT4Py's, not Python's)

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))

N_CELLS, N_EDGES, N_LEVELS = 10, 15, 5
CK = gtx.Field[gtx.Dims[Cell, K], gtx.float64]
EK = gtx.Field[gtx.Dims[Edge, K], gtx.float64]


def grid(seed: int = 0, missing: bool = True) -> dict:
    """Offset provider: C2E full, E2C with -1 (a missing neighbour) on some edges."""
    rng = np.random.default_rng(seed)
    c2e = rng.integers(0, N_EDGES, (N_CELLS, 3)).astype(np.int32)
    e2c = rng.integers(0, N_CELLS, (N_EDGES, 2)).astype(np.int32)
    if missing:
        e2c[::3, 1] = -1
        e2c[1, 0] = -1
    return {
        "C2E": gtx.as_connectivity([Cell, C2EDim], codomain=Edge, data=c2e),
        "E2C": gtx.as_connectivity([Edge, E2CDim], codomain=Cell, data=e2c, skip_value=-1 if missing else None),
    }


# ---- point-wise ---------------------------------------------------------------------------
@gtx.field_operator
def _pointwise(a: CK, b: CK, s: float) -> CK:
    return a * s + b / 2.0 - a**2.0 + maximum(a, b) - minimum(a, 0.5) + abs(b - a) - (-a)


@gtx.program
def pointwise(a: CK, b: CK, s: float, out: CK):
    _pointwise(a, b, s, out=out)


@gtx.field_operator
def _math(a: CK, b: CK) -> CK:
    return sqrt(a) + exp(b) * log(a) + sin(a) * cos(b) + tanh(a - b) + cbrt(b) + floor(a * 10.0)


@gtx.program
def math(a: CK, b: CK, out: CK):
    _math(a, b, out=out)


# ---- neighbours ---------------------------------------------------------------------------
@gtx.field_operator
def _neighbour_reads(e: EK) -> CK:
    return e(C2E[0]) - 2.0 * e(C2E[2])


@gtx.program
def neighbour_reads(e: EK, out: CK, h0: gtx.int32, h1: gtx.int32, v0: gtx.int32, v1: gtx.int32):
    _neighbour_reads(e, out=out, domain={Cell: (h0, h1), K: (v0, v1)})


@gtx.field_operator
def _weighted_sum(e: EK, g: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64]) -> CK:
    return neighbor_sum(g * e(C2E), axis=C2EDim)


@gtx.program
def weighted_sum(e: EK, g: gtx.Field[gtx.Dims[Cell, C2EDim], gtx.float64], out: CK):
    _weighted_sum(e, g, out=out)


@gtx.field_operator
def _missing_neighbours(c: CK) -> tuple[EK, EK, EK]:
    return neighbor_sum(c(E2C), axis=E2CDim), max_over(c(E2C), axis=E2CDim), min_over(c(E2C), axis=E2CDim)


@gtx.program
def missing_neighbours(c: CK, total: EK, largest: EK, smallest: EK):
    _missing_neighbours(c, out=(total, largest, smallest))


# ---- vertical -----------------------------------------------------------------------------
@gtx.field_operator
def _vertical(a: CK) -> CK:
    return a(K + 1) - a(K - 1)


@gtx.program
def vertical(a: CK, out: CK, v0: gtx.int32, v1: gtx.int32):
    _vertical(a, out=out, domain={Cell: (0, 10), K: (v0, v1)})  # a program sees no globals: N_CELLS


@gtx.field_operator
def _half_levels(w: CK) -> CK:
    return 0.5 * (w + w(K + 1))


@gtx.program
def half_levels(w: CK, out: CK):
    _half_levels(w, out=out, domain={Cell: (0, 10), K: (0, 5)})  # N_CELLS, N_LEVELS


# ---- conditionals, broadcast, casts -------------------------------------------------------
@gtx.field_operator
def _conditionals(a: CK, b: CK, flag: bool) -> CK:
    c = where(a > b, a, 2.0 * b)
    return c if flag else -c


@gtx.program
def conditionals(a: CK, b: CK, flag: bool, out: CK):
    _conditionals(a, b, flag, out=out)


@gtx.field_operator
def _broadcast_astype(i: gtx.Field[gtx.Dims[Cell, K], gtx.int32], s: float) -> CK:
    return broadcast(s, (Cell, K)) + astype(i, gtx.float64) + astype(astype(s * 3.7, gtx.int32), gtx.float64)


@gtx.program
def broadcast_astype(i: gtx.Field[gtx.Dims[Cell, K], gtx.int32], s: float, out: CK):
    _broadcast_astype(i, s, out=out)


@gtx.field_operator
def _concat(a: CK, b: CK, level: gtx.int32) -> CK:
    return concat_where(K >= level, a, b)


@gtx.program
def concat(a: CK, b: CK, level: gtx.int32, out: CK):
    _concat(a, b, level, out=out)


@gtx.field_operator
def _edge_zones(c: CK, e: EK, first: gtx.int32) -> EK:
    return concat_where(Edge >= first, neighbor_sum(c(E2C), axis=E2CDim), e)


@gtx.program
def edge_zones(c: CK, e: EK, first: gtx.int32, out: EK):
    _edge_zones(c, e, first, out=out)


@gtx.field_operator
def _edge_band(c: CK, e: EK, first: gtx.int32, last: gtx.int32) -> EK:
    return concat_where((first <= Edge) & (Edge < last), neighbor_sum(c(E2C), axis=E2CDim), e)


@gtx.program
def edge_band(c: CK, e: EK, first: gtx.int32, last: gtx.int32, out: EK):
    _edge_band(c, e, first, last, out=out)


@gtx.field_operator
def _upwind(vn: EK, c: CK) -> EK:
    # icon4py's upwind choice: one test, then the same test again inside its branches (the
    # side of the cell and the offset by it), all in one zone of a concat_where.
    side = where(vn >= 0.0, c(E2C[0]), c(E2C[1]))
    shifted = where(vn >= 0.0, side * 2.0, side - 1.0)
    return where(vn >= 0.0, shifted + sqrt(vn * vn + 1.0), shifted - sqrt(vn * vn + 1.0))


@gtx.field_operator
def _zoned_upwind(vn: EK, c: CK, level: gtx.int32) -> EK:
    return concat_where(K >= level, _upwind(vn, c), vn)


@gtx.program
def zoned_upwind(vn: EK, c: CK, level: gtx.int32, out: EK):
    _zoned_upwind(vn, c, level, out=out)


@gtx.field_operator
def _zoned_shared(a: CK, b: CK, level: gtx.int32) -> CK:
    # One expression in both zones (reads at the point): computed once, before the test.
    return concat_where(K >= level, sqrt(a * b + 1.0) * a, sqrt(a * b + 1.0) - b)


@gtx.program
def zoned_shared(a: CK, b: CK, level: gtx.int32, out: CK):
    _zoned_shared(a, b, level, out=out)


@gtx.field_operator
def _zoned_k_offsets(a: CK, b: CK) -> CK:
    # The same difference in both zones, read one level up or down: the K-offset reads stay
    # in the zone that guards them (a(K - 1) at level 0 and a(K + 1) at the top do not exist).
    return concat_where(K >= 1, a(K - 1) * (a - b) + a * b, concat_where(K < 4, a(K + 1) * (a - b) + a * b, a))


@gtx.program
def zoned_k_offsets(a: CK, b: CK, out: CK):
    _zoned_k_offsets(a, b, out=out)


@gtx.field_operator
def _valued_branches(e: EK, coef: CK, s: float, flag: bool) -> CK:
    # icon4py's apply_diffusion_to_theta_and_exner: a neighbour sum read on every side of a
    # choice on a field's value (inside a choice on a scalar), a scalar argument read inside
    # one side only.
    total = neighbor_sum(e(C2E), axis=C2EDim)
    chosen = where(coef > 0.5, total + coef * s, total)
    return chosen if flag else total


@gtx.program
def valued_branches(e: EK, coef: CK, s: float, flag: bool, out: CK):
    _valued_branches(e, coef, s, flag, out=out)


# ---- tuples and several outputs -----------------------------------------------------------
@gtx.field_operator
def _two_outputs(a: CK, b: CK) -> tuple[CK, CK]:
    return a + b, a * b


@gtx.program
def two_outputs(a: CK, b: CK, total: CK, product: CK):
    _two_outputs(a, b, out=(total, product))


# ---- horizontal-only fields -----------------------------------------------------------------
@gtx.field_operator
def _horizontal(area: gtx.Field[gtx.Dims[Cell], gtx.float64], e: gtx.Field[gtx.Dims[Edge], gtx.float64]) -> gtx.Field[gtx.Dims[Cell], gtx.float64]:
    return area * (e(C2E[0]) + e(C2E[1]))


@gtx.program
def horizontal(area: gtx.Field[gtx.Dims[Cell], gtx.float64], e: gtx.Field[gtx.Dims[Edge], gtx.float64], out: gtx.Field[gtx.Dims[Cell], gtx.float64]):
    _horizontal(area, e, out=out)


# ---- temporaries: a reduction of a reduction ------------------------------------------------
@gtx.field_operator
def _nested(c: CK) -> CK:
    edge_sum = neighbor_sum(c(E2C), axis=E2CDim)
    return neighbor_sum(edge_sum(C2E), axis=C2EDim)


@gtx.program
def nested(c: CK, edge_like: EK, out: CK):
    _nested(c, out=out)


# ---- column scans -------------------------------------------------------------------------
@gtx.scan_operator(axis=K, forward=True, init=0.0)
def _running_sum(state: float, a: float) -> float:
    return state + a


@gtx.program
def running_sum(a: CK, out: CK):
    _running_sum(a, out=out)


@gtx.scan_operator(axis=K, forward=False, init=(0.0, 1.0))
def _backward_pair(state: tuple[float, float], a: float, b: float) -> tuple[float, float]:
    return state[0] * 0.5 + a, state[1] * b


@gtx.program
def backward_pair(a: CK, b: CK, first: CK, second: CK, v0: gtx.int32, v1: gtx.int32):
    _backward_pair(a, b, out=(first, second), domain={Cell: (0, 10), K: (v0, v1)})  # N_CELLS


@gtx.field_operator
def _scan_then_scale(a: CK) -> CK:
    return 2.0 * _running_sum(a)


@gtx.program
def scan_then_scale(a: CK, out: CK):
    _scan_then_scale(a, out=out)


@gtx.field_operator
def _unpacked_pair(a: CK, b: CK) -> tuple[CK, CK]:
    first, second = _backward_pair(a, b)
    return first, second


@gtx.program
def unpacked_pair(a: CK, b: CK, first: CK, second: CK):
    _unpacked_pair(a, b, out=(first, second))


# A scan read inside another expression: computed first into a kiln temporary over the levels
# the reader needs (GT4Py's domain inference), its column starting at the first of them.
@gtx.scan_operator(axis=K, forward=False, init=0.0)
def _sum_from_top(state: float, a: float) -> float:
    return 0.5 * state + a


@gtx.field_operator
def _sum_above(a: CK) -> CK:
    above = _sum_from_top(a)
    return concat_where(K < 4, above(K + 1), a) * 3.0  # N_LEVELS - 1


@gtx.program
def sum_above(a: CK, out: CK):
    _sum_above(a, out=out)


@gtx.field_operator
def _sum_below(a: CK, first: gtx.int32) -> CK:
    below = _running_sum(a)
    return a - concat_where(K > first, below(K - 1), 2.0 * a)


@gtx.program
def sum_below(a: CK, out: CK, first: gtx.int32, end: gtx.int32):
    _sum_below(a, first, out=out, domain={Cell: (0, 10), K: (first, end)})  # N_CELLS


@gtx.field_operator
def _second_of_pair(a: CK, b: CK) -> CK:
    return a + 2.0 * _backward_pair(a, b)[1]


@gtx.program
def second_of_pair(a: CK, b: CK, out: CK):
    _second_of_pair(a, b, out=out)


@gtx.field_operator
def _neighbours_sum(c: CK) -> EK:
    return neighbor_sum(_running_sum(c)(E2C), axis=E2CDim)


@gtx.program
def neighbours_sum(c: CK, out: EK):
    _neighbours_sum(c, out=out)


# ---- bool fields ---------------------------------------------------------------------------
@gtx.field_operator
def _masked(a: CK, mask: gtx.Field[gtx.Dims[Cell, K], bool], levels: gtx.Field[gtx.Dims[K], bool]) -> CK:
    return where(mask & levels, a, -a)


@gtx.program
def masked(a: CK, mask: gtx.Field[gtx.Dims[Cell, K], bool], levels: gtx.Field[gtx.Dims[K], bool], out: CK):
    _masked(a, mask, levels, out=out)


@gtx.field_operator
def _positive(a: CK) -> gtx.Field[gtx.Dims[Cell, K], bool]:
    return a > 0.5


@gtx.program
def positive(a: CK, out: gtx.Field[gtx.Dims[Cell, K], bool]):
    _positive(a, out=out)


# ---- a column of levels alone, and horizontal-only fields beside 2-D ones ------------------
KF = gtx.Field[gtx.Dims[K], gtx.float64]


@gtx.field_operator
def _column(a: KF, b: KF) -> KF:
    return 2.0 * a + b(K + 1) - b(K - 1)


@gtx.program
def column(a: KF, b: KF, out: KF, v0: gtx.int32, v1: gtx.int32):
    _column(a, b, out=out, domain={K: (v0, v1)})


@gtx.program
def vertical_only(a: KF, b: KF, out: KF):
    _column(a, b, out=out, domain={K: (1, 4)})  # N_LEVELS - 1


@gtx.scan_operator(axis=K, forward=False, init=0.0)
def _column_sum(state: float, a: float) -> float:
    return 0.5 * state + a


@gtx.program
def column_sum(a: KF, out: KF):
    _column_sum(a, out=out)


@gtx.field_operator
def _column_sum_below(a: KF) -> KF:
    return a + concat_where(K < 4, _column_sum(a)(K + 1), a)  # N_LEVELS - 1


@gtx.program
def column_sum_below(a: KF, out: KF):
    _column_sum_below(a, out=out)


@gtx.field_operator
def _mixed(area: gtx.Field[gtx.Dims[Cell], gtx.float64], a: CK, levels: KF) -> CK:
    return area * a + levels


@gtx.program
def mixed(area: gtx.Field[gtx.Dims[Cell], gtx.float64], a: CK, levels: KF, out: CK):
    _mixed(area, a, levels, out=out)


# ---- refused --------------------------------------------------------------------------------
@gtx.field_operator
def _int_power(i: gtx.Field[gtx.Dims[Cell, K], gtx.int32], n: gtx.int32) -> gtx.Field[gtx.Dims[Cell, K], gtx.int32]:
    return i**n


@gtx.program
def int_power(i: gtx.Field[gtx.Dims[Cell, K], gtx.int32], n: gtx.int32, out: gtx.Field[gtx.Dims[Cell, K], gtx.int32]):
    _int_power(i, n, out=out)


@gtx.field_operator
def _shift_up(a: CK) -> CK:
    return a(K + 1)


@gtx.program
def shift_in_place(a: CK):
    _shift_up(a, out=a, domain={Cell: (0, 10), K: (0, 4)})  # N_CELLS, N_LEVELS - 1
