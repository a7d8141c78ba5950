"""kiln report on metrics JSON that real `kiln demo` runs write (cold, then
warm on the same cache, then on 2 threads), and on the files `kiln demo
--steps-sweep` writes: PNG and SVG files that are not empty, whose SVG text
(kept as text: cli/report/plotting.py) names the expected series, kernels
and labels; a summary; clear errors for a wrong file, a missing Python and a
Python without matplotlib. Speeds are never asserted."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

KILN = os.environ["KILN_TOOL"]
# 32 x 32 rhombi (2,048 cells) and 32 levels: every kernel's domain holds at
# least 2 x 16,384 points, so the run with --threads 2 runs each on 2 threads
# (a call runs on one thread per 16,384 points: docs/manual/threads.md).
DEMO = ["demo", "--nx", "32", "--ny", "32", "--levels", "32", "--steps", "3"]
KERNELS = ["update_theta_and_exner", "apply_diffusion_to_vn", "solve_tridiagonal_matrix_for_w"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def kiln(*args, cache=None, env=None, check=True):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    environment.update({"KILN_LOG_LEVEL": "error", "KILN_CACHE_DIR": str(cache or "/nonexistent")})
    environment.update(env or {})
    result = subprocess.run([KILN, *map(str, args)], env=environment, capture_output=True, text=True, timeout=600)
    if check:
        assert result.returncode == 0, f"kiln {' '.join(map(str, args))}: {result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    """Three demo runs' metrics: cold, warm, and warm on 2 threads."""
    folder = tmp_path_factory.mktemp("runs")
    files = []
    for name, extra in (("cold", []), ("warm", []), ("threads", ["--threads", "2"])):
        path = folder / f"{name}.json"
        kiln(*DEMO, *extra, cache=folder / "cache", env={"KILN_METRICS_FILE": str(path)})
        files.append(path)
    return files


