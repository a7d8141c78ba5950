"""Random arguments for any GT4Py program on a generated grid, from its signature.

``program_inputs(program, grid, seed)`` reads the program's type (every
parameter's dimensions and dtype) and the domains of its calls (which integer
parameters bound which dimension) and draws each argument from a NumPy
generator seeded with ``seed``: the same seed gives the same arguments, so a
second call makes a reference's own copy. The one maker of the coverage tool,
the benchmark and the backend's tests. Fields are laid out by GT4Py's allocator
(``gtx.as_field``: its default layout, what icon4py's own fields have), or with
``order="C"`` or ``"F"`` in exactly that NumPy order, wrapped where they lie
(``"F"``: as ICON's Fortran passes them); the values are the same in any layout.

What the values are, and why:
- float fields uniform in [-1, 1), as icon4py's ``data_allocation.random_field``
  (which cannot be seeded); float scalars in [0.1, 1) (time steps, coefficients).
- every field with a K dimension has ``num_levels + 1`` levels, so that half
  levels (``w``, interface values) and ``Koff[1]`` reads are inside it; the
  vertical window of the domain (``Window``) is chosen by the caller.
- horizontal domain bounds: from ``grid.interior_start`` (0 on a torus, two
  rings in on a limited area, where every neighbour exists) to the end.
- integer parameters with a meaning (namelist switches, level indices, the
  vertical offsets ``ikoffset``) by name, as icon4py's stencil tests set them.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import gt4py.next as gtx
import numpy as np
from gt4py.next.ffront import program_ast as past
from gt4py.next.type_system import type_specifications as ts

from icon4py.model.common import dimension as dims

from . import grids


@dataclasses.dataclass(frozen=True)
class Window:
    """The vertical part of the domain: levels [start, num_levels - end_margin)."""

    start: int = 0
    end_margin: int = 0

    def __str__(self) -> str:
        return f"{self.start}..n-{self.end_margin}" if self.start or self.end_margin else "0..n"


#: Tried in order by the coverage tool: the full column, then one level off each end
#: (programs that read Koff[-1] at level 0 are not defined on the full column), then
#: three (the extrapolations to the top and the surface read three levels away).
WINDOWS = (Window(0, 0), Window(1, 1), Window(3, 3))


def first_window(attempt):
    """The first of WINDOWS a program is defined on, and what `attempt` made there:
    (index, window, attempt(window)), or None. `attempt(window)` runs the program on inputs
    for that window (GT4Py's embedded execution, or a reference that checks its reads as
    embedded does); it raises `IndexOutOfBounds` where the window reads outside the fields
    (a program reading K - 1 is not defined from level 0), which tries the next window.
    Any other error propagates: the program cannot run at all, whatever the window."""
    from gt4py.next.embedded import exceptions as embedded_errors

    for index, window in enumerate(WINDOWS):
        try:
            return index, window, attempt(window)
        except embedded_errors.IndexOutOfBounds:
            continue
    return None

# Namelist switches: the value that takes the most code (icon4py's enums).
_SWITCHES = {
    "divdamp_order": 24,  # DivergenceDampingOrder.COMBINED
    "divdamp_type": 32,  # DivergenceDampingType.COMBINED
    "igradp_method": 3,  # HorizontalPressureDiscretizationType.TAYLOR_HYDRO
    "rayleigh_type": 2,  # RayleighType.KLEMP
    "type_shear": 2,
    "nudge_zone_width": 8,
    "grf_nudge_start_e": 3,
}
# Level indices inside the column (a fraction of num_levels).
_LEVEL_FRACTIONS = {
    "nflatlev": 0.3, "nflat_gradp": 0.4, "flat_level_index_plus1": 0.3, "nrdmax": 0.3,
    "end_index_of_damping_layer": 0.3, "kstart_moist": 0.2, "kstart_dd3d": 0.2,
}  # fmt: skip


class InputError(ValueError):
    """A parameter this generator cannot make a value for (named in the message)."""


def domain_roles(program) -> dict[str, tuple[gtx.Dimension, str]]:
    """Integer parameters that bound a call's domain: name -> (dimension, 'start' | 'end')."""
    roles: dict[str, tuple[gtx.Dimension, str]] = {}
    for statement in program.past_stage.past_node.body:
        domain = getattr(statement, "kwargs", {}).get("domain")
        domains = domain.elts if isinstance(domain, past.TupleExpr) else [domain]
        for d in domains:
            if not isinstance(d, past.Dict):
                continue
            for key, bounds in zip(d.keys_, d.values_):
                for role, bound in zip(("start", "end"), getattr(bounds, "elts", ())):
                    if isinstance(bound, past.Name):
                        roles.setdefault(str(bound.id), (key.type.dim, role))
    return roles


