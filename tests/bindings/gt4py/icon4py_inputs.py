"""Random arguments for an icon4py program on icon4py's SimpleGrid, from its signature.

Fields get random values on the grid's sizes (every vertical field nlev + 1 levels; the vertical
domain is levels 1 to nlev - 1, so K - 1, K + 1 and half levels are in range); the domain bounds cover the grid
(found in the program's GTIR: the dimension each bound parameter bounds); integer fields are
vertical offsets or indices kept in range, booleans random, other scalars random.
"""

from __future__ import annotations

import numpy as np

NUM_LEVELS = 6


def simple_grid():
    from icon4py.model.common.grid import simple

    return simple.simple_grid(num_levels=NUM_LEVELS)


def bound_dimensions(program) -> dict[str, str]:
    """Program parameter -> the dimension whose range it bounds in a statement's domain."""
    from gt4py.next.iterator import ir as itir

    bounds = {}
    for named_range in program.gtir.walk_values().if_isinstance(itir.FunCall):
        if getattr(named_range.fun, "id", None) != "named_range":
            continue
        axis, start, end = named_range.args
        for node in (start, end):
            if isinstance(node, itir.SymRef):
                bounds[str(node.id)] = str(axis.value)
    return bounds


def sizes(grid) -> dict[str, int]:
    return {"Cell": grid.num_cells, "Edge": grid.num_edges, "Vertex": grid.num_vertices, "K": NUM_LEVELS + 1}


def connectivity_size(grid, local_dim: str) -> int:
    return grid.get_connectivity(local_dim).ndarray.shape[1]


def make_arguments(program, grid, seed: int, order: str = "C") -> dict:
    """Keyword arguments for `program`: fields in `order` ('C' or 'F'), scalars, bounds."""
    import gt4py.next as gtx
    from gt4py.next.type_system import type_specifications as ts

    rng = np.random.default_rng(seed)
    params = program.past_stage.past_node.type.definition.pos_or_kw_args
    bounds = bound_dimensions(program)
    n = sizes(grid)
    arguments = {}
    for name, type_ in params.items():
        if isinstance(type_, ts.FieldType):
            dims = type_.dims
            shape = tuple(
                n[d.value] if d.kind != gtx.DimensionKind.LOCAL else connectivity_size(grid, d.value) for d in dims
            )
            kind = type_.dtype.kind.name
            if kind.startswith("FLOAT"):
                data = rng.uniform(0.1, 1.0, shape)
            elif kind == "BOOL":
                data = rng.random(shape) < 0.5
            else:  # vertical offsets and indices: small and non-negative
                data = np.zeros(shape, dtype=np.int32)
            data = np.asarray(data, dtype=np.dtype(kind.lower().replace("bool", "bool_")) if kind != "BOOL" else bool)
            arguments[name] = gtx.as_field(dims, np.array(data, order=order))
        elif name in bounds:
            dim = bounds[name]
            if dim == "K":  # levels 1 to nlev - 1: room for K - 1 and K + 1 (and K + 2, half levels)
                arguments[name] = gtx.int32(1 if "start" in name else NUM_LEVELS - 1)
            else:
                arguments[name] = gtx.int32(0 if "start" in name else n[dim])
        else:
            kind = type_.kind.name
            if kind == "BOOL":
                arguments[name] = bool(rng.random() < 0.5)
            elif kind.startswith("INT"):
                arguments[name] = gtx.int32(2)
            else:
                arguments[name] = float(rng.uniform(0.1, 1.0))
    return arguments


def copy_arguments(arguments: dict) -> dict:
    import gt4py.next as gtx

    return {
        k: gtx.as_field(v.domain, v.ndarray.copy(order="A")) if hasattr(v, "ndarray") else v
        for k, v in arguments.items()
    }