def svg_text(path):
    """The text elements of an SVG, in order."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text()) or re.findall(r">([^<>]+)<", path.read_text())


def check_figure(folder, stem, expected):
    png, svg = folder / f"{stem}.png", folder / f"{stem}.svg"
    assert png.read_bytes().startswith(PNG_SIGNATURE) and png.stat().st_size > 1000
    assert svg.stat().st_size > 1000
    text = "\n".join(svg_text(svg))
    for word in expected:
        assert word in text, f"{svg}: {word!r} missing from its text:\n{text}"
    return text


def test_report_draws_the_three_figures_from_demo_runs(demo_runs, tmp_path):
    result = kiln("report", *demo_runs, "-o", tmp_path / "figures")
    figures = tmp_path / "figures"
    check_figure(figures, "init_phases", ["Init phases per kernel", "cold", "warm", "compile", "load", "disk_lookup",
                                          "init per kernel [ms]", *KERNELS, "update_theta_and_exner (generic)"])
    check_figure(figures, "init_share", ["Init's share of the wall time", "cold", "warm", "run length [steps",
                                         "init share of wall time [%, log]", "3"])
    text = check_figure(figures, "run_per_kernel", ["Run time per kernel and build", "specialised", "generic",
                                                    "specialised, 2 threads", "generic, 2 threads",
                                                    "time a call [ms]", *KERNELS])
    # No ahead-of-time build in a demo's files: said, not drawn.
    assert "no ahead-of-time build in these files" in text
    summary = (figures / "summary.txt").read_text()
    assert summary == result.stdout.split("wrote ")[0]
    assert re.search(r"^\s+3\s+cold\s+\d+\.\d+%\s+\d+\.\d+%", summary, re.M), summary
    assert re.search(r"^\s+3\s+warm\s+\d+\.\d+%\s+\d+\.\d+%", summary, re.M), summary
    assert "top kernels by init (cold.json, cold):" in summary
    assert "(most in compile:" in summary


def test_an_ahead_of_time_series_is_drawn_when_a_file_has_one(demo_runs, tmp_path):
    """A file whose kernels are named 'NAME (ahead of time)' (as a benchmark
    of the ahead-of-time build would name them) adds that series."""
    data = json.loads(demo_runs[1].read_text())
    data["kernels"] = {f"{name} (ahead of time)": k for name, k in data["kernels"].items() if "(" not in name}
    aot = tmp_path / "aot.json"
    aot.write_text(json.dumps(data))
    kiln("report", demo_runs[1], aot, "-o", tmp_path / "figures")
    text = check_figure(tmp_path / "figures", "run_per_kernel", ["specialised", "generic", "ahead of time"])
    assert "no ahead-of-time build" not in text
    # The warm files alone: no cold run, which the first figure says.
    check_figure(tmp_path / "figures", "init_phases", ["warm", "no cold run in these files"])


@pytest.mark.skipif("KILN_STENCIL_BENCH" not in os.environ,
                    reason="kiln_stencil_bench not built (-DKILN_BUILD_BENCHMARKS=OFF)")
def test_kiln_stencil_bench_results_add_the_ahead_of_time_and_thread_series(demo_runs, tmp_path):
    """A real kiln_stencil_bench run on a small grid, its results as Google
    Benchmark writes them: figure 3 gains ICON's choice, the ahead-of-time
    build and 2 threads; the demo's files still make figures 1 and 2."""
    results = tmp_path / "bench.json"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    run = subprocess.run([os.environ["KILN_STENCIL_BENCH"], "--nx=4", "--ny=4", "--levels=4",
                          "--benchmark_filter=stencil/", "--benchmark_min_time=0.01", "--benchmark_repetitions=2",
                          f"--benchmark_out={results}", "--benchmark_out_format=json"],
                         env=environment, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    kiln("report", demo_runs[0], results, "-o", tmp_path / "figures")
    text = check_figure(tmp_path / "figures", "run_per_kernel",
                        ["specialised", "ICON's choice", "generic", "ahead of time", "specialised, 2 threads",
                         *KERNELS, "apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence"])
    assert "no ahead-of-time build" not in text
    check_figure(tmp_path / "figures", "init_phases", ["cold", *KERNELS])
    # The benchmark's results alone: figure 3, and a summary that says why only it.
    result = kiln("report", results, "-o", tmp_path / "alone")
    assert "kiln_stencil_bench results only (figure 3)" in result.stdout
    assert not (tmp_path / "alone" / "init_share.svg").exists()
    check_figure(tmp_path / "alone", "run_per_kernel", ["ahead of time"])


def test_google_benchmark_results_of_another_program_are_refused(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"context": {}, "benchmarks": [
        {"name": "call_1point/kiln_handle", "run_type": "iteration", "real_time": 16.3, "time_unit": "ns"}]}))
    result = kiln("report", other, "-o", tmp_path / "figures", check=False)
    assert result.returncode == 2
    assert f"{other}: Google Benchmark results without kiln_stencil_bench's stencil/ rows" in result.stderr


def test_the_steps_sweep_writes_cold_and_warm_runs_of_each_length(tmp_path):
    sweep = tmp_path / "sweep"
    result = kiln("demo", "--nx", "4", "--ny", "4", "--levels", "4", "--mode", "specialised",
                  "--steps-sweep", "1,4", "--sweep-dir", sweep)
    for steps in (1, 4):
        cold = json.loads((sweep / f"demo-steps-{steps}-cold.json").read_text())
        warm = json.loads((sweep / f"demo-steps-{steps}-warm.json").read_text())
        assert cold["total"]["compiles"] == 7 and cold["total"]["disk_hits"] == 0
        assert warm["total"]["compiles"] == 0 and warm["total"]["disk_hits"] == 7
        assert cold["kernels"]["update_theta_and_exner"]["phases"]["first_call"]["count"] == 1
        assert sum(p["count"] for n, p in warm["kernels"]["update_theta_and_exner"]["phases"].items()
                   if n in ("first_call", "run")) == steps
        assert re.search(rf"^\s+{steps} steps, cold: init", result.stdout, re.M), result.stdout
    assert not list(sweep.glob("cache-*")), "the sweep left its caches"
    kiln("report", *sorted(sweep.glob("*.json")), "-o", tmp_path / "figures")
    check_figure(tmp_path / "figures", "init_share", ["cold", "warm", "1", "4"])


def test_a_file_of_another_schema_is_refused_naming_it(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"kernels": {}, "total": {}}))
    result = kiln("report", old, "-o", tmp_path / "figures", check=False)
    assert result.returncode == 2
    assert f"{old}: schema_version None, where kiln report reads 2" in result.stderr


