"""The results of `bench.py`: a table in the terminal and, in its output folder, results.json,
results.md, the plot as results.png and results.pdf, and the roofline as roofline.png and
roofline.pdf (`roofline_plot.py`); each says what the numbers were measured with (threads,
processor, load average, versions) and warns where the machine was busy."""

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

from . import figures, roofline_plot
from .roofline import uncounted_note

Row = dict[str, Any]
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
    "GB/s",
    "GFLOP/s",
    "of peak",
    "bound",
    "note",
]
# The fewest samples whose quartiles mean something; a row with fewer shows no IQR.
MIN_SAMPLES = 5
# An IQR over this fraction of the median means a noisy measurement (torch.utils.benchmark's
# own threshold for its "system fluctuation" warning).
NOISY = 0.1
UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6))
SIZE_AXIS = "input size: elements in the largest operand"
HOW_TO_READ = f"""\
`size` counts the elements in the largest operand (`shapes`: every operand's). `median` is the
time of one call once warmed up (half the samples were faster), `IQR` the spread of the middle
half of the samples (none below {MIN_SAMPLES} samples; `noisy` above {NOISY:.0%} of the median),
`first call` the very first call's time,
which for a compiled mode includes compiling. `speedup` is the NumPy reference's median over the
row's: above 1, faster than the reference. Sizes grow until a call would take longer than the
time budget or need more memory than the memory budget: rows marked `skipped` say which.

The roofline: `GB/s` is the least a call moves (its operands and its result, once each) over its
median; `GFLOP/s` its floating-point operations over its median, where they are known (counted by
PyTorch in matrix products, or declared by `benchmark_flops(size)` in the test module; `-`: not
known). The peaks are measured in this run, on the same device, dtype and threads: the bandwidth
by copies, the operations by a matrix product (`peaks` in results.json). `of peak` is the call's
floor (its bytes at the bandwidth, or its operations at the operation rate, whichever takes
longer) over its median: 100% is as fast as the machine allows; `bound` names the floor that
decides, `memory` where the operations are not known. Each row is read against the best copy of
about its own size or larger, so that data in a cache meet the cache's bandwidth, not memory's; a
row still above it is shown at 100% and the note says by how much. Small sizes show the per-call
overhead as a low fraction. The roofline plot places each row: operations per byte across,
operations per second up; the slanted line is the bandwidth, the flat one the operation rate."""


def duration(seconds: float) -> str:
    """`seconds` in a readable unit, to 3 significant digits: 12.3 us, 130 us, 1.00 ms."""
    value, unit = next(
        ((seconds / scale, unit) for unit, scale in UNITS if seconds >= scale),
        (seconds / 1e-9, "ns"),
    )
    return f"{value:.{max(0, 2 - math.floor(math.log10(value))) if value > 0 else 0}f} {unit}"


def giga(rate: float) -> str:
    """A rate per second in billions, to 3 significant digits: 0.955, 27.7, 104, 1,520."""
    billions = rate / 1e9
    return f"{billions:,.0f}" if billions >= 100 else f"{billions:.3g}"


def machine(load_before: float) -> dict[str, Any]:
    """What the numbers were measured on and with; `load_before`: the load average at the start."""
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
        "usable_cpus": usable_cpus(),
        "torch_threads": torch.get_num_threads(),
        "load_average": [load_before, load_average()],
        "gpu": gpu,
        "python": platform.python_version(),
        "versions": versions,
    }


def usable_cpus() -> int:
    """The CPUs this process may run on (a Slurm job's share, not the whole node's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def load_average() -> float:
    """Processes running or waiting for a CPU, averaged over the last minute (0 where the system
    does not say, as on Windows)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def busy(load: float, threads: int, cpus: int) -> str | None:
    """Why the machine is too busy for honest timings, or None: other programs' load plus this
    run's threads exceed the CPUs, so this run waits for its turn."""
    if load + threads <= cpus:
        return None
    why = "this run shares the CPUs with other programs: its times may be slower and noisier"
    if threads > 1:
        why = (
            f"a call split over {threads} threads waits for the slowest, which other programs "
            "hold up: its times may be many times slower (--threads 1 is steadier)"
        )
    return (
        f"the machine is busy: load average {load:.1f} (last minute) on "
        f"{count(cpus, 'usable CPU')}, with {count(threads, 'PyTorch thread')} here; {why}. Run "
        "when it is quiet, or on a node of your own"
    )


