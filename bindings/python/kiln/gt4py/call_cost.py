"""Per-call cost of a GT4Py `Program.__call__`: kiln's backend against GT4Py's embedded
execution and, with --gtfn, GT4Py's gtfn_cpu (whose first call compiles C++ for tens of
seconds). One icon4py diffusion program on icon4py's SimpleGrid (18 cells, 27 edges, 9
vertices): the fields are tiny, so what is timed is the path from Python to the computation.

    python -O -m kiln.gt4py.call_cost [--program calculate_nabla4] [--calls 2000] [--gtfn]

-O matters: without it GT4Py type-checks every call's arguments in Python (its own warning
says so), some 300 us per call that no backend can remove. Rounds of each backend alternate
on one set of fields; the median round is printed, with kiln's own share (its kernel lookup
and call, measured inside the same calls).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time

import numpy as np


def arguments(program, grid, seed: int) -> dict:
    """Random fields on the grid's sizes (vertical fields nlev + 1 levels), bounds covering it."""
    import gt4py.next as gtx
    from gt4py.next.iterator import ir as itir
    from gt4py.next.type_system import type_specifications as ts

    rng = np.random.default_rng(seed)
    sizes = {"Cell": grid.num_cells, "Edge": grid.num_edges, "Vertex": grid.num_vertices, "K": grid.num_levels + 1}
    bounds = {}
    for call in program.gtir.walk_values().if_isinstance(itir.FunCall):
        if getattr(call.fun, "id", None) == "named_range":
            for node in call.args[1:]:
                if isinstance(node, itir.SymRef):
                    bounds[str(node.id)] = str(call.args[0].value)
    result = {}
    for name, type_ in program.past_stage.past_node.type.definition.pos_or_kw_args.items():
        if isinstance(type_, ts.FieldType):
            shape = tuple(
                sizes[d.value] if d.kind != gtx.DimensionKind.LOCAL else grid.get_connectivity(d.value).ndarray.shape[1]
                for d in type_.dims
            )
            kind = type_.dtype.kind.name.lower()
            data = rng.uniform(0.1, 1.0, shape) if kind.startswith("float") else np.zeros(shape)
            result[name] = gtx.as_field(type_.dims, data.astype(kind if kind != "bool" else bool))
        elif name in bounds:
            end = grid.num_levels - 1 if bounds[name] == "K" else sizes[bounds[name]]
            result[name] = gtx.int32(1 if "start" in name and bounds[name] == "K" else 0 if "start" in name else end)
        else:
            kind = type_.kind.name
            result[name] = True if kind == "BOOL" else gtx.int32(2) if kind.startswith("INT") else 0.5
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="calculate_nabla4")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--gtfn", action="store_true", help="also GT4Py's gtfn_cpu (compiles C++ first)")
    options = parser.parse_args(argv)

    import kiln.gt4py
    from icon4py.model.common.grid import simple

    from . import call as kiln_call

    module = importlib.import_module(f"icon4py.model.atmosphere.diffusion.stencils.{options.program}")
    program = getattr(module, options.program)
    grid = simple.simple_grid(num_levels=10)
    kwargs = arguments(program, grid, seed=0)
    args = list(kwargs.values())
    provider = grid.connectivities
    backends = {"embedded": None, "kiln": kiln.gt4py.backend()}
    if options.gtfn:
        from gt4py.next.program_processors.runners.gtfn import run_gtfn

        backends["gtfn_cpu"] = run_gtfn
    callables = {}
    for name, chosen in backends.items():
        start = time.perf_counter()
        callables[name] = program.with_backend(chosen)
        callables[name](*args, offset_provider=provider)
        print(f"{name}: first call {time.perf_counter() - start:.3f} s", file=sys.stderr)

    inside = [0.0]
    original = kiln_call.KilnProgram.__call__

    def timed(self, *a, **k):
        start = time.perf_counter()
        original(self, *a, **k)
        inside[0] += time.perf_counter() - start

    rounds = {name: [] for name in callables}
    kiln_share = []
    for _ in range(options.rounds):
        for name, call in callables.items():
            kiln_call.KilnProgram.__call__ = timed if name == "kiln" else original
            inside[0] = 0.0
            start = time.perf_counter()
            for _ in range(options.calls):
                call(*args, offset_provider=provider)
            rounds[name].append((time.perf_counter() - start) / options.calls * 1e6)
            if name == "kiln":
                kiln_share.append(inside[0] / options.calls * 1e6)
    kiln_call.KilnProgram.__call__ = original
    print(f"{options.program}, {options.calls} calls x {options.rounds} rounds, python -O: {not __debug__}")
    for name, values in rounds.items():
        print(f"  {name:10s} {statistics.median(values):9.1f} us per call")
    print(f"  (kiln's part of its calls: {statistics.median(kiln_share):.1f} us, timing wrapper included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
