"""The results of `bench.py`: a table in the terminal and, in its output folder, results.json,
results.md and results.png; against an earlier results.json, what got slower or faster."""

from __future__ import annotations

import json
import math
import os
import platform
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import torch

Row = dict[str, Any]
KEY = ("function", "backend", "device", "mode", "size")
COLUMNS = [
    "function",
    "backend",
    "device",
    "mode",
    "size",
    "shapes",
    "median",
    "IQR",
    "first call",
    "speedup",
    "note",
]
# The fewest samples whose quartiles mean something; a row with fewer shows no IQR.
MIN_SAMPLES = 5
UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6))
PANEL_INCHES, DPI = (4.8, 3.6), 100
SIZE_AXIS = "input size: elements in the largest operand"
HOW_TO_READ = f"""\
`size` counts the elements in the largest operand (`shapes`: every operand's). `median` is the
time of one call once warmed up (half the samples were faster), `IQR` the spread of the middle
half of the samples (none below {MIN_SAMPLES} samples), `first call` the very first call's time,
which for a compiled mode includes compiling. `speedup` is the NumPy reference's median over the
row's: above 1, faster than the reference. Sizes grow until a call would take longer than the
time budget or need more memory than the memory budget: rows marked `skipped` say which."""


def duration(seconds: float) -> str:
    """`seconds` in a readable unit, to 3 significant digits: 12.3 us, 130 us, 1.00 ms."""
    value, unit = next(
        ((seconds / scale, unit) for unit, scale in UNITS if seconds >= scale),
        (seconds / 1e-9, "ns"),
    )
    return f"{value:.{max(0, 2 - math.floor(math.log10(value))) if value > 0 else 0}f} {unit}"


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    versions = {}
    for name in ("numpy", "torch", "jax"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            continue
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": gpu,
        "python": platform.python_version(),
        "versions": versions,
    }


