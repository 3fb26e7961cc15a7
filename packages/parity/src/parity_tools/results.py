"""Turn a sweep's runs into a paper's table and figures: a row per setting, never two sweeps mixed.

    parity results
    parity results --sweep runs/sweeps/<id>.json
    parity results --each

By default the latest sweep (runs/sweeps/*.json, written by parity sweep); `--sweep` one or
more of them, `--each` every one: a table per sweep, in results/<sweep id>/. A setting is what
decides a run's result: its arguments without the seed (and its folder and TensorBoard), its
number of processes (world size), and its code (git commit, "+dirty" and a hash of the diff when
tracked files had uncommitted changes). A row pools the finished runs of one setting of one
sweep: n, mean ± sample standard deviation (n - 1) of the final metrics, the seeds (a repeated
seed is flagged: the same run twice, not two samples), and the runs that did not finish:
"started" (failed, stopped, or still running: read its log) or "never started" (cancelled).
Above the table: the sweep, what its rows pooled, and warnings for uncommitted or mixed code.

Writes table.md, table.csv (mean and std in columns of their own), table.tex (a booktabs
tabular for `\\input`, mean ± std and n), curves.pdf/.png (loss per epoch, training and
held-out: mean over seeds, band from min to max) and final.pdf/.png (held-out accuracy per
setting, each run a dot, n, epochs and data size stated), sized for a column of a paper.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

NOT_A_SETTING = ("seed", "output", "resume", "tensorboard")
METRICS = {"loss": "loss", "held_out_loss": "held-out loss", "held_out_accuracy": "held-out acc."}
COLUMN_WIDTH = 3.4  # inches: one column of a two-column paper


@dataclass
class Row:
    """The runs of one setting of one sweep."""

    setting: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)  # finished runs' metrics.json
    unfinished: list[str] = field(default_factory=list)  # "runs/12_3 (never started)"

    def finals(self, metric: str) -> pd.Series:
        return pd.Series([record["final"][metric] for record in self.records], dtype=float)

    def seeds(self) -> str:
        seeds = [record["arguments"]["seed"] for record in self.records]
        repeated = sorted(seed for seed, count in Counter(seeds).items() if count > 1)
        flag = f" (repeated: {', '.join(map(str, repeated))})" if repeated else ""
        return " ".join(map(str, seeds)) + flag


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="where the runs are")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--sweep", type=Path, action="append", help="this sweep (runs/sweeps/<id>.json; repeat)"
    )
    choice.add_argument("--each", action="store_true", help="every sweep, a table each")
    parser.add_argument("--output", type=Path, default=Path("results"), help="(default: results)")
    return parser.parse_args(argv)


def read_json(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return result


def code(record: dict[str, Any]) -> str:
    """The code a run ran: its commit, with "+dirty:" and the diff's hash if it was changed."""
    made_by = record["made_by"]
    if not made_by["git_commit"]:
        return "unknown (no git)"
    dirty = f"+dirty:{made_by['git_diff_sha256'][:8]}" if made_by["git_dirty"] else ""
    return made_by["git_commit"][:10] + dirty


def setting_of(arguments: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in sorted(arguments.items()) if key not in NOT_A_SETTING}


def without_made_by(setting: dict[str, Any]) -> dict[str, Any]:
    """A setting's arguments alone: all a run that did not finish has."""
    return {key: value for key, value in setting.items() if key not in ("world_size", "code")}


def collect(listing: dict[str, Any]) -> list[Row]:
    """The sweep's runs by setting; a run that did not finish joins its arguments' first row."""
    rows: dict[str, Row] = {}
    unfinished: list[tuple[dict[str, Any], str]] = []
    for run in listing["runs"]:
        folder = Path(run.get("output") or "")
        if run.get("output") and (folder / "metrics.json").is_file():
            record = read_json(folder / "metrics.json")
            made = {"world_size": record["made_by"]["world_size"], "code": code(record)}
            setting = {**setting_of(record["arguments"]), **made}
            rows.setdefault(json.dumps(setting), Row(setting)).records.append(record)
        else:
            state = "started" if run.get("output") and folder.exists() else "never started"
            unfinished.append((setting_of(run["arguments"]), f"{run.get('output')} ({state})"))
    for arguments, name in unfinished:
        same = [row for row in rows.values() if without_made_by(row.setting) == arguments]
        unset = {**arguments, "world_size": None, "code": None}
        row = same[0] if same else rows.setdefault(json.dumps(unset), Row(unset))
        row.unfinished.append(name)
    return list(rows.values())


