"""Collect the runs under runs/ into one table row per setting, and a plot: a paper's table.

    nox -s results                                     # every run under runs/
    nox -s results -- --sweep runs/sweeps/example-20250101-120000.json
    python scripts/results.py --help                   # the same, in an environment you installed

A setting is a run's arguments (its metrics.json's "arguments") without its seed and its folder:
runs that differ only by `--seed` repeat one setting. Each row gives the settings' arguments that
vary across the table, how many of its runs finished, the mean and sample standard deviation
(n - 1) of their final loss and accuracy, their seeds, and the runs that did not finish: a run of
a sweep (runs/sweeps/*.json, written by scripts/sweep.py) whose metrics.json is missing, either
started (failed, stopped, or still running: see its log) or never started.

Writes results/results.md, results/results.csv, and results/results.png and .pdf: the final loss
per setting, each run a dot, the mean with a bar of one standard deviation either side.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NOT_A_SETTING = ("seed", "output", "resume")
STATS = ("mean", "std")
Setting = tuple[tuple[str, Any], ...]


@dataclass
class Row:
    """The runs of one setting."""

    setting: Setting
    records: list[dict[str, Any]] = field(default_factory=list)  # finished runs' metrics.json
    unfinished: list[str] = field(default_factory=list)  # "runs/12_3 (never started)"

    def values(self, key: str) -> list[float]:
        return [record[key] for record in self.records if record.get(key) is not None]


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="where the runs are")
    parser.add_argument(
        "--sweep",
        type=Path,
        action="append",
        help="only this sweep's runs (runs/sweeps/<id>.json; repeat for several)",
    )
    parser.add_argument("--output", type=Path, default=Path("results"), help="(default: results)")
    return parser.parse_args(argv)


def setting_of(arguments: dict[str, Any]) -> Setting:
    return tuple(sorted((k, v) for k, v in arguments.items() if k not in NOT_A_SETTING))


def read_json(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return result


def collect(runs: Path, sweeps: list[Path] | None) -> list[Row]:
    """Every finished run (or only the sweeps' runs), and the sweeps' runs that did not finish."""
    listed: dict[Path, dict[str, Any]] = {}  # a sweep's run folder -> its arguments
    for listing in sweeps if sweeps is not None else sorted((runs / "sweeps").glob("*.json")):
        for run in read_json(listing)["runs"]:
            if run.get("output"):  # unset: the sweep was never submitted
                listed[Path(run["output"]).resolve()] = run["arguments"]
    folders = set(listed)
    if sweeps is None:
        folders |= {path.parent.resolve() for path in runs.rglob("metrics.json")}
    rows: dict[Setting, Row] = {}
    for folder in sorted(folders):
        name = str(folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder)
        if (folder / "metrics.json").is_file():
            record = read_json(folder / "metrics.json")
            setting = setting_of(record["arguments"])
            rows.setdefault(setting, Row(setting)).records.append(record)
        else:
            setting = setting_of(listed[folder])
            state = "started, not finished" if folder.exists() else "never started"
            rows.setdefault(setting, Row(setting)).unfinished.append(f"{name} ({state})")
    return list(rows.values())


def varying(rows: list[Row]) -> tuple[list[str], dict[str, Any]]:
    """The arguments whose values differ between rows, and the others with their one value."""
    values: dict[str, set[str]] = {}
    for row in rows:
        for key, value in row.setting:
            values.setdefault(key, set()).add(json.dumps(value))
    keys = sorted(values)
    everywhere = [key for key in keys if all(key in dict(row.setting) for row in rows)]
    differ = [key for key in keys if len(values[key]) > 1 or key not in everywhere]
    same = {key: dict(rows[0].setting)[key] for key in keys if key not in differ}
    return differ, same


def mean_std(values: list[float]) -> tuple[float | None, float | None]:
    mean = statistics.fmean(values) if values else None
    return mean, statistics.stdev(values) if len(values) > 1 else None


def cell(values: list[float], digits: int) -> str:
    mean, std = mean_std(values)
    if mean is None:
        return "-"
    return f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "")


def order(value: Any) -> tuple[int, Any]:
    """Numbers in numeric order, before anything else in text order."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return (0, value) if number else (1, str(value))


def label(row: Row, keys: list[str]) -> str:
    setting = dict(row.setting)
    return ", ".join(f"{key}={setting.get(key)}" for key in keys) or "all runs"


def markdown(rows: list[Row], keys: list[str], same: dict[str, Any]) -> str:
    header = [*keys, "runs", "final loss", "final accuracy", "seeds", "not finished"]
    shared = ", ".join(f"{key}={value}" for key, value in same.items()) or "none"
    lines = [
        f"Settings shared by every row: {shared}.",
        "Mean ± sample standard deviation (n - 1) over the finished runs;",
        "runs: finished of listed.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + " --- |" * len(header),
    ]
    for row in rows:
        setting = dict(row.setting)
        listed = len(row.records) + len(row.unfinished)
        seeds = " ".join(str(record["seed"]) for record in row.records)
        cells = [*(str(setting.get(key)) for key in keys), f"{len(row.records)} of {listed}"]
        cells += [cell(row.values("final_loss"), 4), cell(row.values("final_accuracy"), 3)]
        cells += [seeds, "; ".join(row.unfinished)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, rows: list[Row], keys: list[str]) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        columns = [f"{name}_{kind}" for name in ("final_loss", "final_accuracy") for kind in STATS]
        writer.writerow([*keys, "runs_finished", "runs", *columns, "seeds", "not_finished"])
        for row in rows:
            setting = dict(row.setting)
            numbers = [*mean_std(row.values("final_loss")), *mean_std(row.values("final_accuracy"))]
            writer.writerow(
                [
                    *(setting.get(key) for key in keys),
                    len(row.records),
                    len(row.records) + len(row.unfinished),
                    *("" if number is None else repr(number) for number in numbers),
                    " ".join(str(record["seed"]) for record in row.records),
                    "; ".join(row.unfinished),
                ]
            )


def plot(path: Path, rows: list[Row], keys: list[str]) -> None:
    """Final loss per setting: each finished run a dot, the mean and one standard deviation."""
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(max(4.0, 1.2 * len(rows) + 2), 3.5), layout="constrained")
    for position, row in enumerate(rows):
        losses = row.values("final_loss")
        axes.plot([position] * len(losses), losses, "o", color="tab:blue", alpha=0.5)
        mean, std = mean_std(losses)
        if mean is not None:
            axes.errorbar(position, mean, yerr=std or 0, fmt="_", color="black", capsize=6, ms=18)
    axes.set_xticks(range(len(rows)), [label(row, keys) for row in rows], rotation=20, ha="right")
    axes.set_xlim(-0.5, len(rows) - 0.5)
    axes.set_ylabel("final loss")
    axes.set_title("Dots: runs; bar: mean ± one standard deviation", fontsize="medium")
    for suffix in (".png", ".pdf"):
        figure.savefig(path.with_suffix(suffix), dpi=200)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    rows = collect(args.runs, args.sweep)
    if not rows:
        msg = f"results.py: no metrics.json under {args.runs}/ and no sweep's list of runs there"
        raise SystemExit(msg)
    keys, same = varying(rows)
    rows.sort(key=lambda row: [order(dict(row.setting).get(key)) for key in keys])
    args.output.mkdir(parents=True, exist_ok=True)
    table = markdown(rows, keys, same)
    (args.output / "results.md").write_text(table, encoding="utf-8")
    write_csv(args.output / "results.csv", rows, keys)
    plot(args.output / "results.png", rows, keys)
    print(table)
    print(f"wrote {args.output}/results.md, results.csv, results.png and results.pdf")


if __name__ == "__main__":
    main()
