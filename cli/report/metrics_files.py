"""Reading kiln's metrics JSON (KILN_METRICS_FILE, schema 2: docs/metrics.schema.json)
into runs: how long each ran, whether it started cold or warm, and each kernel's
series (specialised, generic, ahead of time, thread count)."""

import json
import re
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 2

# kiln's phases in the order a cold resolution goes through them
# (kiln/metrics.hpp); first_call and run are running, the rest is init.
INIT_PHASES = ["specialise", "key", "memory_lookup", "disk_lookup", "lock", "lock_wait",
               "slot_wait", "compile", "store", "load"]
RUN_PHASES = ["first_call", "run"]

# "name (generic)", "name (ahead of time)", "name [cuda sm_90]": the build
# that ran; a bare name is the specialised one.
_VARIANT = re.compile(r"^(?P<base>.*?)(?: \((?P<paren>[^)]*)\)| \[(?P<bracket>[^\]]*)\])?$")


class MetricsError(Exception):
    """A file that is not kiln metrics of the schema this report reads."""


@dataclass
class Kernel:
    name: str      # as the metrics name it
    base: str      # the kernel's own name
    variant: str   # specialised, generic, ahead of time, or a GPU target
    threads: int
    init_ms: float
    run_ms: float
    calls: int
    phases: dict   # phase name: its stats

    def phase_ms(self, phase):
        return self.phases.get(phase, {}).get("total_ms", 0.0)

    def ms_per_call(self):
        """A call's time: the mean of the calls after the first (which may
        fault pages in), else the first call alone."""
        later = self.phases.get("run")
        if later and later["count"]:
            return later["avg_ms"]
        first = self.phases.get("first_call")
        return first["avg_ms"] if first and first["count"] else None


@dataclass
class Run:
    path: Path
    kernels: list
    init_ms: float
    run_ms: float
    wall_ms: float
    compiles: int
    disk_hits: int
    steps: int  # the most calls of any kernel: the demo's steps
    source: str = "metrics"  # or "stencil_bench": run times only (stencil_bench_files.py)

    @property
    def temperature(self):
        """cold: every kernel compiled; warm: none; partly warm: some."""
        if self.compiles == 0:
            return "warm"
        return "cold" if self.disk_hits == 0 else "partly warm"

    @property
    def init_share(self):
        return self.init_ms / self.wall_ms if self.wall_ms > 0 else 0.0

    @property
    def run_share(self):
        return self.run_ms / self.wall_ms if self.wall_ms > 0 else 0.0


def split_name(name):
    match = _VARIANT.match(name)
    variant = match.group("paren") or match.group("bracket") or "specialised"
    return match.group("base"), variant


def _kernel(name, data):
    base, variant = split_name(name)
    calls = sum(data["phases"].get(p, {}).get("count", 0) for p in RUN_PHASES)
    return Kernel(name=name, base=base, variant=variant, threads=data.get("threads", 1),
                  init_ms=data["init_ms"], run_ms=data["run_ms"], calls=calls, phases=data["phases"])


def is_google_benchmark(data):
    """kiln_stencil_bench's --benchmark_out file: Google Benchmark's JSON."""
    return isinstance(data, dict) and "benchmarks" in data and "context" in data


def load_run(path):
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise MetricsError(f"{path}: cannot read it as JSON ({error})") from error
    if is_google_benchmark(data):
        from stencil_bench_files import load_stencil_bench  # it builds on this module's classes
        return load_stencil_bench(path, data)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise MetricsError(f"{path}: schema_version {version!r}, where kiln report reads {SCHEMA_VERSION} "
                           "(write it again with this kiln: KILN_METRICS_FILE)")
    try:
        kernels = [_kernel(name, k) for name, k in data["kernels"].items()]
        total, process = data["total"], data["process"]
        return Run(path=path, kernels=kernels, init_ms=total["init_ms"], run_ms=total["run_ms"],
                   wall_ms=process["wall_ms"], compiles=total["compiles"], disk_hits=total["disk_hits"],
                   steps=max((k.calls for k in kernels), default=0))
    except (KeyError, TypeError) as error:
        raise MetricsError(f"{path}: not kiln metrics: {error!r} missing or malformed") from error


def load_runs(paths):
    return [load_run(p) for p in paths]
