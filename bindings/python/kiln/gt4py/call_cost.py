"""Per-call cost of a GT4Py `Program.__call__`: kiln's backend against GT4Py's embedded
execution and, with --gtfn, GT4Py's gtfn_cpu (whose first call compiles C++ for tens of
seconds). One icon4py diffusion program on icon4py's SimpleGrid (18 cells, 27 edges, 9
vertices): the fields are tiny, so what is timed is the path from Python to the computation.
The program, grid and arguments are kiln.gt4py.bench's (`bench.setup`, seeded inputs).

    python -O -m kiln.gt4py.call_cost [--program calculate_nabla4] [--calls 2000] [--gtfn]

-O matters: without it GT4Py type-checks every call's arguments in Python (its own warning
says so), some 300 us per call that no backend can remove. Rounds of each backend alternate
on one set of fields; the median round is printed, with kiln's own share (its kernel lookup
and call, measured inside the same calls).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from . import bench


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="calculate_nabla4")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--gtfn", action="store_true", help="also GT4Py's gtfn_cpu (compiles C++ first)")
    options = parser.parse_args(argv)

    import kiln.gt4py

    from . import call as kiln_call

    # bench's program, grid and seeded arguments: icon4py's SimpleGrid, 10 levels.
    setting = bench.parse(["--grid=simple", "--levels=10", f"--filter=^{options.program}$"])
    found = bench.programs(setting.filter)
    if not found:
        parser.error(f"no diffusion program named {options.program!r}")
    program, grid, kwargs = bench.setup(setting, found[0])
    provider = grid.connectivities()
    backends = {"embedded": None, "kiln": kiln.gt4py.backend()}
    if options.gtfn:
        from gt4py.next.program_processors.runners.gtfn import run_gtfn

        backends["gtfn_cpu"] = run_gtfn
    callables = {}
    for name, chosen in backends.items():
        start = time.perf_counter()
        callables[name] = program.with_backend(chosen)
        callables[name](**kwargs, offset_provider=provider)
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
                call(**kwargs, offset_provider=provider)
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
