"""kiln_stencil_bench's results, as Google Benchmark writes them
(`kiln_stencil_bench --benchmark_out=FILE --benchmark_out_format=json`), read
into a Run for figure 3: each kernel's time a call built specialised, on ICON's
choice, generic, ahead of time by g++ (the build kiln is measured against), and
specialised on 2 threads. The demo's metrics carry no ahead-of-time build; the
benchmark times it in the same run as kiln's builds."""

from runs import Kernel, MetricsError, Run

# The benchmark's names, stencil/<kernel>/<way>, and the series each way is.
_WAYS = {"specialised": ("specialised", 1), "icon_choice": ("ICON's choice", 1), "generic": ("generic", 1),
         "ahead_of_time": ("ahead of time", 1), "threads2": ("specialised", 2)}
_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def is_google_benchmark(data):
    """kiln_stencil_bench's --benchmark_out file: Google Benchmark's JSON."""
    return isinstance(data, dict) and "benchmarks" in data and "context" in data


def _rows(path, data):
    """The medians when the run repeated (the benchmark's default), else the runs themselves."""
    rows = data["benchmarks"]
    medians = [r for r in rows if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median"]
    chosen = medians or [r for r in rows if r.get("run_type", "iteration") == "iteration"]
    if not chosen:
        raise MetricsError(f"{path}: Google Benchmark results without runs or medians")
    return chosen


def _kernel(row):
    name = row.get("run_name") or row["name"]
    parts = name.split("/")
    if len(parts) != 3 or parts[0] != "stencil" or parts[2] not in _WAYS:
        return None
    variant, threads = _WAYS[parts[2]]
    ms = row["real_time"] * _TO_MS[row.get("time_unit", "ns")]
    label = parts[1] if variant == "specialised" else f"{parts[1]} ({variant})"
    return Kernel(name=label, base=parts[1], variant=variant, threads=threads, init_ms=0.0, run_ms=ms,
                  calls=int(row.get("iterations", 1)), phases={"run": {"count": 1, "avg_ms": ms}})


def load_stencil_bench(path, data):
    try:
        kernels = [k for k in map(_kernel, _rows(path, data)) if k]
    except (KeyError, TypeError, ValueError) as error:
        raise MetricsError(f"{path}: not kiln_stencil_bench results: {error!r} missing or malformed") from error
    if not kernels:
        raise MetricsError(f"{path}: Google Benchmark results without kiln_stencil_bench's stencil/ rows")
    return Run(path=path, kernels=kernels, init_ms=0.0, run_ms=sum(k.run_ms for k in kernels), wall_ms=0.0,
               compiles=0, disk_hits=0, steps=max(k.calls for k in kernels), source="stencil_bench")
