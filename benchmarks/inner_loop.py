"""A researcher's inner loop in a generated repo: `nox -s tests` in a generated repo, a first run (a
new environment, torch and the project installed), the same command again with nothing changed,
after an edit of a PyTorch port (the project alone is reinstalled), and after a change of
pyproject.toml (everything is installed again into the kept environment).

How often correct code fails its tests is benchmarks/zoo.py's measurement.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import repos
from benchmarks.timing import timed
from tests.render import BIN, Combination, commit_all
from tests.scaffolded import source
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
    return "\n".join(lines)


def main() -> None:
    """``python -m benchmarks.inner_loop``: this figure, without the other sections."""
    with tempfile.TemporaryDirectory(prefix="inner-loop-") as scratch:
        template = repos.template_snapshot(Path(scratch) / "template")
        figures = {"inner_loop": inner_loop(template, Path(scratch) / "loop", Combination("single", jax=False))}
    print(json.dumps(figures, indent=2))
    print(markdown(figures))


if __name__ == "__main__":
    main()
