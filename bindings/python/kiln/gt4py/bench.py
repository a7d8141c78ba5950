"""icon4py's diffusion programs on kiln against GT4Py's own backends, side by side in one run.

    python -O -m kiln.gt4py.bench [--grid torus] [--size 128x80] [--levels 80] [--filter RE] [--gtfn]
        [--threads N] [--skip startup|calls|run] [--only startup|calls|run|batch] [--bandwidth]

Prints, with the machine (CPU model, cores):
1. start-up: each program's first call with an empty kiln cache (cold, all
   programs in one new process) and in a second new process with that cache
   (warm), split into GT4Py's part (its transforms and its Python around the
   backend) and kiln's part (translation or its lookup, and the first kernel
   call: compile or cache load, then the run), the run (a second call) and
   GT4Py's with_backend apart; see kiln.gt4py.timing.
4. batch (--only batch): the kernels of every program's first call compiled again
   in fresh caches, one request at a time (as GT4Py's first calls ask) against one
   Runtime.kernels batch (misses compile in parallel).
2. call cost: seconds per ``Program.__call__`` on a one-point domain (so that it
   is the call path, not the stencil) with kiln's backend, with ``embedded`` and,
   with --gtfn, with ``gtfn_cpu``; and kiln's bound fast path (``Kernel.bind``)
   on the same one-point domain.
3. run time: seconds per call on the whole grid (icon4py's 20480 cells x 80
   levels by default: a 128 x 80 torus) in GT4Py's field layout (horizontal index
   contiguous, K next: what its CPU allocator gives), kiln against gtfn_cpu
   (--gtfn) or embedded (3 rounds only), measured interleaved on one set of fields.
   With --bandwidth, also GB/s: the fields' bytes (each read once, each output
   written once) per call, beside a STREAM-like copy measured in the same run, for
   programs that read no neighbour and only stream their fields.

--gtfn compiles every program with gtfn_cpu (CMake, nanobind, g++: 28-46 s each
on 2 cores, GT4Py's build cache kept between runs): it is an option. GT4Py's
build pool is set to its calling thread (GT4PY_BUILD_JOBS=0 unless set), which
avoids a process that imports GT4Py again.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

DIFFUSION = "diffusion"


def machine() -> str:
    """CPU model, cores this process may use, and the machine's."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {usable} cores usable of {os.cpu_count()}, {platform.system()} {platform.release()}"


def versions() -> str:
    from importlib import metadata

    names = ("gt4py", "icon4py-common", "numpy")
    found = ", ".join(f"{n} {metadata.version(n)}" for n in names)
    return f"Python {platform.python_version()}, {found}"


def programs(pattern: str | None) -> list[str]:
    from . import coverage

    return coverage.discover(DIFFUSION, pattern)


def setup(options, program_id: str):
    """The program, its grid's providers and its arguments (seeded), on the program's window."""
    from . import coverage, grids, inputs

    grid = _grid(options)
    program = coverage.load(program_id)
    window = inputs.WINDOWS[getattr(options, "window_of", {}).get(program_id, 0)]
    args = inputs.program_inputs(program, grid, options.seed, window)
    return program, grid, args


def inputs_window(index: int) -> str:
    from . import inputs

    return str(inputs.WINDOWS[index])


def windows(options) -> dict[str, int]:
    """Each program's first vertical window that GT4Py's embedded execution runs it on (where
    not the first): a program reading K - 1 is not defined from level 0, and kiln refuses such
    a call as embedded does, where gtfn_cpu would read outside its fields. Found on a small
    grid of the same kind and levels (the windows are vertical), once, by the parent process."""
    from . import coverage, grids, inputs

    grid = grids.make(options.grid, "8x8", options.levels)
    providers = grid.connectivities(replace_skip_values=True)
    found = {}
    for program_id in programs(options.filter):
        program = coverage.load(program_id).with_backend(None)

        def attempt(window, program=program):
            program(**inputs.program_inputs(program, grid, options.seed, window), offset_provider=providers)

        try:
            first = inputs.first_window(attempt)
        except Exception:  # noqa: BLE001: embedded cannot run it at all; its row will say why
            continue
        if first is not None and first[0]:
            found[program_id] = first[0]
    return found


