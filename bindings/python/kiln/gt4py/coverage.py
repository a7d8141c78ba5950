"""Which of icon4py's programs run on kiln and agree with GT4Py: one table.

    python -m kiln.gt4py.coverage [--grid torus|lam|simple] [--size 8x8] [--levels 10]
        [--module diffusion|dycore|interpolation|all] [--filter RE] [--threads N]

Every GT4Py program of icon4py's diffusion, dycore and interpolation stencil
modules runs on a generated grid (``kiln.gt4py.grids``) with random arguments
(``kiln.gt4py.inputs``, one seed) through kiln's backend and through GT4Py's
``embedded`` execution, the reference (GT4Py's ``gtfn_cpu`` where embedded
cannot run a program: its ``concat_where`` takes one-dimensional domains only;
GT4Py's ``roundtrip`` would too, but takes minutes a program there, gtfn_cpu's
compile 30-50 s).
Each program runs in a worker process, so that a crash costs one row; the cold
first call is the first with an empty kiln cache, the warm first call is the
first of that program in a new worker process once the cache holds it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any

from . import timing

MODULES = {
    "diffusion": "icon4py.model.atmosphere.diffusion.stencils",
    "dycore": "icon4py.model.atmosphere.dycore.stencils",
    "interpolation": "icon4py.model.common.interpolation.stencils",
}
RTOL = 1e-12


@dataclasses.dataclass
class Row:
    """One program's result; times in seconds (None: not measured)."""

    program: str  # module:attribute
    status: str = "error"  # match, mismatch, refused, error, crash, no-reference
    detail: str = ""  # refused construct, error message
    max_rel_diff: float | None = None
    reference: str = ""  # embedded or gtfn_cpu
    window: str = ""
    cold_first: float | None = None
    cold_kiln: float | None = None  # the backend's part of it (kiln.gt4py.timing)
    warm_first: float | None = None
    warm_kiln: float | None = None
    kiln_per_call: float | None = None
    reference_per_call: float | None = None

    @property
    def name(self) -> str:
        return self.program.split(":")[1]


def discover(module: str, pattern: str | None) -> list[str]:
    """'module:attribute' of every Program defined in the chosen icon4py modules."""
    import importlib
    import pkgutil

    from gt4py.next.ffront import decorator

    chosen = MODULES.values() if module == "all" else [MODULES[module]]
    found = []
    for package_name in chosen:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            name = f"{package_name}.{info.name}"
            for attribute, value in vars(importlib.import_module(name)).items():
                defined_here = getattr(value, "definition_stage", None) is not None and (
                    value.definition_stage.definition.__module__ == name
                )
                if isinstance(value, decorator.Program) and defined_here:
                    found.append(f"{name}:{attribute}")
    if pattern:
        found = [p for p in found if re.search(pattern, p.split(":")[1])]
    return found


def load(program_id: str):
    import importlib

    module, attribute = program_id.split(":")
    return getattr(importlib.import_module(module), attribute)


# ---------------------------------------------------------------- worker side


def make_backend(name: str):
    """The backend under test: kiln's (the point), or GT4Py's for a self-check."""
    if name == "kiln":
        import kiln.gt4py

        return kiln.gt4py.backend()
    if name == "embedded":
        return None
    if name == "gtfn_cpu":
        from gt4py.next.program_processors.runners import gtfn

        return gtfn.run_gtfn  # gtfn_cpu
    raise ValueError(f"unknown backend {name!r}: kiln, embedded or gtfn_cpu")


def max_relative_difference(got: dict, want: dict) -> float:
    """Largest |got - want| / max(|got|, |want|) over every field argument (0 where
    both are 0 or both NaN; infinite where only one is NaN)."""
    import numpy as np

    worst = 0.0
    for name, value in want.items():
        pairs = zip(value, got[name]) if isinstance(value, tuple) else [(value, got[name])]
        for w, g in pairs:
            if not hasattr(w, "asnumpy"):
                continue
            a, b = np.asarray(g.asnumpy(), float), np.asarray(w.asnumpy(), float)
            both_nan = np.isnan(a) & np.isnan(b)
            scale = np.maximum(np.abs(a), np.abs(b))
            with np.errstate(invalid="ignore", divide="ignore"):
                rel = np.where(scale > 0, np.abs(a - b) / scale, 0.0)
            rel = np.where(both_nan, 0.0, np.where(np.isnan(rel), np.inf, rel))
            if rel.size:
                worst = max(worst, float(rel.max()))
    return worst


