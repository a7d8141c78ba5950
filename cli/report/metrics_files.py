"""kiln's metrics JSON (KILN_METRICS_FILE, schema 2: docs/metrics.schema.json), read
into runs (runs.py): how long each ran, whether it started cold or warm, and each kernel's
series (specialised, generic, ahead of time, thread count)."""

import re
from pathlib import Path

from runs import Kernel, MetricsError, Run

SCHEMA_VERSION = 2

# kiln's phases in the order a cold resolution goes through them
# (kiln/metrics.hpp); first_call and run are running, the rest is init.
INIT_PHASES = ["specialise", "key", "memory_lookup", "disk_lookup", "lock", "lock_wait",
               "slot_wait", "compile", "store", "load"]
RUN_PHASES = ["first_call", "run"]

# "name (generic)", "name (ahead of time)", "name [cuda sm_90]": the build
# that ran; a bare name is the specialised one.
_VARIANT = re.compile(r"^(?P<base>.*?)(?: \((?P<paren>[^)]*)\)| \[(?P<bracket>[^\]]*)\])?$")


# The steps a file's name says ("demo-steps-100-cold.json", as kiln demo
# --steps-sweep names them): a kernel's calls are steps only when it runs once a step.
_STEPS = re.compile(r"(?:^|-)steps-(\d+)(?:-|$)")


def split_name(name):
    match = _VARIANT.match(name)
    variant = match.group("paren") or match.group("bracket") or "specialised"
    return match.group("base"), variant


def _kernel(name, data):
    base, variant = split_name(name)
    calls = sum(data["phases"].get(p, {}).get("count", 0) for p in RUN_PHASES)
    return Kernel(name=name, base=base, variant=variant, threads=data.get("threads", 1),
                  init_ms=data["init_ms"], run_ms=data["run_ms"], calls=calls, phases=data["phases"])


def load_metrics(path, data):
    """A Run from the metrics JSON `data`, read from `path`."""
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise MetricsError(f"{path}: schema_version {version!r}, where kiln report reads {SCHEMA_VERSION} "
                           "(write it again with this kiln: KILN_METRICS_FILE)")
    try:
        kernels = [_kernel(name, k) for name, k in data["kernels"].items()]
        total, process = data["total"], data["process"]
        steps = _STEPS.search(Path(path).stem)
        return Run(path=path, kernels=kernels, init_ms=total["init_ms"], run_ms=total["run_ms"],
                   wall_ms=process["wall_ms"], compiles=total["compiles"], disk_hits=total["disk_hits"],
                   steps=int(steps.group(1)) if steps else max((k.calls for k in kernels), default=0),
                   steps_known=steps is not None)
    except (KeyError, TypeError) as error:
        raise MetricsError(f"{path}: not kiln metrics: {error!r} missing or malformed") from error
