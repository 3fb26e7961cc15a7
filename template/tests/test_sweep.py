"""`scripts/sweep.py` refuses a sweep file it cannot run before anything runs, and says which line
to change and how. (Sweeps that run, here and on a Slurm cluster, are tested by the template.)"""

from __future__ import annotations

import importlib.util
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
]


@pytest.fixture(scope="module")
def sweep() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sweep", ROOT / "scripts" / "sweep.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("text", "message"), [case[1:] for case in BAD_SWEEPS], ids=[case[0] for case in BAD_SWEEPS]
)
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


def test_refuses_to_run_outside_the_repo_root(
    sweep: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="run it from the repo's root"):
        sweep.main(["run", str(ROOT / "sweeps" / "example.txt")])
    assert not (tmp_path / "runs").exists()