def cpu_model() -> str:
    """The processor's name (Linux: /proc/cpuinfo), else what the platform module knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


def load(path: Path) -> dict[str, Any]:
    """An earlier results.json; ValueError with the reason if it is not one."""
    try:
        results: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        msg = f"--compare {path}: cannot read it ({error})"
        raise ValueError(msg) from None
    if isinstance(results, dict) and isinstance(results.get("rows"), list):
        return results
    msg = f"--compare {path}: not a results.json written by scripts/bench.py"
    raise ValueError(msg)


# --- Tables ---------------------------------------------------------------------------------


def enough_samples(row: Row) -> bool:
    return bool(row.get("samples", MIN_SAMPLES) >= MIN_SAMPLES)


def cells(row: Row) -> list[str]:
    """A measured row's cells; a skipped size's (it has a `reason`) say so."""
    where = [row["function"], row["backend"], row["device"], row["mode"], f"{row['size']:,}"]
    if "reason" in row:
        return [*where, "", "skipped", "", "", "", row["reason"]]
    compiled = row["mode"] == "compiled"
    spread = duration(row["q3_s"] - row["q1_s"]) if enough_samples(row) else "-"
    few = f"{row.get('samples')} of the {MIN_SAMPLES} samples an IQR needs"
    return [
        *where,
        ", ".join("x".join(map(str, shape)) or "scalar" for shape in row.get("shapes", [])),
        duration(row["median_s"]),
        spread,
        duration(row["first_call_s"]) + (" (compiles)" if compiled else ""),
        f"{row['speedup']:#.3g}x",
        "" if enough_samples(row) else few,
    ]


def table_rows(results: dict[str, Any]) -> list[Row]:
    """The measured rows and the skipped sizes, by function and size."""
    skipped = results.get("skipped_sizes", [])
    return sorted([*results["rows"], *skipped], key=lambda row: str(row["function"]))


def terminal_table(rows: list[Row]) -> str:
    lines = [COLUMNS, *(cells(row) for row in rows)]
    widths = [max(len(line[column]) for line in lines) for column in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in lines
    )


def markdown(results: dict[str, Any], notes: list[str]) -> str:
    """The whole report: how it was run, how to read it, the table, the plot, then `notes`."""
    header = "| " + " | ".join(COLUMNS) + " |\n|" + " --- |" * len(COLUMNS)
    table = "\n".join("| " + " | ".join(cells(row)) + " |" for row in table_rows(results))
    found = results["machine"]
    versions = ", ".join(f"{name} {number}" for name, number in found["versions"].items())
    lines = [
        "# Benchmark",
        "",
        (
            f"`{results['command']}`: profile {results['profile']}, {results['dtype']}, "
            f"{found['date']}, {found['cpu']}, {found['cpus']} CPUs ({found['torch_threads']} "
            "PyTorch threads), "
            f"GPU: {found['gpu'] or 'none'}, {versions}. Budgets of one call: "
            f"{duration(results['budget']['seconds'])}, {results['budget']['bytes'] / 1e6:,.0f} MB."
        ),
        "",
        HOW_TO_READ,
        "",
        header,
        table,
        "",
    ]
    if results["plot"] is not None:
        lines += [f"![Median time per call against input size]({results['plot']['file']})", ""]
    return "\n".join(lines + notes) + "\n"


# --- Plot -----------------------------------------------------------------------------------


def plot(rows: list[Row], path: Path, title: str) -> tuple[int, int] | None:
    """Per function, two panels: median time against size (log-log; the band: the IQR) and
    the speedup over the NumPy reference, a line per backend, device and mode; `title` on top.
    The PNG's width and height, or None when matplotlib is not installed."""
    try:
        import matplotlib as mpl
    except ModuleNotFoundError:
        return None

    mpl.use("Agg")  # files only, no window
    import matplotlib.pyplot as plt

    names = sorted({row["function"] for row in rows})
    places = sorted({f"{row['backend']} {row['device']}" for row in rows})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    columns = min(len(names), 3)
    shape = (2 * math.ceil(len(names) / columns), columns)  # time above speedup
    size = (PANEL_INCHES[0] * shape[1], PANEL_INCHES[1] * shape[0])
    figure, axes = plt.subplots(*shape, figsize=size, dpi=DPI, squeeze=False, layout="constrained")
    for index, name in enumerate(names):
        times, speedups = (axes[2 * (index // columns) + half, index % columns] for half in (0, 1))
        lines: dict[tuple[str, str], list[Row]] = {}
        for row in rows:
            if row["function"] == name:
                lines.setdefault((f"{row['backend']} {row['device']}", row["mode"]), []).append(row)
        for (where, mode), points in lines.items():
            points.sort(key=lambda row: row["size"])
            x = [row["size"] for row in points]
            # A colour per backend and device, the same in every panel; compiled dashed.
            style = {"color": colors[places.index(where) % len(colors)], "marker": "o"}
            style["linestyle"] = "--" if mode == "compiled" else "-"
            times.plot(x, [row["median_s"] for row in points], label=f"{where} {mode}", **style)
            low, high = [row["q1_s"] for row in points], [row["q3_s"] for row in points]
            times.fill_between(x, low, high, color=style["color"], alpha=0.2)
            if not where.startswith("numpy "):  # the reference; its shared implementation is
                speedups.plot(
                    x, [row["speedup"] for row in points], label=f"{where} {mode}", **style
                )
        speedups.axhline(1.0, color="black", linewidth=1, label="NumPy reference")
        times.set(xscale="log", yscale="log", title=name, ylabel="median time per call (s)")
        speedups.set(xscale="log", yscale="log", xlabel=SIZE_AXIS)
        speedups.set(title=f"{name}: speedup over NumPy", ylabel="NumPy's median / this one's")
        for panel in (times, speedups):
            panel.grid(visible=True, which="both", alpha=0.3)
            panel.legend(fontsize="small")
    for panel in axes.flat:
        if not panel.has_data():
            panel.set_axis_off()
    figure.suptitle(title)
    figure.savefig(path, dpi=DPI)  # no bbox_inches="tight": the size stays as stated
    plt.close(figure)
    return round(size[0] * DPI), round(size[1] * DPI)


def plot_title(results: dict[str, Any]) -> str:
    """What the numbers were measured with: dtype, devices, versions, machine."""
    found = results["machine"]
    devices = sorted({row["device"] for row in results["rows"]})
    gpu = f" ({found['gpu']})" if found["gpu"] and "cuda" in devices else ""
    versions = ", ".join(f"{name} {number}" for name, number in found["versions"].items())
    return (
        f"{results['dtype']} on {', '.join(devices)}{gpu}; {versions}\n"
        f"{found['cpu']}, {found['cpus']} CPUs ({found['torch_threads']} PyTorch threads), "
        f"{found['date'][:10]}"
    )


# --- Comparison -----------------------------------------------------------------------------


def compare(old: list[Row], new: list[Row], threshold: float) -> tuple[list[str], int]:
    """Each row whose median moved by more than `threshold` (a fraction) from the same row of
    `old`, with the two interquartile ranges apart (so that noise alone does not count; where
    either row has too few samples for one, the ratio alone, and the change says so); and how
    many rows the two runs have in common."""
    before = {tuple(row[key] for key in KEY): row for row in old}
    changes, common = [], 0
    for row in new:
        previous = before.get(tuple(row[key] for key in KEY))
        if previous is None:
            continue
        common += 1
        ratio = row["median_s"] / previous["median_s"]
        spread = enough_samples(row) and enough_samples(previous)
        slower = ratio > 1 + threshold and (row["q1_s"] > previous["q3_s"] or not spread)
        faster = ratio < 1 / (1 + threshold) and (row["q3_s"] < previous["q1_s"] or not spread)
        if slower or faster:
            what = (
                f"{row['function']} {row['backend']} {row['device']} {row['mode']} "
                f"size {row['size']:,}"
            )
            times = f"{duration(previous['median_s'])} -> {duration(row['median_s'])}"
            few = "" if spread else f"; too few samples (under {MIN_SAMPLES}) to compare IQRs"
            changes.append(
                f"{what}: {'slower' if slower else 'faster'}, {ratio:.2f}x the time ({times}{few})"
            )
    return changes, common


def write(
    results: dict[str, Any], folder: Path, old: dict[str, Any] | None, threshold: float
) -> None:
    """Print the table (and the changes against `old`); write results.json, .md and .png."""
    folder.mkdir(parents=True, exist_ok=True)
    title = plot_title(results)
    size = plot(results["rows"], folder / "results.png", title)
    stated = None
    if size is not None:
        stated = {"file": "results.png", "width": size[0], "height": size[1], "title": title}
    results = {**results, "plot": stated}
    notes = [f"{name} left out: {reason}" for name, reason in results["skipped"].items()]
    if results["skipped_sizes"]:
        notes.append(
            f"Skipped for the budgets: {len(results['skipped_sizes'])} (see the table). Raise "
            "them with --time-budget and --memory-budget, or choose the sizes: BENCHMARK_SIZES "
            "in the function's test module."
        )
    if size is None:
        notes.append("No plot: matplotlib is not installed (pip install matplotlib).")
    if old is not None:
        changes, common = compare(old["rows"], results["rows"], threshold)
        results["comparison"] = {"threshold": threshold, "common_rows": common, "changes": changes}
        notes += ["", f"Changes against the earlier run, of more than {threshold:.0%}:"]
        notes += changes or [
            f"none in the {common} rows both runs have" if common else "no rows in common"
        ]
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (folder / "results.md").write_text(markdown(results, notes), encoding="utf-8")
    print("\n".join([terminal_table(table_rows(results)), "", *notes]).rstrip())
    files = "results.md, results.json" + (f", results.png ({size[0]}x{size[1]} px)" if size else "")
    print(f"\nWritten to {folder}: {files}")