def per_call(call, budget: float = 0.2, most: int = 2000) -> float:
    """Mean seconds per call over at least 3 calls and about `budget` seconds."""
    calls, start = 0, time.perf_counter()
    while calls < 3 or (time.perf_counter() - start < budget and calls < most):
        call()
        calls += 1
    return (time.perf_counter() - start) / calls


class Worker:
    def __init__(self, options):
        from . import grids

        self.options = options
        self.grid = grids.make(options.grid, options.size, options.levels)
        self.providers = self.grid.connectivities()
        # embedded cannot shift through a table with missing neighbours: it gets icon4py's
        # replaced ones, the same where the domains are (two rings in from the boundary).
        self.embedded_providers = self.grid.connectivities(replace_skip_values=True)
        self.backend = make_backend(options.backend)

    def inputs(self, program, window):
        from . import inputs

        return inputs.program_inputs(program, self.grid, self.options.seed, window)

    def reference(self, program, row: Row):
        """Runs the reference on the first vertical window it is defined on (inputs.first_window):
        the window and the reference's outputs, or None with row.detail set. The reference is
        embedded, or gtfn_cpu where embedded cannot run the program; a window embedded finds
        out of bounds is never handed to gtfn_cpu, which does not check its reads."""
        from gt4py.next import errors
        from gt4py.next.embedded import exceptions as embedded_errors
        from gt4py.next.program_processors.runners import gtfn

        from . import inputs

        def attempt(window):
            for name, backend in (("embedded", None), ("gtfn_cpu", gtfn.run_gtfn)):
                args = self.inputs(program, window)
                run = program.with_backend(backend)
                providers = self.embedded_providers if backend is None else self.providers
                try:
                    run(**args, offset_provider=providers)
                except embedded_errors.IndexOutOfBounds as error:
                    row.detail = f"{window}: {error}"
                    raise  # outside the fields: the next window
                except (NotImplementedError, ValueError, errors.DSLError) as error:
                    row.detail = f"{name}: {type(error).__name__}: {error}"
                    continue  # embedded cannot run it: gtfn_cpu
                row.reference, row.window = name, str(window)
                if name == "embedded":  # timed on other fields: args are the outputs
                    again = self.inputs(program, window)
                    row.reference_per_call = per_call(
                        lambda: run(**again, offset_provider=self.embedded_providers)
                    )
                return args
            return None  # neither runs it: not a matter of the window

        first = inputs.first_window(attempt)
        if first is None or first[2] is None:
            return None
        return first[1], first[2]

    def cold(self, program_id: str) -> Row:
        row = Row(program_id)
        program = load(program_id)
        found = self.reference(program, row)
        if found is None:
            row.status = "no-reference"
            return row
        window, want = found
        got = self.inputs(program, window)
        try:
            record, run = timing.first_call(program, self.backend, got, self.providers)
        except Exception as error:  # noqa: BLE001: every failure is a row of the table
            row.status, row.detail = refusal_or_error(error)
            return row
        row.cold_first, row.cold_kiln = record.total, record.backend
        # Compared after one call: a program may update a field in place (vn += ...).
        row.max_rel_diff = max_relative_difference(got, want)
        row.status = "match" if row.max_rel_diff <= self.options.rtol else "mismatch"
        row.detail = ""
        row.kiln_per_call = per_call(lambda: run(**got, offset_provider=self.providers))
        return row

    def warm(self, program_id: str) -> Row:
        row = Row(program_id)
        from . import inputs

        program = load(program_id)
        window = inputs.WINDOWS[self.options.window_of.get(program_id, 0)]
        args = self.inputs(program, window)
        record, _ = timing.first_call(program, self.backend, args, self.providers)
        row.warm_first, row.warm_kiln = record.total, record.backend
        row.status = "match"
        return row


def refusal_or_error(error: BaseException) -> tuple[str, str]:
    """('refused', construct) for kiln's UnsupportedConstruct, also where GT4Py raised
    another error from it; else ('error', the first line of the message)."""
    cause: BaseException | None = error
    while cause is not None:
        if type(cause).__name__ == "UnsupportedConstruct" and hasattr(cause, "construct"):
            return "refused", str(cause.construct)
        cause = cause.__cause__ or cause.__context__
    text = f"{type(error).__name__}: {error}".strip().splitlines()
    return "error", (text[0] if text else type(error).__name__)[:300]


