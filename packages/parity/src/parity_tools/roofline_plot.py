"""The roofline plot of `bench.py`'s rows (see `roofline.py`): roofline.png and roofline.pdf.

Per device, two panels. Left, the roofline: each row with a known operation count at its
operations per byte (across) and operations per second (up), under the measured ceilings: the
bandwidth's slope (best copy, and copy from memory) and the matrix product's flat line. Right,
every row's bandwidth against the bytes it moves, under the ceiling it is read against (drawn from
the copies measured).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from . import figures, roofline

Row = dict[str, Any]

# How far the roofline's axis reaches beyond the rows and the ridge (where the ceilings meet).
MARGIN = 10.0


def plot(rows: list[Row], peaks: dict[str, Any], path: Path, title: str) -> tuple[int, int] | None:
    """Written as PNG at `path` and as PDF beside it: the PNG's width and height, or None when
    matplotlib is not installed."""
    plt = figures.pyplot()
    if plt is None:
        return None
    devices = sorted(peaks)
    backends = sorted({row["backend"] for row in rows})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    size = (figures.PANEL_INCHES[0] * 2, figures.PANEL_INCHES[1] * len(devices))
    figure, axes = plt.subplots(
        len(devices), 2, figsize=size, dpi=figures.DPI, squeeze=False, layout="constrained"
    )
    for (ceilings, bandwidths), device in zip(axes, devices, strict=True):
        here = [row for row in rows if row["device"] == device]
        draw_roofline(ceilings, peaks[device], here)
        draw_bandwidth_ceiling(bandwidths, peaks[device], here)
        for row in here:
            style = {"color": colors[backends.index(row["backend"]) % len(colors)]}
            style |= {"marker": "s" if row["mode"] == "compiled" else "o", "alpha": 0.7}
            label = f"{row['backend']} {row['mode']}"
            bandwidths.scatter(row["bytes"], row["bytes_per_s"] / 1e9, label=label, **style)
            if row["flops"]:
                intensity = row["flops"] / row["bytes"]
                ceilings.scatter(intensity, row["flops_per_s"] / 1e9, label=label, **style)
        for panel in (ceilings, bandwidths):
            panel.grid(visible=True, which="both", alpha=0.3)
            handles, labels = panel.get_legend_handles_labels()
            unique = dict(zip(labels, handles, strict=True))  # a label per backend and mode
            panel.legend(unique.values(), unique.keys(), fontsize="small")
    pixels = figures.save(figure, path, title, size)
    plt.close(figure)
    return pixels


def draw_bandwidth_ceiling(panel: Any, peak: dict[str, Any], rows: list[Row]) -> None:
    """The copies measured, and the ceiling that rows of each size are read against."""
    ladder = peak["bandwidth"]["ladder"]
    sizes = [step["bytes"] for step in ladder] + [row["bytes"] for row in rows]
    low, high = min(sizes) / 2, max(sizes) * 2
    across = [low * (high / low) ** (step / 100) for step in range(101)]
    ceiling = [roofline.bandwidth_ceiling(ladder, moved) / 1e9 for moved in across]
    panel.plot(across, ceiling, color="black", linewidth=1, label="the ceiling of a row this size")
    rates = [step["bytes_per_s"] / 1e9 for step in ladder]
    label = "copies measured: dst.copy_(src)"
    panel.scatter([step["bytes"] for step in ladder], rates, color="black", marker="x", label=label)
    panel.set(
        xscale="log", yscale="log", title=f"{peak['bandwidth']['device']}: every row's bandwidth"
    )
    panel.set(xlabel="bytes moved: operands + result", ylabel="GB/s")


def draw_roofline(panel: Any, peak: dict[str, Any], rows: list[Row]) -> None:
    """The roofline's ceilings on `panel`, over the operations per byte of `rows` and the ridges
    (where the slopes meet the flat line)."""
    compute = peak["compute"]["flops_per_s"]
    best, memory = peak["bandwidth"]["bytes_per_s"], peak["bandwidth"]["beyond_cache_bytes_per_s"]
    known = [row["flops"] / row["bytes"] for row in rows if row["flops"]]
    ridges = [compute / best, compute / memory]
    low, high = min(known + ridges) / MARGIN, max(known + ridges) * MARGIN
    across = [low * (high / low) ** (step / 50) for step in range(51)]
    for bandwidth, style, what in ((best, ":", "best copy"), (memory, "-", "copy from memory")):
        rates = [min(compute, intensity * bandwidth) / 1e9 for intensity in across]
        label = f"{what}: {bandwidth / 1e9:.1f} GB/s"
        panel.plot(across, rates, color="black", linestyle=style, linewidth=1, label=label)
    label = f"matrix product: {compute / 1e9:.1f} GFLOP/s"
    panel.axhline(compute / 1e9, color="grey", linewidth=1, label=label)
    lowest = min([low * memory, *(row["flops_per_s"] for row in rows if row["flops"])]) / 1e9
    panel.set(xscale="log", yscale="log", xlim=(low, high), ylim=(lowest / 2, compute / 1e9 * 2))
    panel.set(xlabel="operations per byte", ylabel="GFLOP/s")
    panel.set(title=f"{peak['compute']['device']}: roofline of rows with known operations")
    if missing := roofline.uncounted(rows):
        # At the top (in the middle where nothing is drawn): what is missing, and how to add it.
        said = f"No operation count, not drawn: {', '.join(missing)}. "
        lines = textwrap.wrap(said + roofline.how_to_count(missing), 52)
        where, align = ((0.5, 0.97), "top") if known else ((0.5, 0.5), "center")
        box = {"facecolor": "white", "alpha": 0.8, "edgecolor": "grey"}
        text = "\n".join(lines)
        panel.text(
            *where,
            text,
            transform=panel.transAxes,
            ha="center",
            va=align,
            bbox=box,
            fontsize="small",
        )
