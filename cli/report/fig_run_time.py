"""Figure 3: a call's time per kernel, one bar per build that ran it:
specialised, generic, ahead of time, and per thread count; builds of
different files apart (each file's own specialisations)."""

import re

from plotting import figure, save

_ORDER = {"specialised": 0, "ICON's choice": 1, "generic": 2, "ahead of time": 3}


def _series_name(kernel):
    name = kernel.variant
    return name if kernel.threads <= 1 else f"{name}, {kernel.threads} threads"


def _series(runs):
    """{series: {kernel: ms a call}}: one series per build and file, never a
    build's mean from one file beside another build's from another. Each file
    ran its own specialisations (its grid, its domains): 2 million calls on a
    3x3 grid beside 2 thousand on 200x100 would draw one build 200 times slower
    than the other. With more than one file, a series names its file."""
    several = len({run.path for run in runs}) > 1
    chosen = {}
    for run in runs:
        for k in run.kernels:
            ms = k.ms_per_call()
            if ms is not None:
                name = _series_name(k) + (f" ({run.path.stem})" if several else "")
                chosen.setdefault(name, {})[k.base] = ms
    return dict(sorted(chosen.items(), key=lambda item: (_ORDER.get(item[0].split(",")[0].split(" (")[0], 4),
                                                         item[0])))


def _missing(series):
    lines = []
    if not any(name.startswith("ahead of time") for name in series):
        lines.append("no ahead-of-time build in these files")
    if not any(re.search(r", \d+ threads", name) for name in series):
        lines.append("one thread only (kiln demo --threads N for more)")
    return "; ".join(lines)


def plot(runs, folder):
    series = _series(runs)
    kernels = sorted({base for values in series.values() for base in values})
    # Horizontal bars: the kernels' names (some 70 characters) along the y
    # axis, each on a line of its own, where slanted x labels overlapped.
    rows = max(len(kernels), 1)
    fig, ax = figure(9.0, min(2.0 + rows * (0.25 + 0.12 * len(series)), 40.0))
    height = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        ys = [j + (i - (len(series) - 1) / 2) * height for j in range(len(kernels))]
        ax.barh(ys, [values.get(k, 0.0) for k in kernels], height, label=name)
    ax.set_yticks(range(len(kernels)), kernels, fontsize=7)
    ax.invert_yaxis()  # the first kernel at the top
    ax.set_xlabel("time a call [ms]")
    fig.suptitle("Run time per kernel and build")
    missing = _missing(series)
    if missing:
        ax.set_title(missing, fontsize=7, style="italic", color="#555555")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, folder, "run_per_kernel")
