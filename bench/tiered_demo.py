#!/usr/bin/env python3
"""Tiered start on the demo: `kiln demo --mode specialised` plain and tiered, interleaved, each on a fresh
cache (docs/performance.md, "Tiered start: the demo cold and tiered").

    python3 bench/tiered_demo.py [--rounds N] [--kiln build/cli/kiln] [--cache-path DIR] [-- demo options]

Each round runs, one after the other: plain; tiered with the stand-ins at -O3 (KILN_TIERED_OPT_LEVEL=O3, the
build before the tiered level); tiered at the default level (O1). With --cache-path, every run also reads that
folder as a read-only tier (KILN_CACHE_PATH: generic builds written by `kiln warm`). One line per run: the load
average before it, the first step after the first kernel request (from the metrics JSON's timeline: when the
last stage's first call ended), the time loop, and the compiles with their summed wall time. Build slots are
kept in a folder of the script's own (XDG_RUNTIME_DIR), so other users' compiles do not hold them.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile

LAST_STAGE = "update_theta_and_exner"
RUNS = {"plain": {}, "tiered, O3 stand-ins": {"KILN_TIERED": "1", "KILN_TIERED_OPT_LEVEL": "O3"},
        "tiered (O1 stand-ins)": {"KILN_TIERED": "1"}}


def first_step_s(metrics):
    """When the last stage's first call ended (over its builds), after the first kernel request."""
    ends = []
    for name, kernel in metrics["kernels"].items():
        first_call = kernel["phases"].get("first_call")
        timeline = [t for t in metrics["timeline"] if t["kernel"] == name]
        if name.split(" (")[0] == LAST_STAGE and first_call and timeline:
            ends.append(timeline[0]["first_call_ms"] + first_call["min_ms"])
    return (min(ends) - metrics["process"]["first_request_ms"]) / 1000


def compiles(metrics, generic):
    rows = [k for n, k in metrics["kernels"].items() if n.endswith("(generic)") == generic]
    return sum(k.get("compiles", 0) for k in rows), sum(
        k["phases"]["compile"]["total_ms"] for k in rows if "compile" in k["phases"]) / 1000


def run(label, env, kiln, demo_args, slots):
    with tempfile.TemporaryDirectory(prefix="kiln-tiered-") as cache:
        metrics_file = os.path.join(cache, "metrics.json")
        full_env = dict(os.environ, KILN_CACHE_DIR=os.path.join(cache, "c"), KILN_METRICS_FILE=metrics_file,
                        XDG_RUNTIME_DIR=slots, **env)
        load = open("/proc/loadavg").read().split()[0]
        out = subprocess.run([kiln, "demo", "--mode", "specialised", *demo_args], env=full_env, capture_output=True,
                             text=True, check=True).stdout
        metrics = json.load(open(metrics_file))
    loop = float(re.search(r"time loop ([\d.]+) ms", out).group(1)) / 1000
    generic, generic_s = compiles(metrics, True)
    specialised, specialised_s = compiles(metrics, False)
    print(f"{label:24} load {load:>5}  first step {first_step_s(metrics):5.2f} s  time loop {loop:5.2f} s  "
          f"compiles: {generic} generic ({generic_s:.2f} s), {specialised} specialised ({specialised_s:.2f} s)",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kiln", default=os.path.join(os.path.dirname(__file__), "..", "build", "cli", "kiln"))
    parser.add_argument("--cache-path", help="a read-only tier every run reads (KILN_CACHE_PATH)")
    parser.add_argument("demo_args", nargs="*", help="more options for kiln demo (after --)")
    args = parser.parse_args()
    slots = tempfile.mkdtemp(prefix="kiln-tiered-slots-")
    try:
        for _ in range(args.rounds):
            for label, env in RUNS.items():
                env = dict(env, **({"KILN_CACHE_PATH": args.cache_path} if args.cache_path else {}))
                run(label, env, args.kiln, args.demo_args, slots)
    finally:
        shutil.rmtree(slots)


if __name__ == "__main__":
    main()
