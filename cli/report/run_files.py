"""The files `kiln report` reads, each into a Run (runs.py): kiln's metrics
JSON (metrics_files.py), or kiln_stencil_bench's Google Benchmark JSON
(stencil_bench_files.py), told apart by their content."""

import json
from pathlib import Path

from metrics_files import load_metrics
from runs import MetricsError
from stencil_bench_files import is_google_benchmark, load_stencil_bench


def load_run(path):
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise MetricsError(f"{path}: cannot read it as JSON ({error})") from error
    if is_google_benchmark(data):
        return load_stencil_bench(path, data)
    return load_metrics(path, data)


def load_runs(paths):
    return [load_run(p) for p in paths]