def has_explicit_domains(program) -> bool:
    """Whether every call of the program names its domain (else outputs set it)."""
    calls = [s for s in program.past_stage.past_node.body if isinstance(s, past.Call)]
    return all("domain" in c.kwargs for c in calls)


def parameters(program) -> dict[str, ts.TypeSpec]:
    """The program's parameters and their GT4Py types, in order."""
    return dict(program.__gt_type__().definition.pos_or_kw_args)


def program_inputs(
    program, grid: grids.Grid, seed: int, window: Window = WINDOWS[0], order: str | None = None
) -> dict[str, Any]:
    """Arguments for every parameter of program, drawn from seed (reproducible); fields in
    GT4Py's layout (order None), or in `order` "C" (row-major) or "F" (column-major, ICON's)."""
    if order not in (None, "C", "F"):
        raise ValueError(f"kiln.gt4py.inputs: order must be None, 'C' or 'F', got {order!r}")
    rng = np.random.default_rng(seed)
    roles = domain_roles(program)
    levels = grid.num_levels + (1 if has_explicit_domains(program) else 0)
    maker = _Maker(grid, rng, roles, levels, window, order)
    return {name: maker.value(name, type_, program) for name, type_ in parameters(program).items()}


class _Maker:
    def __init__(self, grid, rng, roles, levels, window, order):
        self.grid, self.rng, self.roles, self.levels, self.window = grid, rng, roles, levels, window
        self.order = order

    def value(self, name: str, type_: ts.TypeSpec, program) -> Any:
        if isinstance(type_, ts.TupleType):
            return tuple(self.value(name, t, program) for t in type_.types)
        if isinstance(type_, ts.FieldType):
            return self.field(name, type_)
        if isinstance(type_, ts.ScalarType):
            return self.scalar(name, type_.kind)
        raise InputError(f"{_name(program)}: parameter {name!r} has type {type_}, not a field or scalar")

    def shape(self, name: str, dimensions) -> tuple[int, ...]:
        shape = []
        for d in dimensions:
            if d == dims.KDim:
                shape.append(self.levels)
            elif d in self.grid.sizes:
                shape.append(self.grid.sizes[d])
            elif d.kind == gtx.DimensionKind.LOCAL and d.value in self.grid.tables:
                shape.append(self.grid.tables[d.value].shape[1])
            else:
                raise InputError(f"parameter {name!r}: no size for dimension {d.value!r} on {self.grid.name}")
        return tuple(shape)

    def field(self, name: str, type_: ts.FieldType):
        shape = self.shape(name, type_.dims)
        kind = type_.dtype.kind
        if kind == ts.ScalarKind.BOOL:
            data = self.rng.random(shape) < 0.5
        elif kind in (ts.ScalarKind.INT32, ts.ScalarKind.INT64):
            data = self.integers(name, type_.dims, shape)
        elif kind in (ts.ScalarKind.FLOAT32, ts.ScalarKind.FLOAT64):
            data = self.rng.uniform(-1.0, 1.0, shape)
        else:
            raise InputError(f"parameter {name!r}: fields of {kind.name} are not generated")
        dtype = {ts.ScalarKind.FLOAT32: np.float32, ts.ScalarKind.INT64: np.int64}.get(kind)
        dtype = dtype or {ts.ScalarKind.BOOL: bool, ts.ScalarKind.INT32: np.int32}.get(kind, np.float64)
        if self.order is None:
            return gtx.as_field(list(type_.dims), np.ascontiguousarray(data, dtype=dtype))
        return _wrapped(type_.dims, np.array(data, dtype=dtype, order=self.order))

    def integers(self, name: str, dimensions, shape) -> np.ndarray:
        if dims.KDim in dimensions and re.search(r"offset", name):
            # Vertical offsets (ikoffset, zd_vertoffset): k + offset reaches every level but
            # the last, which the programs read with +1 (icon4py's stencil tests do the same).
            k = np.arange(shape[list(dimensions).index(dims.KDim)])
            k = k.reshape([-1 if d == dims.KDim else 1 for d in dimensions])
            top = max(self.grid.num_levels - 2, 1)
            return np.clip(self.rng.integers(0, top, shape) - k, -k, top - k)
        if name == "refin_ctrl":  # ICON's boundary row numbers: 0 interior, 1.. rows
            return self.rng.integers(-1, 12, shape)
        return self.rng.integers(0, self.grid.num_levels, shape)

    def scalar(self, name: str, kind: ts.ScalarKind):
        if kind == ts.ScalarKind.BOOL:
            return bool(self.rng.random() < 0.5)
        if kind in (ts.ScalarKind.FLOAT32, ts.ScalarKind.FLOAT64):
            value = self.rng.uniform(0.1, 1.0)
            return np.float32(value) if kind == ts.ScalarKind.FLOAT32 else np.float64(value)
        if kind in (ts.ScalarKind.INT32, ts.ScalarKind.INT64):
            value = self.index(name)
            return gtx.int32(value) if kind == ts.ScalarKind.INT32 else gtx.int64(value)
        raise InputError(f"parameter {name!r}: scalars of {kind.name} are not generated")

    def index(self, name: str) -> int:
        nlev, window = self.grid.num_levels, self.window
        if name in self.roles:
            dim, role = self.roles[name]
            if dim == dims.KDim:
                return window.start if role == "start" else nlev - window.end_margin
            return self.grid.interior_start[dim] if role == "start" else self.grid.sizes[dim]
        if name in _SWITCHES:
            return _SWITCHES[name]
        if name in _LEVEL_FRACTIONS:
            return max(window.start + 1, int(_LEVEL_FRACTIONS[name] * nlev))
        if name in ("model_top", "vertical_start_index_model_top"):
            return window.start
        if name in ("surface_level", "vertical_end_index_model_surface"):
            return nlev + 1 - window.end_margin
        dim = _horizontal_dim_of(name)
        if dim is not None:  # a zone boundary (start_edge_nudging, end_cell_halo, ...)
            start, size = self.grid.interior_start[dim], self.grid.sizes[dim]
            return start if "start" in name else size
        return int(self.rng.integers(0, nlev))


def _wrapped(dimensions, array: np.ndarray):
    """`array` as a GT4Py field where it lies: gtx.as_field would copy it into the layout of
    GT4Py's allocator, whatever its order."""
    from gt4py.next.embedded import nd_array_field

    domain = {d: (0, n) for d, n in zip(dimensions, array.shape)}
    return nd_array_field.NumPyArrayField.from_array(array, domain=domain)


def _horizontal_dim_of(name: str):
    for word, dim in (("cell", dims.CellDim), ("edge", dims.EdgeDim), ("vert", dims.VertexDim)):
        if word in name and re.search(r"start|end|idx|index", name):
            return dim
    if name in ("halo_idx", "interior_idx"):
        return dims.CellDim
    return None


def _name(program) -> str:
    return getattr(program, "__name__", None) or program.definition_stage.definition.__name__
