"""What the three figures share: matplotlib without a display, text kept as
text in the SVG (searchable, and what the tests read), both formats saved."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

plt.rcParams.update({
    "svg.fonttype": "none",     # <text> elements, not glyph paths
    "svg.hashsalt": "kiln",     # the same ids on every run: SVGs diff cleanly
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
})

# One colour per init phase, in kiln's order, the same in every figure.
PHASE_COLOURS = {
    "specialise": "#9ecae1", "key": "#6baed6", "memory_lookup": "#c6dbef", "disk_lookup": "#3182bd",
    "lock": "#fdae6b", "lock_wait": "#e6550d", "slot_wait": "#a63603", "compile": "#d62728",
    "store": "#74c476", "load": "#31a354",
}
TEMPERATURE_COLOURS = {"cold": "#1f77b4", "warm": "#ff7f0e", "partly warm": "#7f7f7f"}


def figure(width, height, columns=1):
    """A figure and its axes: one, or a list of `columns` side by side."""
    fig, axes = plt.subplots(1, columns, figsize=(width, height), layout="constrained", squeeze=False)
    return fig, (axes[0][0] if columns == 1 else list(axes[0]))


def save(fig, folder, stem):
    """Writes FOLDER/STEM.png and .svg; returns their paths."""
    paths = [folder / f"{stem}.png", folder / f"{stem}.svg"]
    for path in paths:
        fig.savefig(path, dpi=110, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)
    return paths


def note(ax, text):
    """A line under the axes saying what is not shown, and why."""
    ax.annotate(text, xy=(0, 0), xycoords="axes fraction", xytext=(0, -34), textcoords="offset points",
                fontsize=8, style="italic", color="#555555", va="top")
