"""Generated ICON grids for running icon4py's programs: a torus and a limited area.

Both are the triangulation of icon4py's ``SimpleGrid`` (a square of vertices,
each quad cut along its diagonal into an "upper" and a "lower" cell), of any
size: ``torus(nx, ny)`` wraps around like ``SimpleGrid`` (``torus(3, 3)`` has
its numbering: the same C2V, C2E, E2V, C2E2C tables; the others hold the same
neighbours in one regular order, where SimpleGrid's hand-written tables vary
theirs at the wrap), ``limited_area(nx, ny)`` does not,
so that its connectivities hold ``-1`` where a neighbour is missing, as at the
lateral boundary of an ICON limited-area grid. Like ICON, the limited-area grid
numbers its entities boundary first: ``Grid.interior_start`` is where the
entities whose neighbours (two rings deep) all exist begin.

``simple_grid()`` is icon4py's own ``SimpleGrid`` in the same shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import gt4py.next as gtx
import numpy as np

from icon4py.model.common import dimension as dims
from icon4py.model.common.grid import base as icon_grid_base

#: Horizontal dimensions, in the order the sizes are reported.
HORIZONTAL = (dims.CellDim, dims.EdgeDim, dims.VertexDim)

# Edge kinds at a vertex (i, j), as SimpleGrid numbers them: edge 3*v + kind.
_HORIZ, _DIAG, _VERT = 0, 1, 2


@dataclasses.dataclass(frozen=True)
class Grid:
    """A horizontal grid with levels: tables, GT4Py connectivities and sizes."""

    name: str
    tables: Mapping[str, np.ndarray]  # offset name -> int32 (entities, neighbours), -1: none
    sizes: Mapping[gtx.Dimension, int]  # CellDim, EdgeDim, VertexDim, KDim
    limited_area: bool
    #: First entity of each horizontal dimension whose neighbours all exist two rings deep.
    interior_start: Mapping[gtx.Dimension, int]
    #: Entities of each horizontal dimension by distance to the boundary (limited area).
    ring: Mapping[gtx.Dimension, np.ndarray]

    @property
    def num_levels(self) -> int:
        return self.sizes[dims.KDim]

    def connectivities(self, replace_skip_values: bool = False) -> dict[str, object]:
        """GT4Py's offset providers: each table as a connectivity (gt4py 1.2.3 takes
        neighbour tables only: Koff needs no entry), with skip value -1 where the
        table has missing neighbours (as icon4py marks a limited area's).

        replace_skip_values: each -1 replaced by another neighbour of its row, no skip
        value (icon4py's workaround, which GT4Py's embedded execution needs: it cannot
        shift a field through a table with missing neighbours). Two rings in from the
        boundary, where the coverage tool's domains start, the tables are the same."""
        return {
            name: icon_grid_base.construct_connectivity(
                _OFFSETS[name],
                table,
                skip_value=-1 if (table < 0).any() else None,
                replace_skip_values=replace_skip_values and bool((table < 0).any()),
            )
            for name, table in self.tables.items()
        }

    def describe(self) -> str:
        sizes = ", ".join(f"{self.sizes[d]} {d.value.lower()}s" for d in HORIZONTAL[:2])
        sizes += f", {self.sizes[dims.VertexDim]} vertices"
        return f"{self.name}: {sizes}, {self.num_levels} levels"


_OFFSETS = {
    o.value: o
    for o in (
        dims.C2V, dims.C2E, dims.E2V, dims.E2C, dims.V2C, dims.V2E, dims.C2E2C, dims.C2E2CO,
        dims.E2C2V, dims.E2C2E, dims.E2C2EO, dims.C2E2C2E, dims.C2E2C2E2C, dims.V2E2V,
    )
}  # fmt: skip


class _Lattice:
    """Index arithmetic of the triangulated square: vertices (i, j), cells and edges."""

    def __init__(self, nx: int, ny: int, periodic: bool):
        if nx < 3 or ny < 3:
            raise ValueError(f"a grid needs at least 3 x 3 quads, got {nx} x {ny}")
        self.nx, self.ny, self.periodic = nx, ny, periodic
        # A limited area has one more row and column of vertices than of quads.
        self.vx, self.vy = (nx, ny) if periodic else (nx + 1, ny + 1)
        i, j = np.meshgrid(np.arange(self.vx), np.arange(self.vy), indexing="xy")
        self.vi, self.vj = i.ravel(), j.ravel()  # vertex v = j * vx + i
        # Edge 3*v + kind exists where its far end does; SimpleGrid's numbering, compressed.
        far = {
            _HORIZ: self.vertex(self.vi + 1, self.vj),
            _DIAG: self.vertex(self.vi + 1, self.vj + 1),
            _VERT: self.vertex(self.vi, self.vj + 1),
        }
        exists = np.stack([far[k] >= 0 for k in (_HORIZ, _DIAG, _VERT)], axis=1).ravel()
        self.edge_of_slot = np.where(exists, np.cumsum(exists) - 1, -1)
        self.num_edges = int(exists.sum())
        self.num_cells = 2 * nx * ny

    def vertex(self, i, j):
        """Vertex at (i, j), -1 outside a limited area."""
        i, j = np.asarray(i), np.asarray(j)
        if self.periodic:
            return (j % self.vy) * self.vx + (i % self.vx)
        inside = (i >= 0) & (i < self.vx) & (j >= 0) & (j < self.vy)
        return np.where(inside, j * self.vx + i, -1)

    def edge(self, i, j, kind):
        """Edge of the given kind starting at vertex (i, j), -1 where there is none."""
        v = self.vertex(i, j)
        slot = np.where(v >= 0, 3 * v + kind, 0)
        return np.where(v >= 0, self.edge_of_slot[slot], -1)

    def cell(self, i, j, lower):
        """Upper (lower=False) or lower cell of quad (i, j), -1 outside a limited area."""
        i, j = np.asarray(i), np.asarray(j)
        if self.periodic:
            i, j = i % self.nx, j % self.ny
            inside = np.ones(np.broadcast(i, j).shape, bool)
        else:
            inside = (i >= 0) & (i < self.nx) & (j >= 0) & (j < self.ny)
        index = j * 2 * self.nx + np.where(lower, self.nx, 0) + i
        return np.where(inside, index, -1)


def _primary_tables(lat: _Lattice) -> dict[str, np.ndarray]:
    """C2V, C2E, E2V, E2C, V2C, V2E, V2E2V from the lattice, in SimpleGrid's orders."""
    nx = lat.nx
    c = np.arange(lat.num_cells)
    ci, cj, lower = c % nx, c // (2 * nx), (c // nx) % 2 == 1
    v00, v10 = lat.vertex(ci, cj), lat.vertex(ci + 1, cj)
    v01, v11 = lat.vertex(ci, cj + 1), lat.vertex(ci + 1, cj + 1)
    c2v = np.where(lower[:, None], np.stack([v00, v01, v11], 1), np.stack([v00, v10, v11], 1))
    upper_edges = np.stack(
        [lat.edge(ci, cj, _HORIZ), lat.edge(ci, cj, _DIAG), lat.edge(ci + 1, cj, _VERT)], 1
    )
    lower_edges = np.stack(
        [lat.edge(ci, cj, _DIAG), lat.edge(ci, cj, _VERT), lat.edge(ci, cj + 1, _HORIZ)], 1
    )
    c2e = np.where(lower[:, None], lower_edges, upper_edges)

    slots = np.flatnonzero(lat.edge_of_slot >= 0)
    v, kind = slots // 3, slots % 3
    i, j = lat.vi[v], lat.vj[v]
    far = np.select(
        [kind == _HORIZ, kind == _DIAG],
        [lat.vertex(i + 1, j), lat.vertex(i + 1, j + 1)],
        lat.vertex(i, j + 1),
    )
    e2v = np.stack([v, far], 1)
    e2c = np.select(
        [(kind == _HORIZ)[:, None], (kind == _DIAG)[:, None]],
        [
            np.stack([lat.cell(i, j - 1, True), lat.cell(i, j, False)], 1),
            np.stack([lat.cell(i, j, False), lat.cell(i, j, True)], 1),
        ],
        np.stack([lat.cell(i - 1, j, False), lat.cell(i, j, True)], 1),
    )

    i, j = lat.vi, lat.vj
    v2c = np.stack(
        [
            lat.cell(i, j, False), lat.cell(i, j, True), lat.cell(i - 1, j, False),
            lat.cell(i - 1, j - 1, True), lat.cell(i - 1, j - 1, False), lat.cell(i, j - 1, True),
        ],
        1,
    )  # fmt: skip
    v2e = np.stack(
        [
            lat.edge(i, j, _HORIZ), lat.edge(i, j, _DIAG), lat.edge(i, j, _VERT),
            lat.edge(i - 1, j, _HORIZ), lat.edge(i - 1, j - 1, _DIAG), lat.edge(i, j - 1, _VERT),
        ],
        1,
    )  # fmt: skip
    v2e2v = np.stack(
        [
            lat.vertex(i + 1, j), lat.vertex(i + 1, j + 1), lat.vertex(i, j + 1),
            lat.vertex(i - 1, j), lat.vertex(i - 1, j - 1), lat.vertex(i, j - 1),
        ],
        1,
    )  # fmt: skip
    return {"C2V": c2v, "C2E": c2e, "E2V": e2v, "E2C": e2c, "V2C": v2c, "V2E": v2e, "V2E2V": v2e2v}


def _gather(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """table[index] row by row, -1 where index is -1 (a missing neighbour has none)."""
    rows = table[np.where(index >= 0, index, 0)]
    return np.where((index >= 0)[..., None], rows, -1)


def _without(rows: np.ndarray, drop: np.ndarray, keep: int) -> np.ndarray:
    """Each row of rows without its entry equal to drop (first `keep` of the rest, in order).

    A row where drop is missing (-1) lacks that neighbour: its first `keep` entries."""
    order = np.argsort(rows == drop[:, None], axis=1, kind="stable")
    return np.take_along_axis(rows, order, axis=1)[:, :keep]


def _derived_tables(t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The two-step tables from the primary ones, in SimpleGrid's orders."""
    num_cells = len(t["C2E"])
    cells = np.arange(num_cells)
    # The cell across each of a cell's edges, in SimpleGrid's order: edges 0, 2, 1.
    edge_cells = _gather(t["E2C"], t["C2E"])  # (cells, 3, 2)
    across = np.where(edge_cells[..., 0] == cells[:, None], edge_cells[..., 1], edge_cells[..., 0])
    c2e2c = across[:, [0, 2, 1]]
    c2e2co = np.concatenate([c2e2c, cells[:, None]], 1)
    c2e2c2e = _gather(t["C2E"], c2e2c).reshape(num_cells, 9)
    second = _gather(c2e2c, c2e2c)  # (cells, 3, 3): neighbours of the neighbours
    second = np.stack([_without(second[:, k], cells, 2) for k in range(3)], 1)
    second = np.where((c2e2c >= 0)[..., None], second, -1)
    c2e2c2e2c = np.concatenate([c2e2c, second.reshape(num_cells, 6)], 1)

    edges = np.arange(len(t["E2C"]))
    e2c = t["E2C"]
    # The vertex of each of the edge's cells that is not on the edge.
    cell_vertices = _gather(t["C2V"], e2c)  # (edges, 2, 3)
    on_edge = (cell_vertices == t["E2V"][:, None, :1]) | (cell_vertices == t["E2V"][:, None, 1:])
    opposite = np.take_along_axis(cell_vertices, np.argmin(on_edge, axis=2)[..., None], 2)[..., 0]
    e2c2v = np.concatenate([t["E2V"], np.where(e2c >= 0, opposite, -1)], 1)
    cell_edges = _gather(t["C2E"], e2c)  # (edges, 2, 3)
    others = np.stack([_without(cell_edges[:, k], edges, 2) for k in range(2)], 1)
    others = np.where((e2c >= 0)[..., None], others, -1)
    e2c2e = others.reshape(len(edges), 4)
    # E2C2EO: the first cell's three edges, then the second cell's other two.
    first = np.where((e2c[:, :1] >= 0), cell_edges[:, 0], -1)
    e2c2eo = np.concatenate([first, others[:, 1]], 1)
    if (e2c[:, 0] < 0).any():  # a boundary edge whose first cell is missing: itself first
        lone = e2c[:, 0] < 0
        e2c2eo[lone] = np.concatenate([edges[lone, None], others[lone, 1], [[-1, -1]] * lone.sum()], 1)
    return {
        "C2E2C": c2e2c, "C2E2CO": c2e2co, "C2E2C2E": c2e2c2e, "C2E2C2E2C": c2e2c2e2c,
        "E2C2V": e2c2v, "E2C2E": e2c2e, "E2C2EO": e2c2eo,
    }  # fmt: skip


_TARGET = {  # offset -> (entities it starts from, entities it reaches)
    name: (o.target[0], o.source) for name, o in _OFFSETS.items()
}


def _rings(tables: dict[str, np.ndarray], sizes: dict) -> dict[gtx.Dimension, np.ndarray]:
    """Distance of each entity to the boundary: cells by C2E2C steps from a cell lacking a
    neighbour, edges and vertices the least of their cells' (ICON's refin_ctrl rows)."""
    c2e2c = tables["C2E2C"]
    ring = np.where((c2e2c < 0).any(axis=1), 0, np.iinfo(np.int32).max)
    for _ in range(len(ring)):
        step = np.where(c2e2c >= 0, ring[np.where(c2e2c >= 0, c2e2c, 0)], np.iinfo(np.int32).max)
        new = np.minimum(ring, step.min(axis=1).astype(np.int64) + 1)
        if (new == ring).all():
            break
        ring = new
    big = np.iinfo(np.int32).max

    def through(table):
        return np.where(table >= 0, ring[np.where(table >= 0, table, 0)], big).min(axis=1)

    return {dims.CellDim: ring, dims.EdgeDim: through(tables["E2C"]), dims.VertexDim: through(tables["V2C"])}


def _renumber(tables, rings):
    """Numbers each dimension's entities by ring (boundary first), keeping the order within."""
    perm = {d: np.argsort(r, kind="stable") for d, r in rings.items()}
    new_of_old = {d: np.argsort(p) for d, p in perm.items()}
    renumbered = {}
    for name, table in tables.items():
        source, reached = _TARGET[name]
        rows = table[perm[source]]
        renumbered[name] = np.where(rows >= 0, new_of_old[reached][np.where(rows >= 0, rows, 0)], -1)
    return renumbered, {d: rings[d][perm[d]] for d in rings}


def _build(name: str, nx: int, ny: int, num_levels: int, periodic: bool) -> Grid:
    if num_levels < 2:
        raise ValueError(f"a grid needs at least 2 levels, got {num_levels}")
    lat = _Lattice(nx, ny, periodic)
    tables = _primary_tables(lat)
    tables |= _derived_tables(tables)
    tables = {k: v.astype(np.int32) for k, v in tables.items()}
    sizes = {dims.CellDim: lat.num_cells, dims.EdgeDim: lat.num_edges, dims.VertexDim: lat.vx * lat.vy}
    if periodic:
        rings = {d: np.full(sizes[d], np.iinfo(np.int32).max) for d in HORIZONTAL}
        start = {d: 0 for d in HORIZONTAL}
    else:
        tables, rings = _renumber(tables, _rings(tables, sizes))
        tables = {k: v.astype(np.int32) for k, v in tables.items()}
        # Two rings in: every table's neighbours exist (C2E2C2E2C reaches two cells away).
        start = {d: int(np.searchsorted(rings[d], 2)) for d in HORIZONTAL}
    return Grid(
        name=name,
        tables=tables,
        sizes={**sizes, dims.KDim: num_levels},
        limited_area=not periodic,
        interior_start=start,
        ring=rings,
    )


def torus(nx: int = 16, ny: int = 16, num_levels: int = 10) -> Grid:
    """A periodic grid of nx x ny quads (2 nx ny cells): no missing neighbour."""
    return _build(f"torus {nx}x{ny}", nx, ny, num_levels, periodic=True)


def limited_area(nx: int = 16, ny: int = 16, num_levels: int = 10) -> Grid:
    """A limited-area grid of nx x ny quads: -1 in the tables at its boundary."""
    return _build(f"limited area {nx}x{ny}", nx, ny, num_levels, periodic=False)


def simple_grid(num_levels: int = 10) -> Grid:
    """icon4py's own SimpleGrid (3 x 3 quads on a torus), as a Grid."""
    from icon4py.model.common.grid import simple

    icon = simple.simple_grid(num_levels=num_levels)
    tables = {
        name: np.asarray(icon.get_connectivity(name).ndarray, dtype=np.int32)
        for name in _OFFSETS
        if name in icon.connectivities
    }
    sizes = {d: icon.size[d] for d in HORIZONTAL}
    return Grid(
        name="icon4py SimpleGrid",
        tables=tables,
        sizes={**sizes, dims.KDim: num_levels},
        limited_area=False,
        interior_start={d: 0 for d in HORIZONTAL},
        ring={d: np.full(sizes[d], np.iinfo(np.int32).max) for d in HORIZONTAL},
    )


def make(kind: str, size: str = "16x16", num_levels: int = 10) -> Grid:
    """A grid by name (torus, lam, simple) and size 'NXxNY', for the command lines."""
    if kind == "simple":
        return simple_grid(num_levels)
    try:
        nx, ny = (int(n) for n in size.lower().split("x"))
    except ValueError:
        raise ValueError(f"grid size must be NXxNY (for example 16x16), got {size!r}") from None
    builders = {"torus": torus, "lam": limited_area}
    if kind not in builders:
        raise ValueError(f"unknown grid {kind!r}: torus, lam or simple")
    return builders[kind](nx, ny, num_levels)
