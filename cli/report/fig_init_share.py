"""Figure 2, the question of the cycle: does the first-run penalty pay back
over a longer run? Init's share of the process's wall time against the run's
length, cold and warm. Runs of other builds or thread counts (a demo run with
--threads 2 beside a sweep, say) get lines of their own."""

from plotting import TEMPERATURE_COLOURS, figure, note, save

_MARKERS = ["o", "s", "^", "D", "v"]


def _builds(run):
    """What ran: 'specialised + generic', ', 2 threads' when more than one."""
    variants = " + ".join(sorted({k.variant for k in run.kernels}, key=lambda v: (v != "specialised", v)))
    threads = max((k.threads for k in run.kernels), default=1)
    return variants + (f", {threads} threads" if threads > 1 else "")


def _lines(runs):
    """{(builds, temperature): [(steps, init share %)]}"""
    lines = {}
    for run in runs:
        lines.setdefault((_builds(run), run.temperature), []).append((run.steps, 100.0 * run.init_share))
    return {key: sorted(points) for key, points in sorted(lines.items())}


def plot(runs, folder):
    fig, ax = figure(6.4, 4.2)
    lines = _lines(runs)
    builds = sorted({b for b, _ in lines})
    for (build, temperature), points in lines.items():
        label = temperature if len(builds) == 1 else f"{temperature}: {build}"
        steps, shares = zip(*points)
        ax.plot(steps, shares, marker=_MARKERS[builds.index(build) % len(_MARKERS)],
                color=TEMPERATURE_COLOURS[temperature], label=label,
                linestyle="-" if build == builds[0] else "--")
        for x, y in points:
            ax.annotate(f"{y:.3g}%", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    lengths = sorted({r.steps for r in runs})
    ax.set_xscale("log")
    ax.set_xticks(lengths, [str(s) for s in lengths])
    ax.minorticks_off()
    # Log: a warm start's share is a few hundredths of a percent, a cold one's tens.
    ax.set_yscale("log")
    lowest = min((share for points in lines.values() for _, share in points if share > 0), default=1.0)
    ax.set_ylim(lowest / 3, 100)
    ax.set_xlim(min(lengths) / 1.5, max(lengths) * 2.5)
    ax.yaxis.set_major_formatter(lambda value, _: f"{value:g}")
    ax.set_xlabel("run length [steps]")
    ax.set_ylabel("init share of wall time [%, log]")
    ax.set_title("Init's share of the wall time against run length")
    ax.legend(fontsize=8)
    if len(lengths) < 2:
        note(ax, "one run length only: kiln demo --steps-sweep 1,10,100,1000 gives more")
    return save(fig, folder, "init_share")