def varying(rows: list[Row]) -> tuple[list[str], dict[str, Any]]:
    """The setting's keys whose values differ between rows, and the others with their value."""
    keys = list(dict.fromkeys(key for row in rows for key in row.setting))
    differ = [k for k in keys if len({json.dumps(row.setting.get(k)) for row in rows}) > 1]
    return differ, {key: rows[0].setting[key] for key in keys if key not in differ}


def table(rows: list[Row], keys: list[str]) -> pd.DataFrame:
    """One line per row: the varying keys, n, mean and std of each final metric, seeds."""
    lines = []
    for row in rows:
        line: dict[str, Any] = {key: row.setting.get(key) for key in keys}
        line["n"] = len(row.records)
        line["listed"] = len(row.records) + len(row.unfinished)
        for metric in METRICS:
            line[f"{metric}_mean"] = row.finals(metric).mean()
            line[f"{metric}_std"] = row.finals(metric).std()  # n - 1; NaN for one run
        line["seeds"] = row.seeds()
        line["not_finished"] = "; ".join(row.unfinished)
        lines.append(line)
    return pd.DataFrame(lines).sort_values(keys, kind="stable") if keys else pd.DataFrame(lines)


def cell(mean: float, std: float, digits: int, latex: bool = False) -> str:
    if pd.isna(mean):
        return "-"
    if pd.isna(std):
        return f"{mean:.{digits}f}"
    return (
        f"${mean:.{digits}f} \\pm {std:.{digits}f}$"
        if latex
        else f"{mean:.{digits}f} ± {std:.{digits}f}"
    )


def readable(frame: pd.DataFrame, keys: list[str], latex: bool = False) -> pd.DataFrame:
    """The table with a column per metric, mean ± std, and n of the runs listed."""
    shown = frame[keys].astype(str)
    shown["n"] = frame["n"].astype(str) + (
        " of " + frame["listed"].astype(str) if not latex else ""
    )
    for metric, name in METRICS.items():
        means, stds = frame[f"{metric}_mean"], frame[f"{metric}_std"]
        shown[name] = [
            cell(m, s, 3 if "acc" in metric else 4, latex) for m, s in zip(means, stds, strict=True)
        ]
    if not latex:
        shown["seeds"], shown["not finished"] = frame["seeds"], frame["not_finished"]
    return shown


def preamble(listing: dict[str, Any], rows: list[Row], same: dict[str, Any]) -> list[str]:
    """What the table pooled, and what to beware of."""
    finished = sum(len(row.records) for row in rows)
    listed = finished + sum(len(row.unfinished) for row in rows)
    shared = ", ".join(f"{key}={value}" for key, value in same.items()) or "none"
    lines = [
        f"Sweep {listing['sweep']} ({listing['id']}): {finished} of {listed} runs finished.",
        "Each row pools the finished runs of one setting (arguments but the seed, world size,",
        "code): mean ± sample standard deviation (n - 1) of final metrics; n: finished of listed.",
        f"Shared by every row: {shared}.",
    ]
    codes = {row.setting["code"] for row in rows if row.setting["code"]}
    if any("+dirty" in version for version in codes):
        lines.append(
            "WARNING: runs with uncommitted changes (+dirty): commit before runs you report."
        )
    if len(codes) > 1:
        lines.append(f"WARNING: {len(codes)} versions of the code: compare rows of one code only.")
    if any("repeated" in row.seeds() for row in rows):
        lines.append("WARNING: a seed repeats in a row: the same run twice, not two samples.")
    return lines


