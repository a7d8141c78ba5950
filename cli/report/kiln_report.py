"""kiln report: figures and a summary from kiln's metrics JSON files.

    kiln report FILE.json... [-o FOLDER]

Writes FOLDER/init_phases, init_share and run_per_kernel (.png and .svg) and
FOLDER/summary.txt, and prints the summary. kiln_stencil_bench's results
(--benchmark_out=FILE --benchmark_out_format=json) add figure 3's ahead-of-time
and ICON's-choice series. `kiln report` runs this script
with the Python it finds (KILN_PYTHON, the project's .venv, python3)."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

try:
    import matplotlib  # noqa: F401
except ImportError:
    sys.stderr.write(f"kiln report: {sys.executable} has no matplotlib: run scripts/setup.sh (it installs it in "
                     ".venv), or set KILN_PYTHON to a Python that has it\n")
    sys.exit(3)

import fig_init_phases  # noqa: E402
import fig_init_share  # noqa: E402
import fig_run_time  # noqa: E402
from run_files import load_runs  # noqa: E402
from runs import MetricsError  # noqa: E402
from summary import summary_text  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(prog="kiln report", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path,
                        help="metrics JSON (KILN_METRICS_FILE), or kiln_stencil_bench's --benchmark_out JSON")
    parser.add_argument("-o", "--output", type=Path, default=Path("kiln-report"), help="folder for the figures")
    args = parser.parse_args(argv)
    try:
        runs = load_runs(args.files)
    except MetricsError as error:
        sys.stderr.write(f"kiln report: {error}\n")
        return 2
    args.output.mkdir(parents=True, exist_ok=True)
    # kiln_stencil_bench's files hold run times only: figure 3's, not init's.
    metrics = [r for r in runs if r.source == "metrics"]
    written = fig_init_phases.plot(metrics, args.output) + fig_init_share.plot(metrics, args.output) if metrics else []
    written += fig_run_time.plot(runs, args.output)
    text = summary_text(metrics) if metrics else "kiln report: kiln_stencil_bench results only (figure 3)\n"
    (args.output / "summary.txt").write_text(text)
    written.append(args.output / "summary.txt")
    sys.stdout.write(text)
    sys.stdout.write("wrote " + ", ".join(str(p) for p in written) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
