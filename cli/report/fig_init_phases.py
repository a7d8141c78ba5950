"""Figure 1: each kernel's init as stacked phases, a cold run beside a warm one."""

from metrics_files import INIT_PHASES
from plotting import PHASE_COLOURS, figure, note, save


def _pick(runs, temperature):
    """The run of that temperature with the most kernels (the first given of equals)."""
    chosen = [r for r in runs if r.temperature == temperature]
    return max(chosen, key=lambda r: len(r.kernels)) if chosen else None


def _panel(ax, run, names, title):
    by_name = {k.name: k for k in run.kernels}
    left = [0.0] * len(names)
    for phase in INIT_PHASES:
        widths = [by_name[n].phase_ms(phase) if n in by_name else 0.0 for n in names]
        if not any(widths):
            continue
        ax.barh(names, widths, left=left, color=PHASE_COLOURS[phase], label=phase)
        left = [a + b for a, b in zip(left, widths)]
    total = sum(k.init_ms for k in run.kernels)
    ax.set_title(f"{title}: {run.path.name}\ninit {total:.1f} ms in all", fontsize=9)
    ax.set_xlabel("init per kernel [ms]")
    ax.invert_yaxis()


def plot(runs, folder):
    cold, warm = _pick(runs, "cold"), _pick(runs, "warm")
    panels = [(r, t) for r, t in ((cold, "cold"), (warm, "warm")) if r]
    names = sorted({k.name for r, _ in panels for k in r.kernels})
    fig, axes = figure(5.0 * len(panels) + 4.0, 0.32 * len(names) + 2.2, len(panels))  # + the names
    axes = axes if len(panels) > 1 else [axes]
    for ax, (run, title) in zip(axes, panels):
        _panel(ax, run, names, title)
        if ax is not axes[0]:
            ax.tick_params(labelleft=False)
    fig.suptitle("Init phases per kernel, cold (compiles) against warm (disk cache)")
    # One legend for both panels, each phase once, in kiln's order.
    handles = {label: h for ax in axes for h, label in zip(*ax.get_legend_handles_labels())}
    fig.legend([handles[p] for p in INIT_PHASES if p in handles], [p for p in INIT_PHASES if p in handles],
               loc="outside lower center", ncol=min(len(handles), 5 * len(panels)), fontsize=8)
    missing = [t for r, t in ((cold, "cold"), (warm, "warm")) if not r]
    if missing:
        note(axes[0], f"no {missing[0]} run in these files")
    return save(fig, folder, "init_phases")
