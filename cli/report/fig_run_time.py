"""Figure 3: a call's time per kernel, one bar per build that ran it:
specialised, generic, ahead of time, and per thread count."""

from plotting import figure, save

_ORDER = {"specialised": 0, "ICON's choice": 1, "generic": 2, "ahead of time": 3}


def _series_name(kernel):
    name = kernel.variant
    return name if kernel.threads <= 1 else f"{name}, {kernel.threads} threads"


def _series(runs):
    """{series: {kernel: ms a call}}, each series from the run with the most
    steps that has it (the most calls behind its mean); kiln_stencil_bench's
    medians of repeated runs before any demo's means."""
    chosen = {}
    for run in sorted(runs, key=lambda r: (r.source == "stencil_bench", r.steps)):
        for k in run.kernels:
            ms = k.ms_per_call()
            if ms is not None:
                chosen.setdefault(_series_name(k), {})[k.base] = ms
    return dict(sorted(chosen.items(), key=lambda item: (_ORDER.get(item[0].split(",")[0], 4), item[0])))


def _missing(series):
    lines = []
    if not any(name.startswith("ahead of time") for name in series):
        lines.append("no ahead-of-time build in these files")
    if not any("threads" in name for name in series):
        lines.append("one thread only (kiln demo --threads N for more)")
    return "; ".join(lines)


def plot(runs, folder):
    series = _series(runs)
    kernels = sorted({base for values in series.values() for base in values})
    fig, ax = figure(max(6.0, 1.1 * len(kernels) + 2), 4.6)
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(kernels))]
        ax.bar(xs, [values.get(k, 0.0) for k in kernels], width, label=name)
    ax.set_xticks(range(len(kernels)), kernels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("time a call [ms]")
    fig.suptitle("Run time per kernel and build")
    missing = _missing(series)
    if missing:
        ax.set_title(missing, fontsize=7, style="italic", color="#555555")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, folder, "run_per_kernel")