def figures(folder: Path, rows: list[Row], keys: list[str], same: dict[str, Any]) -> None:
    """Learning curves, and the held-out accuracy per setting, as PDF and PNG."""
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 7, "axes.titlesize": 7, "legend.fontsize": 6})
    done = [row for row in rows if row.records]
    labels = [", ".join(f"{k}={row.setting[k]}" for k in keys) or "all runs" for row in done]
    size = (COLUMN_WIDTH, 1.9)
    figure, axes = plt.subplots(1, 2, figsize=size, sharey=True, layout="constrained")
    for index, (row, label) in enumerate(zip(done, labels, strict=True)):
        color = f"C{index % 10}"  # matplotlib's colour cycle
        for ax, metric in zip(axes, ("loss", "held_out_loss"), strict=True):
            curves = pd.DataFrame([record["history"][metric] for record in row.records])
            epochs = curves.columns
            ax.plot(epochs, curves.mean(), color=color, label=f"{label} (n={len(row.records)})")
            ax.fill_between(epochs, curves.min(), curves.max(), color=color, alpha=0.25, lw=0)
    for ax, title in zip(axes, ("training", "held-out"), strict=True):
        ax.set(title=f"{title} loss", xlabel="epoch", yscale="log")
    axes[0].set_ylabel("cross-entropy")
    handles, names = axes[0].get_legend_handles_labels()
    title = "line: mean over seeds; band: min to max"
    figure.legend(handles, names, loc="outside lower center", ncols=2, title=title)
    save(figure, folder / "curves")

    figure, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.2), layout="constrained")
    for x, row in enumerate(done):
        values = row.finals("held_out_accuracy")
        spread = (pd.Series(range(len(values))) - (len(values) - 1) / 2) * 0.08  # no dot hides one
        ax.plot(x + spread, values, "o", ms=3, color="tab:blue", alpha=0.7)
        ax.hlines(values.mean(), x - 0.25, x + 0.25, color="black")
        ax.vlines(x, values.min(), values.max(), color="black", lw=0.8)
    ax.set_xticks(range(len(done)), labels, rotation=15, ha="right")
    ax.set_ylabel("held-out accuracy")
    ns = sorted({len(row.records) for row in done})
    sizes = {key: same.get(key, "varies") for key in ("epochs", "samples")}
    held_out = {record.get("data", {}).get("held_out") for row in done for record in row.records}
    ax.set_title(
        f"n = {'-'.join(map(str, ns))} runs per setting, {sizes['epochs']} epochs\n"
        f"{sizes['samples']} training, {'/'.join(map(str, held_out))} held-out samples\n"
        "dots: runs; line: mean; bar: min to max"
    )
    save(figure, folder / "final")


def save(figure: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    for suffix in (".pdf", ".png"):
        figure.savefig(path.with_suffix(suffix), dpi=300)
    plt.close(figure)


def report(listing_path: Path, output: Path) -> Path:
    """The table and figures of one sweep, in output/<sweep id>/."""
    listing = read_json(listing_path)
    rows = collect(listing)
    keys, same = varying(rows)
    folder = output / listing["id"]
    folder.mkdir(parents=True, exist_ok=True)
    frame = table(rows, keys)
    frame.to_csv(folder / "table.csv", index=False)
    notes = preamble(listing, rows, same)
    markdown = readable(frame, keys).to_markdown(index=False)
    (folder / "table.md").write_text("\n".join([*notes, "", markdown, ""]), encoding="utf-8")
    latex = readable(frame, keys, latex=True).style.hide(axis="index")
    latex = latex.format(escape="latex", subset=keys).format_index(escape="latex", axis=1)
    (folder / "table.tex").write_text(latex.to_latex(hrules=True), encoding="utf-8")
    if any(row.records for row in rows):
        figures(folder, rows, keys, same)
    print("\n".join([*notes, "", markdown]))
    print(f"wrote {folder}/: table.md, .csv, .tex; curves and final, .pdf and .png")
    return folder


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    listings = sorted((args.runs / "sweeps").glob("*.json"), key=lambda p: read_json(p)["created"])
    if not (args.sweep or listings):
        sweeps = args.runs / "sweeps"
        sys.exit(f"parity results: no sweep in {sweeps}/: run one, `parity sweep run FILE`")
    for listing in args.sweep or (listings if args.each else listings[-1:]):
        report(listing, args.output)