_GRIDS: dict = {}


def _grid(options):
    from . import grids

    key = (options.grid, options.size, options.levels)
    if key not in _GRIDS:
        _GRIDS[key] = grids.make(options.grid, options.size, options.levels)
    return _GRIDS[key]


def kiln_backend(options):
    import kiln.gt4py

    return kiln.gt4py.backend(threads=options.threads)


# ------------------------------------------------------------------ 1. start-up


def startup_process(options) -> None:
    """In a new process: every program's first call, timed by parts; JSON lines."""
    from . import timing

    backend = kiln_backend(options)
    process_start = time.perf_counter()
    for program_id in programs(options.filter):
        program, grid, args = setup(options, program_id)
        row = {"program": program_id.split(":")[1]}
        try:
            providers = grid.connectivities()  # one object: another would be a new GT4Py variant
            record, run = timing.first_call(program, backend, args, providers)
            start = time.perf_counter()
            run(**args, offset_provider=providers)  # the kernel's run, to tell apart
            row["run"] = time.perf_counter() - start
            row |= {"gt4py": record.gt4py, "transforms": record.gt4py_transforms,
                    "passes": record.gt4py_passes, "kiln": record.backend, "total": record.total,
                    "executor": record.executor - record.gt4py_passes, "loaded": record.loaded_first_call,
                    "with_backend": record.with_backend}  # fmt: skip
        except Exception as error:  # noqa: BLE001: a row says what failed
            row["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        print(json.dumps(row), flush=True)
    print(json.dumps({"all": time.perf_counter() - process_start}), flush=True)


def startup(options, cache: str) -> dict[str, list[dict]]:
    env = dict(os.environ, KILN_CACHE_DIR=cache)
    command = [sys.executable, *(["-O"] if sys.flags.optimize else []), "-m", "kiln.gt4py.bench",
               "--startup-process", *options.passed]  # fmt: skip
    phases = {}
    for phase in ("cold", "warm"):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bench: the {phase} start-up process failed:\n{done.stderr[-2000:]}")
        phases[phase] = [json.loads(l) for l in done.stdout.splitlines() if l.startswith("{")]
    return phases


def print_startup(phases) -> None:
    print("\n## Start-up: first call of each program in a new process (ms)")
    print("cold: empty kiln cache, all programs in one new process; warm: a second new process with")
    print("that cache. GT4Py's part: its transforms to GTIR (skipped on a warm hit), its IR passes and")
    print("its Python around the backend; kiln's part: the rest, in brackets its executor (warm: the")
    print("translation lookup; cold: also the translation) and the first kernel call (compile or cache")
    print("load, and the run). run: a second call, the kernel's run with GT4Py's call path, which the")
    print("first call also holds; start-up = total - run (kiln's: kiln - run). with_backend: GT4Py's")
    print("Program.with_backend before the call (it parses the program again or fingerprints it),")
    print("outside the first call.\n")
    print("| program | cold total | cold GT4Py | cold kiln (executor, call) | warm total | warm run "
          "| warm GT4Py | warm kiln (lookup, call) | warm start-up (kiln's) | warm with_backend |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    warm = {r["program"]: r for r in phases["warm"] if "program" in r}
    for cold in (r for r in phases["cold"] if "program" in r):
        w = warm.get(cold["program"], {})
        cells = _startup_cells(cold, with_run=False) + _startup_cells(w, with_run=True)
        if "total" in w:
            startup, kiln = (w["total"] - w["run"]) * 1e3, (w["kiln"] - w["run"]) * 1e3
            cells += [f"{startup:.1f} ({kiln:.1f})", f"{w['with_backend'] * 1e3:.1f}"]
        print(f"| {cold['program']} | " + " | ".join(cells) + " |")
    for phase in ("cold", "warm"):
        rows = [r for r in phases[phase] if "total" in r]
        every = next((r["all"] for r in phases[phase] if "all" in r), None)
        if rows and every is not None:
            first = sum(r["total"] for r in rows)
            print(f"\n{phase}: {len(rows)} programs' first calls {first:.2f} s in all (largest "
                  f"{max(r['total'] for r in rows):.2f} s); the process's loop {every:.2f} s "
                  "(with_backend and inputs included)", end="")
    print()


def _startup_cells(r: dict, with_run: bool) -> list[str]:
    if "error" in r or "total" not in r:
        return [r.get("error", "-")] + [""] * (3 if with_run else 2)
    kiln = f"{r['kiln'] * 1e3:.1f} ({r['executor'] * 1e3:.1f}, {r['loaded'] * 1e3:.1f})"
    run = [f"{r['run'] * 1e3:.1f}"] if with_run else []
    return [f"{r['total'] * 1e3:.1f}", *run, f"{r['gt4py'] * 1e3:.1f}", kiln]


# ------------------------------------------------------------------ 2. call cost


def one_point(program, args: dict) -> dict:
    """args with every domain bound set to one point: [0, 1) or [start, start + 1)."""
    from . import inputs

    roles = inputs.domain_roles(program)
    out = dict(args)
    for name, (_, role) in roles.items():
        if role == "end":
            start = next((n for n, (d, r) in roles.items() if r == "start" and d == roles[name][0]), None)
            out[name] = type(args[name])(int(args[start]) + 1 if start else 1)
    return out


def per_call(call, budget: float, most: int = 200_000) -> float:
    """Median over 5 batches of the mean seconds per call, about `budget` seconds in all."""
    call()
    n, start = 1, time.perf_counter()
    while time.perf_counter() - start < budget / 20 and n < most:
        call()
        n += 1
    batch = max(1, n * 4)
    means = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(batch):
            call()
        means.append((time.perf_counter() - t) / batch)
    return statistics.median(means)


def bound_fast_path(loaded, args: dict, offset_provider):
    """kiln's bound call for the program's arguments: the backend's own `bind` where it has
    one, else the kernel its first call made, bound to the same arrays (Kernel.bind)."""
    positional = list(args.values())
    if hasattr(loaded, "bind"):
        return loaded.bind(*positional, offset_provider=offset_provider)
    kernels = getattr(loaded, "_kernels", None)
    if not kernels:
        return None
    kernel = next(iter(kernels.values()))
    arrays = [positional[p].ndarray for p in loaded._fields]
    arrays += [offset_provider[t].ndarray for t in loaded._tables]
    return kernel.bind(*arrays, *[positional[p] for p in loaded._scalars])


def call_costs(options, backends: dict) -> list[dict]:
    from . import timing

    rows = []
    for program_id in programs(options.filter):
        program, grid, args = setup(options, program_id)
        args = one_point(program, args)
        providers = grid.connectivities()
        row = {"program": program_id.split(":")[1]}
        for name, backend in backends.items():
            try:
                if name == "kiln":
                    record, run = timing.first_call(program, backend, args, providers)
                else:
                    run = program.with_backend(backend)
                    run(**args, offset_provider=providers)
                row[name] = per_call(lambda: run(**args, offset_provider=providers), options.budget)
                if name == "kiln":
                    bound = bound_fast_path(record.loaded, args, providers) if record.loaded else None
                    row["bound"] = per_call(bound, options.budget) if bound else None
            except Exception as error:  # noqa: BLE001
                row[name] = f"{type(error).__name__}: {error}".splitlines()[0][:120]
        rows.append(row)
    return rows


def print_call_costs(rows, backends) -> None:
    print("\n## Call cost: one Program.__call__ on a one-point domain (us per call)\n")
    names = [n for n in backends] + ["bound"]
    print("| program | " + " | ".join(f"{n}" if n != "bound" else "kiln bound" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for r in rows:
        cells = [(f"{r[n] * 1e6:.2f}" if isinstance(r.get(n), float) else str(r.get(n, "-"))) for n in names]
        print(f"| {r['program']} | " + " | ".join(cells) + " |")


# ------------------------------------------------------------------ 3. run time


def run_times(options, backends: dict) -> list[dict]:
    """Whole-grid seconds per call, kiln and the other backend alternating on one set of
    fields (GT4Py's layout), medians of options.rounds rounds."""
    rows = []
    for program_id in programs(options.filter):
        program, grid, args = setup(options, program_id)
        providers = grid.connectivities()
        row = {"program": program_id.split(":")[1]}
        runs = {}
        for name, backend in backends.items():
            try:
                runs[name] = program.with_backend(backend)
                runs[name](**args, offset_provider=providers)
            except Exception as error:  # noqa: BLE001
                row[name] = f"{type(error).__name__}: {error}".splitlines()[0][:120]
                runs.pop(name, None)
        samples: dict[str, list[float]] = {n: [] for n in runs}
        if options.bandwidth:
            row["bytes"] = bytes_moved(runs, args, providers)
        clock = time.thread_time if options.clock == "cpu" else time.perf_counter
        order = list(runs.items())
        for round_ in range(options.rounds):
            # Each round starts with the next backend: the one that runs first after the
            # previous round's last ran 1.3x slower on identical code (caches, the other
            # backend's Python), which a fixed order charged to one backend alone.
            for name, run in order[round_ % len(order):] + order[:round_ % len(order)]:
                if name == "embedded" and round_ >= 3:
                    continue  # NumPy's whole-grid call takes up to seconds: 3 rounds
                start = clock()
                run(**args, offset_provider=providers)
                samples[name].append(clock() - start)
        row |= {n: statistics.median(s) for n, s in samples.items()}
        rows.append(row)
    return rows


def bytes_moved(runs: dict, args: dict, providers) -> int:
    """The least a call moves to and from memory: every field argument read once, and each
    one the call writes (found by a call on copies: its values change) written once more.
    Tables and reads of a neighbour's values again are left out: a lower bound."""
    import numpy as np

    fields = {n: a for n, a in args.items() if hasattr(a, "ndarray")}
    before = {n: np.array(a.ndarray, copy=True) for n, a in fields.items()}
    next(iter(runs.values()))(**args, offset_provider=providers)
    written = [n for n, a in fields.items() if not np.array_equal(np.asarray(a.ndarray), before[n], equal_nan=True)]
    for n, a in fields.items():  # the inputs as they were, for the timed calls
        np.copyto(np.asarray(a.ndarray), before[n])
    return sum(int(np.asarray(a.ndarray).nbytes) for a in fields.values()) + sum(
        int(np.asarray(fields[n].ndarray).nbytes) for n in written
    )


def stream_copy(nbytes: int = 160 << 20, rounds: int = 9, clock=time.perf_counter) -> float:
    """Bytes per second of a STREAM-like copy (NumPy's copyto of one array into another, both
    far larger than the caches; read and write counted, as STREAM counts them): the
    bandwidth one thread reaches on this machine now, measured beside the programs."""
    import numpy as np

    a = np.random.default_rng(0).uniform(size=nbytes // 8)
    b = np.empty_like(a)
    np.copyto(b, a)
    times = []
    for _ in range(rounds):
        start = clock()
        np.copyto(b, a)
        times.append(clock() - start)
    return 2 * a.nbytes / statistics.median(times)


def print_run_times(rows, backends, grid, copy_rate: float | None = None, clock: str = "wall") -> None:
    names = list(backends)
    what = "the calling thread's CPU time" if clock == "cpu" else "wall clock"
    print(f"\n## Run time per call on {grid.describe()}, GT4Py's layout, interleaved (ms, medians, {what})\n")
    other = names[1] if len(names) > 1 else None
    rates = [f"{n} GB/s" for n in names] if copy_rate else []
    print("| program | " + " | ".join(names) + (f" | {other} / kiln" if other else "") + "".join(f" | {r}" for r in rates) + " |")
    print("|---|" + "---|" * (len(names) + (1 if other else 0) + len(rates)))
    for r in rows:
        cells = [(f"{r[n] * 1e3:.3f}" if isinstance(r.get(n), float) else str(r.get(n, "-"))) for n in names]
        if other:
            both = all(isinstance(r.get(n), float) for n in names)
            cells.append(f"{r[other] / r['kiln']:.2f}x" if both else "-")
        if copy_rate:
            cells += [f"{r['bytes'] / r[n] / 1e9:.1f}" if isinstance(r.get(n), float) and "bytes" in r else "-" for n in names]
        print(f"| {r['program']} | " + " | ".join(cells) + " |")
    if copy_rate:
        print(f"\nGB/s: the fields' bytes (each read once, each output written once: a lower bound) per call's time;"
              f" a STREAM-like copy (NumPy copyto, 160 MiB, read + write) reached {copy_rate / 1e9:.1f} GB/s in this run")


# ------------------------------------------------------------------ 4. batch


class _RecordingRuntime:
    """A backend's Runtime that records each kernel request (name, values, options) as the
    call path makes it, to ask for the same kernels again elsewhere."""

    def __init__(self, runtime, requests: list):
        self._runtime, self._requests = runtime, requests

    def kernel(self, name, values, **options):
        self._requests.append((name, dict(values), options))
        return self._runtime.kernel(name, values, **options)

    def __getattr__(self, name: str):
        return getattr(self._runtime, name)


def batch_compiles(options) -> dict[str, list[float]]:
    """Seconds to compile the kernels of every program's first call in a fresh cache, one
    request at a time (as GT4Py's first calls make them) and as one Runtime.kernels batch
    (its misses compile in parallel), alternating, two rounds each."""
    import kiln

    requests: list = []
    backend = kiln_backend(options)
    # Every step of the backend reaches its Runtime through this one holder (frozen: GT4Py
    # compares backends), so the recording proxy goes in there.
    object.__setattr__(backend.holder, "runtime", _RecordingRuntime(backend.runtime, requests))
    for program_id in programs(options.filter):
        program, grid, args = setup(options, program_id)
        program.with_backend(backend)(**args, offset_provider=grid.connectivities())
    texts = backend.kernel_sources()
    seconds: dict[str, list[float]] = {"one by one": [], "batch": []}
    for _ in range(2):
        for way in seconds:
            with tempfile.TemporaryDirectory(prefix="kiln-gt4py-batch-") as cache:
                runtime = kiln.Runtime(cache_dir=cache, threads=options.threads)
                for name, text in texts.items():
                    runtime.register_kernel(text, f"{name}.kiln")
                start = time.perf_counter()
                if way == "batch":
                    runtime.kernels([kiln.Request(n, v, **o) for n, v, o in requests])
                else:
                    for n, v, o in requests:
                        runtime.kernel(n, v, **o)
                seconds[way].append(time.perf_counter() - start)
    return {"kernels": len(requests), **seconds}


def print_batch(result: dict) -> None:
    print(f"\n## Cold compiles of the {result['kernels']} kernels of the programs' first calls (s, fresh caches)\n")
    for way in ("one by one", "batch"):
        print(f"{way}: " + ", ".join(f"{t:.2f}" for t in result[way]))
    ratio = min(result["batch"]) / min(result["one by one"])
    print(f"batch / one by one (fastest of each): {ratio:.2f}")


# ------------------------------------------------------------------ main


def parse(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kiln.gt4py.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", default="torus", choices=("torus", "lam", "simple"), help="kiln.gt4py.grids' kind")
    parser.add_argument("--size", default="128x80", help="torus quads NXxNY (default 128x80: 20480 cells)")
    parser.add_argument("--levels", type=int, default=80)
    parser.add_argument("--filter", help="regular expression on the program's name")
    parser.add_argument("--threads", type=int, default=1, help="kiln's threads per call")
    parser.add_argument("--gtfn", action="store_true", help="also gtfn_cpu (compiles 28-46 s per program)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds of the run-time part")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per call-cost measurement")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="run time as wall-clock seconds, or as the calling thread's CPU seconds (each backend "
                             "runs a call on the calling thread at --threads 1: a figure other processes' load "
                             "barely moves)")
    parser.add_argument("--bandwidth", action="store_true",
                        help="run time also as GB/s (the fields' bytes per call) beside a STREAM-like copy's")
    parser.add_argument("--skip", action="append", default=[], choices=("startup", "calls", "run"))
    parser.add_argument("--only", action="append", default=[], choices=("startup", "calls", "run", "batch"),
                        help="run only these parts (batch: cold compiles one by one against Runtime.kernels)")
    parser.add_argument("--startup-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--windows", default="{}", help=argparse.SUPPRESS)  # the parent's windows()
    options = parser.parse_args(argv)
    options.window_of = json.loads(options.windows)
    if options.only:
        options.skip = [part for part in ("startup", "calls", "run") if part not in options.only]
    options.passed = [f"--grid={options.grid}", f"--size={options.size}", f"--levels={options.levels}", f"--threads={options.threads}",
                      f"--seed={options.seed}"] + ([f"--filter={options.filter}"] if options.filter else [])  # fmt: skip
    return options


def main(argv=None) -> int:
    os.environ.setdefault("GT4PY_BUILD_JOBS", "0")
    options = parse(argv)
    # gtfn_cpu's modules link libgomp, whose idle threads (2 here, beside the calling one)
    # spin after each call: 17.8 ms of the process's CPU for a 9.8 ms call of
    # apply_nabla2_and_nabla4_to_vn, on the cores the next call (kiln's) runs on. Its gridtools
    # backend (naive) runs on the calling thread alone: the same thread count as kiln's.
    os.environ.setdefault("OMP_NUM_THREADS", str(options.threads))
    if options.startup_process:
        startup_process(options)
        return 0
    import warnings

    warnings.filterwarnings("ignore", message=".*Using Python execution.*")
    print(f"machine: {machine()}")
    optimized = "-O " if sys.flags.optimize else ""
    print(f"software: {versions()}; kiln threads {options.threads}; command: python {optimized}-m kiln.gt4py.bench "
          + " ".join(sys.argv[1:] if argv is None else argv))  # fmt: skip
    if not sys.flags.optimize:
        print("note: without python -O, GT4Py type-checks every call's arguments in Python (hundreds of us)")
    options.window_of = windows(options)
    options.passed.append(f"--windows={json.dumps(options.window_of)}")
    if options.window_of:
        print("windows (levels [start, levels - margin)) where a program is not defined from level 0: "
              + ", ".join(f"{p.split(':')[1]} {inputs_window(i)}" for p, i in options.window_of.items()))
    with tempfile.TemporaryDirectory(prefix="kiln-gt4py-bench-") as cache:
        os.environ["KILN_CACHE_DIR"] = cache
        if "startup" not in options.skip:
            print_startup(startup(options, cache))
        backends = {"kiln": kiln_backend(options), "embedded": None}
        if options.gtfn:
            from gt4py.next.program_processors.runners import gtfn

            backends["gtfn_cpu"] = gtfn.run_gtfn
        if "calls" not in options.skip:
            print_call_costs(call_costs(options, backends), backends)
        if "run" not in options.skip:
            timed = {"kiln": backends["kiln"]}
            timed |= {"gtfn_cpu": backends["gtfn_cpu"]} if options.gtfn else {"embedded": None}
            rows = run_times(options, timed)
            clock = time.thread_time if options.clock == "cpu" else time.perf_counter
            copy_rate = stream_copy(clock=clock) if options.bandwidth else None
            print_run_times(rows, timed, _grid(options), copy_rate, options.clock)
        if "batch" in options.only:
            print_batch(batch_compiles(options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