def test_a_missing_python_and_one_without_matplotlib_say_so(demo_runs, tmp_path):
    result = kiln("report", demo_runs[0], env={"KILN_PYTHON": str(tmp_path / "no-python")}, check=False)
    assert result.returncode != 0
    assert f"KILN_PYTHON='{tmp_path / 'no-python'}': not an executable file" in result.stderr
    # A Python of its own without matplotlib: a venv without site packages.
    bare = tmp_path / "bare"
    subprocess.run(["python3", "-m", "venv", "--without-pip", bare], check=True)
    result = kiln("report", demo_runs[0], env={"KILN_PYTHON": str(bare / "bin" / "python")}, check=False)
    assert result.returncode == 3
    assert "has no matplotlib: run scripts/setup.sh" in result.stderr


def test_report_modules_import_one_way():
    """cli/report's modules import one another without a circle (issue 32: metrics_files.py and
    stencil_bench_files.py once imported each other, one import hidden inside a function)."""
    folder = Path(__file__).resolve().parents[2] / "cli" / "report"
    modules = {path.stem: path for path in folder.glob("*.py")}
    imports = {}
    for name, path in modules.items():
        found = re.findall(r"^\s*(?:from\s+(\w+)\s+import|import\s+(\w+))", path.read_text(), re.MULTILINE)
        imports[name] = {a or b for a, b in found} & modules.keys()
    done, path = set(), []

    def visit(name):
        assert name not in path, "import circle: " + " -> ".join(path[path.index(name):] + [name])
        if name in done:
            return
        path.append(name)
        for other in sorted(imports[name]):
            visit(other)
        path.pop()
        done.add(name)

    for name in sorted(modules):
        visit(name)
    assert {"runs", "metrics_files", "stencil_bench_files", "run_files"} <= modules.keys()


# Issue 33, item 9, on the demo runs above.
def test_builds_of_different_files_are_kept_apart(demo_runs, tmp_path):
    """Each file ran its own specialisations: a build's time from one file is
    never drawn as the same run's beside another build's from another file (a
    file of many calls on a small grid made the generic build look 200x slower)."""
    data = json.loads(demo_runs[1].read_text())
    data["kernels"] = {name: k for name, k in data["kernels"].items() if "(" not in name}  # specialised only
    for k in data["kernels"].values():
        for phase in k["phases"].values():
            phase["count"] *= 1000
    big = tmp_path / "big.json"
    big.write_text(json.dumps(data))
    kiln("report", demo_runs[1], big, "-o", tmp_path / "figures")
    check_figure(tmp_path / "figures", "run_per_kernel",
                 ["specialised (warm)", "generic (warm)", "specialised (big)", *KERNELS])


def test_runs_of_another_program_are_not_points_of_this_ones_sweep(demo_runs, tmp_path):
    """Lines per program (its kernels), and the steps a sweep's file names say,
    not a kernel's call count."""
    demo = tmp_path / "demo-steps-30-cold.json"
    demo.write_text(demo_runs[0].read_text())
    data = json.loads(demo_runs[0].read_text())
    data["kernels"] = {f"other_{name}": k for name, k in data["kernels"].items()}
    other = tmp_path / "other-steps-700-cold.json"
    other.write_text(json.dumps(data))
    kiln("report", demo, other, "-o", tmp_path / "figures")
    text = check_figure(tmp_path / "figures", "init_share", ["demo, cold", "other, cold", "30", "700"])
    assert "run length [steps]" in text  # both files say their steps: no call counts on the axis


def test_kernel_names_and_close_run_lengths_do_not_overlap(demo_runs, tmp_path):
    """Figure 3's kernel names lie horizontally, one a row (they were slanted
    and overlapped); figure 2 keeps one tick of run lengths closer than a
    quarter of a decade."""
    kiln("report", *demo_runs, "-o", tmp_path / "figures")
    svg = (tmp_path / "figures" / "run_per_kernel.svg").read_text()
    for kernel in KERNELS:
        tags = re.findall(r"<text[^>]*>" + re.escape(kernel) + "</text>", svg)
        angles = [float(a) for tag in tags for a in re.findall(r"rotate\((-?[0-9.]+)", tag)]
        assert tags and all(a == 0 for a in angles), tags
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cli" / "report"))
    import fig_init_share
    assert fig_init_share._ticks([1, 10, 11, 100, 1000, 1100, 3000]) == [1, 10, 100, 1000, 3000]
