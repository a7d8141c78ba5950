"""kiln's two ways of reading a neighbour per lane, side by side with gtfn_cpu in one process.

    PYTHONPATH=build/bindings/python .venv/bin/python -O bench/gt4py_gather_bench.py \
        [--filter RE] [--rounds 5] [--clock cpu] [--no-gtfn]

Two kiln backends, each with its own Runtime and cache: one made with KILN_GATHER=off (a
scalar load and an insert per lane), one with KILN_GATHER=on (AVX2/AVX-512 gathers), the
variable read when each Runtime is made. kiln.gt4py.bench's run_times() then times them
and gtfn_cpu interleaved, round by round, on one set of fields (GT4Py's layout). Before
timing, each program's outputs from the two builds are compared bit for bit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile


def backend_with(gather: str, options, cache: str):
    import kiln.gt4py

    os.environ["KILN_GATHER"] = gather
    try:
        return kiln.gt4py.backend(threads=options.threads, cache_dir=cache)
    finally:
        del os.environ["KILN_GATHER"]


def gather_instructions(cache: str) -> str:
    """AVX2/AVX-512 gather instructions in the shared objects of a kiln cache (objdump)."""
    if shutil.which("objdump") is None:
        return "objdump not found"
    count = 0
    for folder, _, files in os.walk(cache):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            text = subprocess.run(["objdump", "-d", path], capture_output=True, text=True).stdout
            for line in text.splitlines():
                mnemonic = line.split("\t")[-1].split(" ")[0] if line.count("\t") >= 2 else ""
                count += mnemonic.startswith(("vgather", "vpgather"))
    return f"{count} gather instructions"


def same_results(options, scalar, gather) -> list[str]:
    """Programs whose outputs differ between the two builds (bit for bit, NaNs equal)."""
    import numpy as np

    from kiln.gt4py import bench

    differ = []
    for program_id in bench.programs(options.filter):
        program, grid, args = bench.setup(options, program_id)
        providers = grid.connectivities()
        fields = {n: a for n, a in args.items() if hasattr(a, "ndarray")}
        before = {n: np.array(a.ndarray, copy=True) for n, a in fields.items()}
        outputs = []
        for backend in (scalar, gather):
            for n, a in fields.items():
                np.copyto(np.asarray(a.ndarray), before[n])
            program.with_backend(backend)(**args, offset_provider=providers)
            outputs.append({n: np.array(a.ndarray, copy=True) for n, a in fields.items()})
        for n, a in fields.items():
            np.copyto(np.asarray(a.ndarray), before[n])
        if any(not np.array_equal(outputs[0][n], outputs[1][n], equal_nan=True) for n in fields):
            differ.append(program_id)
    return differ


def main(argv=None) -> int:
    from kiln.gt4py import bench

    argv = list(sys.argv[1:] if argv is None else argv)
    gtfn = "--no-gtfn" not in argv
    argv = [a for a in argv if a != "--no-gtfn"]
    os.environ.setdefault("GT4PY_BUILD_JOBS", "0")
    options = bench.parse(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(options.threads))
    options.window_of = bench.windows(options)
    print(f"machine: {bench.machine()}; load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory(prefix="kiln-gather-bench-") as caches:
        scalar = backend_with("off", options, os.path.join(caches, "off"))
        gather = backend_with("on", options, os.path.join(caches, "on"))
        differ = same_results(options, scalar, gather)
        print("outputs bit-identical between the two builds: " + ("all programs" if not differ else "NOT " + ", ".join(differ)))
        for name in ("off", "on"):
            entries = sum(len(files) for _, _, files in os.walk(os.path.join(caches, name)))
            print(f"KILN_GATHER={name}: {entries} files in its own cache, "
                  f"{gather_instructions(os.path.join(caches, name))} in its kernels")
        backends = {"kiln": scalar, "kiln_gather": gather}
        if gtfn:
            from gt4py.next.program_processors.runners import gtfn as gtfn_runners

            backends["gtfn_cpu"] = gtfn_runners.run_gtfn
        rows = bench.run_times(options, backends)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print(f"\n## ms per call, medians of {options.rounds} interleaved rounds ({options.clock} clock)\n")
    cols = list(backends)
    print("| program | scalar loads (off) | gathers (on) | " + ("gtfn_cpu | " if gtfn else "")
          + "gathers / scalar | " + ("gtfn / scalar | gtfn / gathers |" if gtfn else ""))
    print("|---|" + "---|" * (len(cols) + (3 if gtfn else 1)))
    for r in rows:
        if not all(isinstance(r.get(c), float) for c in cols):
            print(f"| {r['program']} | " + " | ".join(str(r.get(c, "-")) for c in cols) + " |")
            continue
        cells = [f"{r[c] * 1e3:.3f}" for c in cols] + [f"{r['kiln_gather'] / r['kiln']:.2f}x"]
        if gtfn:
            cells += [f"{r['gtfn_cpu'] / r['kiln']:.2f}x", f"{r['gtfn_cpu'] / r['kiln_gather']:.2f}x"]
        print(f"| {r['program']} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
