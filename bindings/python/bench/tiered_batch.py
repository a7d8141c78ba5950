"""Tiered start for a batch (docs/manual/tiered-start.md): how long Runtime.kernels() takes to return,
and until Runtime.wait_for_specialised() returns, for 8 specialisations of update_theta_and_exner
(20480 cells x 80 levels, rd_o_cvd 0.20 ... 0.27), not tiered and tiered, each on a fresh cache that
holds only the kernel's generic build (a run on another specialisation before) or nothing.

Prints a Markdown table, the median of 3 runs each. Nothing is asserted: the figures are for the manual.

    PYTHONPATH=build/bindings/python python bindings/python/bench/tiered_batch.py
"""

import os
import shutil
import statistics
import tempfile
import time

import kiln

NAME = "update_theta_and_exner"
SPEC = dict(horizontal_start=0, horizontal_end=20480, vertical_start=0, vertical_end=80)
REQUESTS = [(NAME, dict(SPEC, rd_o_cvd=0.2 + 0.01 * i)) for i in range(8)]
RUNS = 3


def timed(cache, tiered):
    """Seconds until kernels() returned, and until every specialised build was in."""
    rt = kiln.Runtime(cache_dir=cache, tiered=tiered, log_level="off")
    start = time.perf_counter()
    rt.kernels(REQUESTS)
    returned = time.perf_counter() - start
    rt.wait_for_specialised()
    return returned, time.perf_counter() - start


def main():
    base = tempfile.mkdtemp()
    generic_only = os.path.join(base, "generic-only")
    kiln.Runtime(cache_dir=generic_only, log_level="off").kernel(NAME, dict(SPEC, rd_o_cvd=0.9), mode="generic")
    print("| cache | batch | kernels() returned | every specialised build in |")
    print("|---|---|---|---|")
    for label, seed in (("the generic build", generic_only), ("empty", None)):
        for tiered in (False, True):
            runs = []
            for run in range(RUNS):
                cache = os.path.join(base, f"{run}-{tiered}-{seed is None}")
                if seed:
                    shutil.copytree(seed, cache)
                runs.append(timed(cache, tiered))
            returned = statistics.median(r[0] for r in runs)
            done = statistics.median(r[1] for r in runs)
            print(f"| {label} | {'tiered' if tiered else 'not tiered'} | {returned:.3f} s | {done:.2f} s |")
    print("load average:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    shutil.rmtree(base)


if __name__ == "__main__":
    main()
