"""What a report draws, whichever file it came from: runs, each with its
kernels' series. metrics_files.py (kiln's metrics JSON) and
stencil_bench_files.py (kiln_stencil_bench's results) each read their
format into these; run_files.py picks the reader."""

import re
from dataclasses import dataclass
from pathlib import Path


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
    steps: int  # the run's steps: its file name's "steps-N", else the most calls of any kernel
    source: str = "metrics"  # or "stencil_bench": run times only (stencil_bench_files.py)
    steps_known: bool = False  # the steps came from the file name, not from a call count

    @property
    def program(self):
        """What ran, to keep apart: the kernels' own names (a run of another
        program is never a point of this one's sweep)."""
        return tuple(sorted({k.base for k in self.kernels}))

    @property
    def label(self):
        """The file's name without what a sweep adds: 'demo' of 'demo-steps-10-cold.json'."""
        return re.sub(r"-steps-\d+(-(cold|warm))?$", "", self.path.stem)

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
