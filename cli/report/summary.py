"""The report's text: per run, init's and run's shares of the wall time;
the kernels that took longest to initialise."""

from metrics_files import INIT_PHASES


def _pct(share):
    return f"{100.0 * share:6.2f}%"


def shares_table(runs):
    lines = ["init and run as shares of the process's wall time (process start to the Runtime's end):",
             f"  {'steps':>6}  {'start':<11} {'init':>7} {'run':>7}  {'wall ms':>9}  file"]
    for run in sorted(runs, key=lambda r: (r.steps, r.temperature)):
        lines.append(f"  {run.steps:>6}  {run.temperature:<11} {_pct(run.init_share)} {_pct(run.run_share)}"
                     f"  {run.wall_ms:9.1f}  {run.path.name}")
    return lines


def top_init(run, count=5):
    """The kernels of `run` that took longest to initialise, with their largest phase."""
    lines = [f"top kernels by init ({run.path.name}, {run.temperature}):"]
    for k in sorted(run.kernels, key=lambda k: k.init_ms, reverse=True)[:count]:
        phase = max(INIT_PHASES, key=k.phase_ms)
        lines.append(f"  {k.init_ms:9.2f} ms  {k.name}  (most in {phase}: {k.phase_ms(phase):.2f} ms)")
    return lines


def summary_text(runs):
    lines = [f"kiln report: {len(runs)} metrics file(s)"]
    lines += shares_table(runs)
    coldest = max(runs, key=lambda r: (r.compiles, r.init_ms))
    lines += top_init(coldest)
    return "\n".join(lines) + "\n"