def worker_main(options) -> None:
    """Reads program ids on stdin, writes one JSON row per line on stdout."""
    import warnings

    warnings.filterwarnings("ignore", message=".*Using Python execution.*")
    out = sys.stdout
    sys.stdout = sys.stderr  # programs' and libraries' prints must not break the protocol
    worker = Worker(options)
    for line in sys.stdin:
        program_id = line.strip()
        try:
            row = worker.warm(program_id) if options.phase == "warm" else worker.cold(program_id)
        except Exception as error:  # noqa: BLE001: a row says what failed
            row = Row(program_id, "error", f"{type(error).__name__}: {error}".splitlines()[0][:300])
            traceback.print_exc()
        out.write(json.dumps(dataclasses.asdict(row)) + "\n")
        out.flush()


# ---------------------------------------------------------------- parent side


def run_phase(phase: str, programs: list[str], options, env: dict, on_row=None) -> dict[str, Row]:
    """Runs programs in options.threads worker processes; a worker that dies costs the
    program it ran (a 'crash' row with its last words) and is replaced."""
    todo: queue.Queue[str] = queue.Queue()
    for p in programs:
        todo.put(p)
    rows: dict[str, Row] = {}
    lock = threading.Lock()
    command = [sys.executable, *(["-O"] if sys.flags.optimize else []), "-m", "kiln.gt4py.coverage",
               "--worker", "--phase", phase, *options.worker_arguments]  # fmt: skip

    def slot():
        process = None
        while True:
            try:
                program_id = todo.get_nowait()
            except queue.Empty:
                break
            if process is None:
                stderr = tempfile.TemporaryFile(mode="w+")
                process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=stderr, text=True, env=env)  # fmt: skip
            process.stdin.write(program_id + "\n")
            process.stdin.flush()
            answered, _, _ = select.select([process.stdout], [], [], options.timeout)
            line = process.stdout.readline() if answered else ""
            if line:
                row = Row(**json.loads(line))
            else:
                if not answered:  # a program that hangs costs its row, not the table
                    process.kill()
                process.wait()
                stderr.seek(0)
                last = [l for l in stderr.read().splitlines() if l.strip()][-1:] or ["no output"]
                row = Row(program_id, "crash", f"exit {process.returncode}: {last[0][:200]}")
                if not answered:
                    row = Row(program_id, "timeout", f"no result in {options.timeout:g} s")
                process = None
            with lock:
                rows[program_id] = row
                if on_row is not None:
                    on_row(rows)
                if options.progress:
                    print(f"  {phase} {len(rows)}/{len(programs)} {row.name}: {row.status}",
                          file=sys.stderr, flush=True)  # fmt: skip
        if process is not None:
            process.stdin.close()
            process.wait()

    threads = [threading.Thread(target=slot) for _ in range(max(1, options.threads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return rows


def run(options) -> list[Row]:
    programs = discover(options.module, options.filter)
    if not programs:
        raise SystemExit(f"coverage: no program matches --module {options.module} --filter {options.filter}")
    env = dict(os.environ)
    # GT4Py compiles (roundtrip, gtfn_cpu) in the calling thread, not in a pool of
    # processes that each import GT4Py again.
    env.setdefault("GT4PY_BUILD_JOBS", "0")
    with tempfile.TemporaryDirectory(prefix="kiln-gt4py-coverage-") as cache:
        env.setdefault("KILN_CACHE_DIR", options.cache_dir or cache)
        if options.cache_dir is None:
            env["KILN_CACHE_DIR"] = cache  # cold means an empty cache
        done = _resumed(options.resume, programs)
        rows = dict(done)
        rows |= run_phase("cold", [p for p in programs if p not in done], options, env,
                          on_row=lambda new: _save(options.json, rows | new, programs))  # fmt: skip
        ran = [p for p in programs if rows[p].status in ("match", "mismatch") and p not in done]
        windows = {p: _window_index(rows[p].window) for p in ran}
        options.worker_arguments += ["--windows", json.dumps(windows)]
        for p, warm in run_phase("warm", ran, options, env).items():
            if warm.status == "match":
                rows[p].warm_first, rows[p].warm_kiln = warm.warm_first, warm.warm_kiln
    _save(options.json, rows, programs)
    return [rows[p] for p in programs]


def _save(path: str | None, rows: dict[str, Row], programs: list[str]) -> None:
    """The rows so far, in the table's order (rewritten at each row: a long run keeps them)."""
    if path:
        with open(path, "w") as f:
            json.dump([dataclasses.asdict(rows[p]) for p in programs if p in rows], f, indent=1)


def _resumed(path: str | None, programs: list[str]) -> dict[str, Row]:
    """Rows of an earlier run (--resume FILE, its --json), for the programs still chosen."""
    if not path:
        return {}
    with open(path) as f:
        rows = [Row(**r) for r in json.load(f)]
    return {r.program: r for r in rows if r.program in programs}


def _window_index(text: str) -> int:
    from . import inputs

    labels = [str(w) for w in inputs.WINDOWS]
    return labels.index(text) if text in labels else 0


def _ms(seconds: float | None, part: float | None = None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.4g}" + ("" if part is None else f" ({part * 1e3:.3g})")


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.4g}"


def table(rows: list[Row], options) -> str:
    """The table (Markdown) and its summary line."""
    lines = [
        f"backend {options.backend} against the reference, grid {options.describe}, "
        f"seed {options.seed}, rtol {options.rtol:g}; first calls: all (kiln's part, the rest is GT4Py's)",
        "",
        "| program | module | result | max rel diff | reference | levels | cold first (ms) "
        "| warm first (ms) | per call (us) | reference per call (us) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        module = next((k for k, v in MODULES.items() if r.program.startswith(v)), "")
        result = r.status if not r.detail else f"{r.status}: {r.detail}"
        diff = "-" if r.max_rel_diff is None else f"{r.max_rel_diff:.2g}"
        lines.append(
            f"| {r.name} | {module} | {result.replace('|', '/')} | {diff} | {r.reference or '-'} "
            f"| {r.window or '-'} | {_ms(r.cold_first, r.cold_kiln)} | {_ms(r.warm_first, r.warm_kiln)} "
            f"| {_us(r.kiln_per_call)} | {_us(r.reference_per_call)} |"
        )
    lines += ["", summary(rows, options.rtol)]
    return "\n".join(lines)


def summary(rows: list[Row], rtol: float) -> str:
    count = {s: sum(r.status == s for r in rows) for s in
             ("match", "mismatch", "refused", "error", "crash", "timeout", "no-reference")}  # fmt: skip
    share = 100.0 * count["match"] / len(rows) if rows else 0.0
    return (
        f"summary: {len(rows)} programs, {count['match'] + count['mismatch']} run, "
        f"{count['match']} match within rtol {rtol:g} ({share:.1f}%), {count['mismatch']} mismatch, "
        f"{count['refused']} refused, {count['error']} errors, {count['crash']} crashes, "
        f"{count['timeout']} timeouts, {count['no-reference']} without reference"
    )


def parse(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(prog="python -m kiln.gt4py.coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", choices=("torus", "lam", "simple"), default="torus")
    parser.add_argument("--size", default="8x8", help="quads NXxNY of torus and lam (default 8x8)")
    parser.add_argument("--levels", type=int, default=10)
    parser.add_argument("--module", choices=(*MODULES, "all"), default="all")
    parser.add_argument("--filter", help="regular expression on the program's name")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rtol", type=float, default=RTOL)
    parser.add_argument("--backend", default="kiln", help="kiln (default); embedded or gtfn_cpu to check the tool")
    parser.add_argument("--cache-dir", help="kiln cache to use (default: a new empty one, removed after)")
    parser.add_argument("--json", help="write the rows to this file (after each program)")
    parser.add_argument("--resume", help="take the rows of an earlier --json file, run the rest")
    parser.add_argument("--timeout", type=float, default=900, help="seconds a program may take (default 900)")
    parser.add_argument("--show", metavar="FILE", help="print the table of a --json file and stop")
    parser.add_argument("--progress", action="store_true", help="a line per program on stderr")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--phase", default="cold", help=argparse.SUPPRESS)
    parser.add_argument("--windows", default="{}", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    options.window_of = json.loads(options.windows)
    options.worker_arguments = [
        f"--grid={options.grid}", f"--size={options.size}", f"--levels={options.levels}",
        f"--seed={options.seed}", f"--rtol={options.rtol}", f"--backend={options.backend}",
    ]  # fmt: skip
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    if options.worker:
        worker_main(options)
        return 0
    from . import grids

    options.describe = grids.make(options.grid, options.size, options.levels).describe()
    if options.show:
        with open(options.show) as f:
            print(table([Row(**r) for r in json.load(f)], options))
        return 0
    start = time.perf_counter()
    rows = run(options)
    print(table(rows, options))
    print(f"took {time.perf_counter() - start:.0f} s with {options.threads} worker processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
