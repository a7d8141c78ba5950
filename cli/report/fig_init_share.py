"""Figure 2, the question of the cycle: does the first-run penalty pay back
over a longer run? Init's share of the process's wall time against the run's
length, cold and warm. Runs of other builds or thread counts (a demo run with
--threads 2 beside a sweep, say), and of other programs (other kernels), get
lines of their own. A run's length is the steps its file's name says (kiln
demo --steps-sweep), else the calls of its most-called kernel, as the axis says."""

from plotting import TEMPERATURE_COLOURS, figure, note, save

_MARKERS = ["o", "s", "^", "D", "v"]


def _builds(run):
    """What ran: 'specialised + generic', ', 2 threads' when more than one."""
    variants = " + ".join(sorted({k.variant for k in run.kernels}, key=lambda v: (v != "specialised", v)))
    threads = max((k.threads for k in run.kernels), default=1)
    return variants + (f", {threads} threads" if threads > 1 else "")


def _lines(runs):
    """{(program, builds, temperature): [(steps, init share %)]}: one line per
    program (its kernels; labelled by its files' name), never points of two."""
    names = {}
    for run in runs:
        names.setdefault(run.program, run.label)
    lines = {}
    for run in runs:
        key = (names[run.program], _builds(run), run.temperature)
        lines.setdefault(key, []).append((run.steps, 100.0 * run.init_share))
    return {key: sorted(points) for key, points in sorted(lines.items())}


def _ticks(lengths):
    """The run lengths as ticks, none closer than a quarter of a decade to the
    one before (on the log axis their labels would overlap)."""
    kept = []
    for length in sorted(lengths):
        if not kept or length > 0 and kept[-1] > 0 and length / kept[-1] >= 10 ** 0.25:
            kept.append(length)
    return kept


def plot(runs, folder):
    fig, ax = figure(6.4, 4.2)
    lines = _lines(runs)
    builds = sorted({(p, b) for p, b, _ in lines})
    programs = {p for p, _, _ in lines}
    for (program, build, temperature), points in lines.items():
        label = temperature if len(builds) == 1 else f"{temperature}: {build}"
        if len(programs) > 1:
            label = f"{program}, {label}"
        steps, shares = zip(*points)
        index = builds.index((program, build))
        ax.plot(steps, shares, marker=_MARKERS[index % len(_MARKERS)],
                color=TEMPERATURE_COLOURS[temperature], label=label,
                linestyle="-" if index == 0 else "--")
        for x, y in points:
            ax.annotate(f"{y:.3g}%", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    lengths = sorted({r.steps for r in runs})
    ax.set_xscale("log")
    ticks = _ticks(lengths)
    ax.set_xticks(ticks, [str(s) for s in ticks])
    ax.minorticks_off()
    # Log: a warm start's share is a few hundredths of a percent, a cold one's tens.
    ax.set_yscale("log")
    lowest = min((share for points in lines.values() for _, share in points if share > 0), default=1.0)
    ax.set_ylim(lowest / 3, 100)
    ax.set_xlim(min(lengths) / 1.5, max(lengths) * 2.5)
    ax.yaxis.set_major_formatter(lambda value, _: f"{value:g}")
    # A file that does not say its steps (only a sweep's names do) counts the
    # calls of its most-called kernel: steps only where each kernel runs once a step.
    counted = [r.path.name for r in runs if not r.steps_known]
    ax.set_xlabel("run length [steps]" if not counted else
                  "run length [steps; for " + ", ".join(counted[:3]) + ("..." if len(counted) > 3 else "") +
                  ": calls of its most-called kernel]", fontsize=8 if counted else None)
    ax.set_ylabel("init share of wall time [%, log]")
    ax.set_title("Init's share of the wall time against run length")
    ax.legend(fontsize=8)
    if len(lengths) < 2:
        note(ax, "one run length only: kiln demo --steps-sweep 1,10,100,1000 gives more")
    return save(fig, folder, "init_share")
