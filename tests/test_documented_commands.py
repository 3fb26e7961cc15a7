"""Every command line that the generated repo documents for training, sweeps and results runs, as
written, in a test: the README's "Train" and "Sweeps and results" sections, the guide's pages on
them (docs/guide/training.md, sweeps.md), the docstrings of
`examples/train.py`, `examples/resumable.py` and of `parity sweep` and `parity results`, and the
header of `scripts/slurm/train.sbatch`. Placeholders (`<job id>`, `<id>`) take the real values.

In the README's order (one run, a torchrun run, the example sweep, its results), the table holds
one setting of one sweep per row: the lone run and the torchrun run stay out of the sweep's
rows. The Slurm commands run on the two-node test cluster (tests/slurm_cluster.py).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, TOOLS, Render, run
from tests.slurm_cluster import Cluster
from tests.training import LAYOUTS, assert_compiles, check_row, copy_of, environment, listing_of, record, results

TORCHRUN = "python -m torch.distributed.run --standalone --nproc_per_node=2 examples/train.py"
HERE = [
    "python examples/train.py --output runs/first",
    f"{TORCHRUN} --output runs/two",
    "python examples/train.py --output runs/first --resume --epochs 30",
    TORCHRUN,
    "parity sweep run sweeps/example.txt",
    "parity results",
    "parity results --sweep runs/sweeps/<id>.json",
    "parity results --each",
]
ON_CLUSTER = [
    "sbatch --nodes=1 --ntasks=2 scripts/slurm/train.sbatch",
    "sbatch --nodes=1 --ntasks=2 scripts/slurm/train.sbatch --output runs/<job id> --resume",
    "parity sweep submit sweeps/example.txt --max-parallel 2 -- --ntasks=2 --time=30",
    "parity results",
]
SCRIPTS = ["examples/train.py", "examples/resumable.py"]
TOOLS_DOCUMENTED = ["parity_tools.sweep", "parity_tools.results"]
SECTIONS = ["## Train: one process, several, a Slurm cluster", "## Sweeps and results"]
PAGES = ["docs/guide/training.md", "docs/guide/sweeps.md"]
COMMAND = re.compile(r"(python|parity|sbatch|nox|torchrun) ")


def documented(repo: Path) -> set[str]:
    """The command lines of the README's sections, the guide's pages, the scripts' docstrings and
    the sbatch header, without their trailing comments."""
    readme = (repo / "README.md").read_text(encoding="utf-8")
    texts = [readme.split(f"\n{section}\n")[1].split("\n## ")[0] for section in SECTIONS]
    texts += [(repo / page).read_text(encoding="utf-8") for page in PAGES]
    blocks = [block for text in texts for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL)]
    lines = [line for block in blocks for line in block.splitlines()]
    sources = [repo / script for script in SCRIPTS]
    sources += [Path(str(getattr(importlib.util.find_spec(module), "origin", ""))) for module in TOOLS_DOCUMENTED]
    for source in sources:
        docstring = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
        lines += [line for line in docstring.splitlines() if line.startswith("    ")]
    header = (repo / "scripts/slurm/train.sbatch").read_text(encoding="utf-8").split("\nset -euo")[0]
    lines += [line.removeprefix("#") for line in header.splitlines() if line.startswith("#   ")]
    commands = {line.split("  #")[0].strip() for line in lines}
    return {command for command in commands if COMMAND.match(command)}


def test_every_documented_command_runs_in_a_test(rendered: Render) -> None:
    repo = rendered("cookiecutter", COMBINATIONS[0])
    assert documented(repo) == {*HERE, *ON_CLUSTER}


def command_line(command: str, **placeholders: str) -> list[str]:
    """The documented command as arguments: placeholders filled, `python` this interpreter, and
    `parity` the tools it has installed."""
    for name, value in placeholders.items():
        command = command.replace(f"<{name}>", value)
    first, *rest = shlex.split(command)
    return [*{"python": [sys.executable], "parity": TOOLS}.get(first, [first]), *rest]


def git_repo(repo: Path) -> str:
    """Make `repo` a git repository with one commit: its hash."""
    run(["git", "init", "-q"], cwd=repo)
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "-c", "user.name=T", "-c", "user.email=t@e.org", "commit", "-qm", "first"], cwd=repo)
    return run(["git", "rev-parse", "HEAD"], cwd=repo).stdout.strip()


@pytest.mark.slow
def test_commands_here_in_the_readme_order_give_rows_of_one_setting_of_one_sweep(
    rendered: Render, tmp_path: Path
) -> None:
    """Then a rerun of a sweep's run from a changed tree, listed twice: its row is flagged."""
    repo = copy_of(rendered, LAYOUTS[0], tmp_path / "repo")
    commit = git_repo(repo)
    env = {**environment(repo), "TMPDIR": str(tmp_path)}  # where torchrun leaves its logs
    for command in HERE[:5]:
        run(command_line(command), cwd=repo, env=env)
    assert len(record(repo / "runs/first")["history"]["loss"]) == 31  # resumed to 30 epochs
    listing, runs = listing_of(repo)
    for command in HERE[5:]:
        folder, rows = results(repo, *command_line(command, id=listing.stem)[len(TOOLS) + 1 :])
        assert folder.name == listing.stem
    assert [(row["lr"], row["n"], row["listed"], row["seeds"]) for row in rows] == [
        ("0.1", "3", "3", "0 1 2"),
        ("0.5", "3", "3", "0 1 2"),
    ]
    for row, members in zip(rows, (runs[:3], runs[3:]), strict=True):
        check_row(row, [record(repo / member["output"]) for member in members], 3, "")
    table = (folder / "table.md").read_text(encoding="utf-8")
    assert f"world_size=1, code={commit[:10]}." in table
    assert "WARNING" not in table
    assert_compiles(folder / "table.tex")

    train = repo / "examples/train.py"
    train.write_text(train.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    rerun = {**runs[0], "index": 6, "output": "runs/rerun"}
    run(command_line(f"python examples/train.py {shlex.join(rerun['argv'])} --output runs/rerun"), cwd=repo, env=env)
    sweep = json.loads(listing.read_text(encoding="utf-8"))
    listing.write_text(json.dumps({**sweep, "runs": [*runs, rerun, {**rerun, "index": 7}]}), encoding="utf-8")
    folder, rows = results(repo)
    dirty = [row for row in rows if "+dirty:" in row["code"]]
    assert [(row["lr"], row["n"], row["seeds"]) for row in dirty] == [("0.1", "2", "0 0 (repeated: 0)")]
    table = (folder / "table.md").read_text(encoding="utf-8")
    assert "WARNING: runs with uncommitted changes" in table
    assert "WARNING: 2 versions of the code" in table
    assert "WARNING: a seed repeats in a row" in table


@pytest.mark.slow
@pytest.mark.proof  # `nox -s proofs`: the default starts the same cluster in test_slurm.py and test_sweeps.py
def test_commands_on_a_slurm_cluster(slurm: Cluster, rendered: Render, tmp_path: Path) -> None:
    """A 2-task job, continued by hand, and the example sweep as a job array of 2-task runs."""
    repo = copy_of(rendered, LAYOUTS[1], tmp_path / "repo")
    env = {**environment(repo), **slurm.env}
    submitted = run(command_line(ON_CLUSTER[0]), cwd=repo, env=env)
    job = submitted.stdout.split()[-1]
    slurm.wait(job)
    assert slurm.job(job)["JobState"] == "COMPLETED", (repo / f"slurm-{job}.out").read_text(encoding="utf-8")
    resumed = run(command_line(ON_CLUSTER[1], **{"job id": job}), cwd=repo, env=env).stdout.split()[-1]
    slurm.wait(resumed)
    log = (repo / f"slurm-{resumed}.out").read_text(encoding="utf-8")
    assert f"resuming runs/{job} at epoch 21, batch 0" in log, log
    assert record(repo / f"runs/{job}")["made_by"]["world_size"] == 2

    submitted = run(command_line(ON_CLUSTER[2]), cwd=repo, env=env)
    array = re.search(r"as job array (\d+)", submitted.stdout)
    assert array is not None, submitted.stdout
    slurm.wait(array[1], timeout=600)
    folder, rows = results(repo, *command_line(ON_CLUSTER[3])[len(TOOLS) + 1 :])
    assert [(row["lr"], row["n"], row["seeds"]) for row in rows] == [("0.1", "3", "0 1 2"), ("0.5", "3", "0 1 2")]
    assert "world_size=2" in (folder / "table.md").read_text(encoding="utf-8")
