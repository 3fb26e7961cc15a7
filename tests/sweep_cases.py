"""`parity sweep` refuses a sweep file it cannot run before anything runs, and says which line
to change and how: run in a generated repo (whose examples/train.py sets the rules), written into
a render's tests/ by tests/test_sweeps.py, which also runs sweeps here and on a Slurm cluster."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (id, the sweep file, what the error says)
BAD_SWEEPS = [
    ("unknown-option", "--lr 0.1\n--lrr 0.5\n", "line 2: unrecognized arguments: --lrr 0.5"),
    ("bad-value", "--epochs two\n", "line 1: argument --epochs: invalid int value: 'two'"),
    ("sets-the-output", "--out runs/mine\n", "line 1: remove --output, the sweep gives"),
    ("resumes", "--seed 1 --resume\n", "line 1: remove --resume, the sweep gives"),
    ("repeats-a-run", "--seed 1\n# again:\n--seed 1\n", "line 3 repeats line 1: change its --seed"),
    ("unclosed-quote", "--device 'cpu\n", "line 1: No closing quotation"),
    ("no-run", "# only a comment\n\n", "lists no run: write one run's arguments per line"),
    # train.py's rules between options, before the first run: the default batch is 128.
    ("batch-beyond-the-data", "--seed 0\n--samples 64\n", "line 2: --batch-size 128 is the global"),
]


@pytest.fixture(scope="module")
def sweep() -> ModuleType:
    """`parity sweep`'s module, which finds this repo (and its examples/train.py) from here."""
    return importlib.import_module("parity_tools.sweep")


@pytest.mark.parametrize(("text", "message"), [case[1:] for case in BAD_SWEEPS], ids=[case[0] for case in BAD_SWEEPS])
def test_refuses_a_sweep_it_cannot_run(
    sweep: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.chdir(ROOT)
    before = sorted(ROOT.glob("runs/sweeps/*.json"))
    with pytest.raises(SystemExit) as refused:
        sweep.main(["run", str(path)])
    assert message in str(refused.value)
    assert sorted(ROOT.glob("runs/sweeps/*.json")) == before  # nothing written, nothing run


def test_submit_checks_each_run_for_the_tasks_of_its_sbatch_options(
    sweep: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of 127 splits over 1 process, not 3: refused before sbatch (not needed here)."""
    path = tmp_path / "odd.txt"
    path.write_text("--batch-size 127\n", encoding="utf-8")
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as refused:
        sweep.main(["submit", str(path), "--", "--ntasks=3", "--time=30"])
    assert "must split evenly across 3 processes" in str(refused.value)
    assert "the sbatch options give 3 tasks" in str(refused.value)


@pytest.mark.parametrize(
    ("options", "tasks"),
    [([], 1), (["--ntasks=2"], 2), (["-n", "4"], 4), (["--nodes=2", "--ntasks-per-node=4"], 8)],
    ids=["none", "ntasks", "short", "nodes-times-tasks-per-node"],
)
def test_documented_submit_line_parses(sweep: ModuleType, options: list[str], tasks: int) -> None:
    """`submit SWEEP --max-parallel 2 -- SBATCH OPTIONS`, as `parity sweep`'s docstring has it."""
    args = sweep.parse_arguments(["submit", "sweeps/example.txt", "--max-parallel", "2", "--", *options])
    assert (args.sweep, args.max_parallel, args.sbatch) == (Path("sweeps/example.txt"), 2, options)
    assert sweep.world_size(args.sbatch) == tasks


def test_refuses_to_run_outside_the_repo_root(
    sweep: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="run it from the repo's root"):
        sweep.main(["run", str(ROOT / "sweeps" / "example.txt")])
    assert not (tmp_path / "runs").exists()