def setting(found: dict[str, Any]) -> str:
    """The machine and its load, in a line: what the report, the plot and the terminal state."""
    start, end = found["load_average"]
    return (
        f"{found['cpu']}, {count(found['torch_threads'], 'PyTorch thread')} of "
        f"{count(found['usable_cpus'], 'usable CPU')}, load average {start:.1f} at the start "
        f"and {end:.1f} at the end"
    )


def count(number: int, thing: str) -> str:
    """`1 usable CPU`, `2 usable CPUs`."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


def cpu_model() -> str:
    """The processor's name (Linux: /proc/cpuinfo), else what the platform module knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


# --- Tables ---------------------------------------------------------------------------------


def enough_samples(row: Row) -> bool:
    return bool(row.get("samples", MIN_SAMPLES) >= MIN_SAMPLES)


def noisy(row: Row) -> bool:
    """Whether the row's IQR is wide for its median (where it has enough samples for one)."""
    return enough_samples(row) and row["q3_s"] - row["q1_s"] > NOISY * row["median_s"]


def cells(row: Row) -> list[str]:
    """A measured row's cells; a skipped size's (it has a `reason`) say so."""
    where = [row["function"], row["backend"], row["device"], row["mode"], f"{row['size']:,}"]
    if "reason" in row:
        return [*where, "", "skipped", "", "", "", "", "", "", "", row["reason"]]
    compiled = row["mode"] == "compiled"
    spread = duration(row["q3_s"] - row["q1_s"]) if enough_samples(row) else "-"
    note = f"{row.get('samples')} of the {MIN_SAMPLES} samples an IQR needs"
    if enough_samples(row):
        spread_share = (row["q3_s"] - row["q1_s"]) / row["median_s"]
        note = f"noisy: IQR {spread_share:.0%} of the median" if noisy(row) else ""
    if row["above_peak"] is not None:
        above = f"{row['above_peak']:.2f}x its ceiling, shown as 100%"
        note = f"{note}; {above}" if note else above
    flops_per_s = row["flops_per_s"]
    return [
        *where,
        ", ".join("x".join(map(str, shape)) or "scalar" for shape in row.get("shapes", [])),
        duration(row["median_s"]),
        spread,
        duration(row["first_call_s"]) + (" (compiles)" if compiled else ""),
        f"{row['speedup']:#.3g}x",
        giga(row["bytes_per_s"]),
        "-" if flops_per_s is None else giga(flops_per_s),
        f"{row['of_peak']:.1%}",
        row["bound"],
        note,
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
    code = results["git"]["commit"] or "no git commit"
    code = f"{code[:12]} with uncommitted changes" if results["git"]["dirty"] else code[:12]
    lines = [
        "# Benchmark",
        "",
        (
            f"`{results['command']}`: profile {results['profile']}, {results['dtype']}, "
            f"{found['date']}, code {code}; {setting(found)}; GPU: {found['gpu'] or 'none'}; "
            f"{versions}. Budgets of one call: {duration(results['budget']['seconds'])}, "
            f"{results['budget']['bytes'] / 1e6:,.0f} MB."
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
        lines += [
            f"The plot as PDF, for a paper: [{results['plot']['pdf']}]({results['plot']['pdf']})"
        ]
        lines += [""]
    if results["roofline_plot"] is not None:
        roofline = results["roofline_plot"]
        lines += [f"![Each row under the measured ceilings]({roofline['file']})", ""]
        lines += [f"The roofline as PDF: [{roofline['pdf']}]({roofline['pdf']})", ""]
    return "\n".join(lines + notes) + "\n"


# --- Plot -----------------------------------------------------------------------------------


def plot(rows: list[Row], path: Path, title: str) -> tuple[int, int] | None:
    """Per function, two panels: median time against size (log-log; the band: the IQR) and
    the speedup over the NumPy reference, a line per backend, device and mode; `title` on top.
    Written as PNG at `path` and as PDF beside it. The PNG's width and height, or None when
    matplotlib is not installed."""
    plt = figures.pyplot()
    if plt is None:
        return None
    names = sorted({row["function"] for row in rows})
    places = sorted({f"{row['backend']} {row['device']}" for row in rows})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    columns = min(len(names), 3)
    shape = (2 * math.ceil(len(names) / columns), columns)  # time above speedup
    size = (figures.PANEL_INCHES[0] * shape[1], figures.PANEL_INCHES[1] * shape[0])
    figure, axes = plt.subplots(
        *shape, figsize=size, dpi=figures.DPI, squeeze=False, layout="constrained"
    )
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
    pixels = figures.save(figure, path, title, size)
    plt.close(figure)
    return pixels


def plot_title(results: dict[str, Any]) -> str:
    """What the numbers were measured with: dtype, devices, versions, machine, threads, load."""
    found = results["machine"]
    devices = sorted({row["device"] for row in results["rows"]})
    gpu = f" ({found['gpu']})" if found["gpu"] and "cuda" in devices else ""
    versions = ", ".join(f"{name} {number}" for name, number in found["versions"].items())
    return (
        f"{results['dtype']} on {', '.join(devices)}{gpu}; {versions}; {found['date'][:10]}\n"
        f"{setting(found)}"
    )


# --- Files ---------------------------------------------------------------------------------


def write(results: dict[str, Any], folder: Path, comparison: list[str]) -> None:
    """Print the table and its notes, then `comparison` (lines about an earlier run); write
    results.json, results.md and the plot."""
    folder.mkdir(parents=True, exist_ok=True)
    title = plot_title(results)
    size = plot(results["rows"], folder / "results.png", title)
    stated: dict[str, Any] | None = None
    if size is not None:
        stated = {"file": "results.png", "pdf": "results.pdf", "title": title}
        stated |= {"width": size[0], "height": size[1]}
    roofline_size = roofline_plot.plot(
        results["rows"], results["peaks"], folder / "roofline.png", title
    )
    roofline: dict[str, Any] | None = None
    if roofline_size is not None:
        roofline = {"file": "roofline.png", "pdf": "roofline.pdf"}
        roofline |= {"width": roofline_size[0], "height": roofline_size[1]}
    results = {**results, "plot": stated, "roofline_plot": roofline}
    notes = [f"{name} left out: {reason}" for name, reason in results["skipped"].items()]
    if uncounted := uncounted_note(results["rows"]):
        notes.append(uncounted)
    if results["skipped_sizes"]:
        notes.append(
            f"Skipped for the budgets: {len(results['skipped_sizes'])} (see the table). Raise "
            "them with --time-budget and --memory-budget, or choose the sizes: BENCHMARK_SIZES "
            "in the function's test module."
        )
    noisy_rows = sum(noisy(row) for row in results["rows"])
    if noisy_rows:
        notes.append(
            f"Noisy: {noisy_rows} of {len(results['rows'])} rows have an IQR over {NOISY:.0%} of "
            "their median, so other programs disturbed them: close them, or run on a quiet "
            "machine or a node of your own, then run again."
        )
    found = results["machine"]
    start, end = found["load_average"]
    # Others' load: at the start, and at the end without this run's own threads.
    others = max(start, end - found["torch_threads"])
    if warning := busy(others, found["torch_threads"], found["usable_cpus"]):
        notes.append(f"Warning: {warning}.")
    if size is None:
        notes.append("No plot: matplotlib is not installed (pip install matplotlib).")
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    fenced = ["", "```text", *comparison, "```"] if comparison else []
    (folder / "results.md").write_text(markdown(results, notes + fenced), encoding="utf-8")
    print("\n".join([terminal_table(table_rows(results)), "", *notes, "", *comparison]).rstrip())
    files = "results.md, results.json"
    if size:
        files += f", results.png ({size[0]}x{size[1]} px), results.pdf"
    if roofline_size:
        files += f", roofline.png ({roofline_size[0]}x{roofline_size[1]} px), roofline.pdf"
    print(f"\nMeasured with {setting(found)}.\nWritten to {folder}: {files}")
