"""A researcher's inner loop in a generated repo, and how often correct code fails its tests.

inner-loop  `nox -s tests` in a generated repo: a first run (a new environment, torch and the
            project installed), the same command again with nothing changed, after an edit
            of a PyTorch port (the project alone is reinstalled), and after a change of
            pyproject.toml (everything is installed again into the kept environment)
seeds       the test of an algorithm scaffolded with scripts/new_algorithm.py (attention,
            q k v and a scale) and written correctly, under many hypothesis seeds: how many
            seeds fail (the tolerances are right when none does)
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import repos
from benchmarks.timing import timed
from tests.render import BIN, Combination, commit_all
from tests.scaffolded import failing_seeds, implement, scaffold, source
from tests.torch_index import torch_index_url

SPLIT_JAX = Combination("split", jax=True)
NOX: list[str | Path] = [BIN / "nox", "-s", "tests", "--", "-q", "-p", "no:cacheprovider"]
# What each run of the inner loop changes first, and what nox must then say it installs.
STEPS = [
    ("first run", None, "pip install"),
    ("again, nothing changed", None, "nothing to install"),
    ("after editing a PyTorch port", "port", "install . --no-deps"),
    ("after changing pyproject.toml", "pyproject", "pip install"),
]


def inner_loop(template: Path, workdir: Path, combination: Combination) -> dict[str, Any]:
    """Seconds of each run of `nox -s tests` in STEPS, in one rendered repo."""
    repo = repos.render(template, workdir, combination)
    commit_all(repo, "generated", init=True)
    env = {"TORCH_INDEX_URL": torch_index_url()}
    runs = []
    for what, change, expected in STEPS:
        if change == "port":
            port = source(repo, combination, "softmax", "pytorch")
            port.write_text(port.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        elif change == "pyproject":
            pyproject = repo / "pyproject.toml"
            pyproject.write_text(pyproject.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
        seconds, result = timed(NOX, cwd=repo, env=env)
        output = result.stdout + result.stderr
        summary = re.findall(r"^\d+ passed.*$", output, re.MULTILINE)
        runs.append({"run": what, "seconds": seconds, "installed_as_expected": expected in output, "tests": summary})
    return {"combination": combination.id, "runs": runs}


def seeds(template: Path, workdir: Path, count: int) -> dict[str, Any]:
    """Failures of the scaffolded attention test, written correctly, over `count` seeds."""
    repo = repos.render(template, workdir, SPLIT_JAX)
    scaffold(repo, "attention")
    implement(repo, SPLIT_JAX, "attention")
    start = time.perf_counter()
    failed, _ = failing_seeds(repo, count)
    seconds = time.perf_counter() - start
    return {
        "combination": SPLIT_JAX.id,
        "seeds": count,
        "failed": len(failed),
        "failed_seeds": failed,
        "seconds": seconds,
    }


def markdown(results: dict[str, Any]) -> str:
    """The sections of this module in `results`, as Markdown (empty when there are none)."""
    lines = []
    if "inner_loop" in results:
        loop = results["inner_loop"]
        lines += [f"## Inner loop: `nox -s tests` in a generated repo ({loop['combination']})", ""]
        lines += ["| Run | Seconds | Installed only what changed | Tests |", "|---|---:|---|---|"]
        for entry in loop["runs"]:
            installed = "yes" if entry["installed_as_expected"] else "NO"
            lines.append(f"| {entry['run']} | {entry['seconds']:.1f} | {installed} | {'; '.join(entry['tests'])} |")
        lines.append("")
    if "seeds" in results:
        found = results["seeds"]
        lines += [
            "## Tolerances: a scaffolded algorithm, written correctly, under many seeds",
            "",
            f"tests/test_attention.py (values, edge shapes and gradients, {found['combination']}): "
            f"{found['failed']} of {found['seeds']} hypothesis seeds failed ({found['seconds']:.0f} s).",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    """``python -m benchmarks.inner_loop [SEEDS]``: both figures, without the other sections."""
    with tempfile.TemporaryDirectory(prefix="inner-loop-") as scratch:
        template = repos.template_snapshot(Path(scratch) / "template")
        count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
        figures = {
            "inner_loop": inner_loop(template, Path(scratch) / "loop", Combination("single", jax=False)),
            "seeds": seeds(template, Path(scratch) / "seeds", count),
        }
    print(json.dumps(figures, indent=2))
    print(markdown(figures))


if __name__ == "__main__":
    main()
